/* tests/fuzz/fuzz_params.c — libFuzzer harness: an example model with extreme numbers.
 *
 * The input picks an example (byte 0), the method, formulation and drift control (byte 1),
 * and then, one byte each, what becomes of every number the example passes to
 * joinery.system, the system's methods (sys:add's parameters, init and vel tables,
 * sys:settings, sys:constrain, sys:load, ...) and the parts' methods (body:point's offset),
 * nested tables too, in the order the script passes them (a table's keys sorted): one of
 * extreme_values below (0, -0, +-Inf, NaN, +-1e300, +-1e-300, denormals, the largest double,
 * -1, the integer extremes), or the script's own number. A Lua prelude put before the
 * example does the replacing; the result runs through `joinery run` as fuzz_script's input
 * does (fuzz_cli.c). A crash, leak or undefined behaviour is a finding; a message refusing
 * the number is what should happen. The script's max_steps is capped at MAX_STEPS. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_cli.h"

#ifndef JY_EXAMPLES_DIR
#error "JY_EXAMPLES_DIR: the examples/ directory (tests/fuzz/meson.build sets it)"
#endif

/* Every example that needs no plugin (the sandbox refuses load_plugin), but four_bar_chain
 * (four_bar's parts 40 times over: 10 s per input under the sanitizers). np: also under
 * the Natsiavas-Paraskevopoulos formulation, which assembles once per constraint row
 * (andrews' 1.4 s to t = 0.02 with ERK, a minute under the sanitizers, is left out). */
static const struct {
  const char *name;
  int np;
} example_list[] = {{"andrews", 0},
                    {"bricard", 1},
                    {"compound_pendulum", 1},
                    {"constant_speed", 1},
                    {"double_pendulum", 1},
                    {"double_pendulum_lua", 1},
                    {"driven_pendulum", 1},
                    {"four_bar", 1},
                    {"four_bar_redundant", 1},
                    {"free_body", 1},
                    {"friction_incline", 1},
                    {"heavy_top", 1},
                    {"incline_em", 1},
                    {"pendulum", 1},
                    {"rolling_disk", 1},
                    {"slider_crank", 1},
                    {"spring_chain", 1},
                    {"spring_chain_lua", 1},
                    {"spring_chain_monolithic", 1},
                    {"tracking", 1},
                    /* parts with modes, which the N-P formulation refuses */
                    {"bouncing_ball", 0},
                    {"incline_stick", 0},
                    {"newtons_cradle", 0},
                    {"rope_pendulum", 0},
                    {"stick_slip", 0},
                    {"stick_slip_lua", 0}};
#define NUM_EXAMPLES ((int)(sizeof example_list / sizeof example_list[0]))

/* Lua expressions: a value byte below NUM_EXTREME_BYTES picks extreme_values[byte % 16];
 * the others (three in four) keep the script's number, so that most runs get past the first
 * check and reach compile and the integrator. */
static const char *const extreme_values[] = {"0",
                                             "-0.0",
                                             "(1/0)",
                                             "(-1/0)",
                                             "(0/0)",
                                             "1e300",
                                             "-1e300",
                                             "1e-300",
                                             "-1e-300",
                                             "0x1p-1074",
                                             "-0x1p-1074",
                                             "0x1p-1030",
                                             "0x1.fffffffffffffp+1023",
                                             "-1",
                                             "math.maxinteger",
                                             "math.mininteger"};
#define NUM_EXTREMES ((int)(sizeof extreme_values / sizeof extreme_values[0]))
enum { NUM_EXTREME_BYTES = 4 * NUM_EXTREMES, MAX_VALUES = 256 };

/* The steps between two rows: an extreme but valid number (gravity 9e18 m/s^2) can hold an
 * explicit method at 1e-11 s steps; the default 100000 would take half a minute per input
 * under the sanitizers, to end in the same "more than max_steps" error. */
#define MAX_STEPS "5000"

static const char prelude[] =
  "do\n"
  "  local joinery = require 'joinery'\n"
  "  local used = 0\n"
  "  local function pick(x)\n"
  "    used = used + 1\n"
  "    local v = fuzz_values[used]\n"
  "    if v == nil or v == false then return x end\n"
  "    return v\n"
  "  end\n"
  "  local function fill(t, depth)\n"
  "    local keys = {}\n"
  "    for k in pairs(t) do keys[#keys + 1] = k end\n"
  "    table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)\n"
  "    for _, k in ipairs(keys) do\n"
  "      local x = t[k]\n"
  "      if type(x) == 'number' then t[k] = pick(x)\n"
  "      elseif type(x) == 'table' and depth < 3 then fill(x, depth + 1) end\n"
  "    end\n"
  "  end\n"
  "  local function filled(f)\n"
  "    return function(self, ...)\n"
  "      local args = table.pack(...)\n"
  "      for i = 1, args.n do\n"
  "        if type(args[i]) == 'table' then fill(args[i], 1)\n"
  "        elseif type(args[i]) == 'number' then args[i] = pick(args[i]) end\n"
  "      end\n"
  "      return f(self, table.unpack(args, 1, args.n))\n"
  "    end\n"
  "  end\n"
  "  local system, wrapped, settings = joinery.system, false, nil\n"
  "  local cap = { max_steps = " MAX_STEPS " }\n"
  "  joinery.system = function(opts, ...)\n"
  "    if type(opts) == 'table' then fill(opts, 1) end\n"
  "    local sys = system(opts, ...)\n"
  "    if not wrapped then\n"
  "      wrapped = true\n"
  "      local methods = getmetatable(sys).__index\n"
  "      settings = methods.settings\n"
  "      local names = {}\n"
  "      for name in pairs(methods) do names[#names + 1] = name end\n"
  "      for _, name in ipairs(names) do methods[name] = filled(methods[name]) end\n"
  "      local add = methods.add\n"
  "      methods.add = function(...)\n"
  "        local part = add(...)\n"
  "        local meta = getmetatable(part)\n"
  "        if type(meta) == 'table' and not meta.fuzz_filled then\n"
  "          meta.fuzz_filled = true\n"
  "          local index = meta.__index\n"
  "          meta.__index = function(self, key)\n"
  "            local v = type(index) == 'function' and index(self, key) or index[key]\n"
  "            if type(v) == 'function' then return filled(v) end\n"
  "            return v\n"
  "          end\n"
  "        end\n"
  "        return part\n"
  "      end\n"
  "      local filled_settings = filled(settings)\n"
  "      methods.settings = function(self, ...)\n"
  "        filled_settings(self, ...)\n"
  "        settings(self, cap)\n"
  "      end\n"
  "    end\n"
  "    settings(sys, cap)\n"
  "    return sys\n"
  "  end\n"
  "end\n";

static char *examples[NUM_EXAMPLES];
static size_t example_len[NUM_EXAMPLES];

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  if (buf) n = fread(buf, 1, cap, f);
  fclose(f);
  if (!buf || n == cap) { /* the examples are a few kB */
    free(buf);
    return NULL;
  }
  *len = n;
  return buf;
}

static void free_examples(void) {
  for (int k = 0; k < NUM_EXAMPLES; k++) free(examples[k]);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  for (int k = 0; k < NUM_EXAMPLES; k++) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s.lua", JY_EXAMPLES_DIR, example_list[k].name);
    examples[k] = read_file(path, &example_len[k]);
    if (!examples[k]) {
      fprintf(stderr, "fuzz_params: cannot read %s\n", path);
      abort();
    }
  }
  atexit(free_examples);
  fuzz_cli_init();
  return 0;
}

/* "local fuzz_values = {v, v, ...}\n" from the value bytes, then the prelude and the
 * example; the caller frees it. */
static char *build_script(int example, const uint8_t *bytes, size_t nbytes, size_t *len) {
  if (nbytes > MAX_VALUES) nbytes = MAX_VALUES;
  size_t cap = 64 + nbytes * 32 + sizeof prelude + example_len[example];
  char *s = malloc(cap);
  if (!s) abort();
  size_t n = (size_t)snprintf(s, cap, "local fuzz_values = {");
  for (size_t i = 0; i < nbytes; i++) {
    int c = bytes[i];
    n += (size_t)snprintf(s + n, cap - n, "%s,",
                          c < NUM_EXTREME_BYTES ? extreme_values[c % NUM_EXTREMES] : "false");
  }
  n += (size_t)snprintf(s + n, cap - n, "}\n%s", prelude);
  memcpy(s + n, examples[example], example_len[example]);
  *len = n + example_len[example];
  return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char *const methods[] = {"adams", "bdf", "erk"};
  static const char *const formulations[] = {"udwadia-kalaba", "natsiavas-paraskevopoulos"};
  static const char *const drifts[] = {"baumgarte", "projection", "none"};
  if (size < 2) return 0;
  int example = data[0] % NUM_EXAMPLES, how = data[1];
  const char *extra[] = {
    "--method",      methods[how % 3],
    "--formulation", formulations[example_list[example].np ? (how / 3) % 2 : 0],
    "--drift",       drifts[(how / 6) % 3]};
  size_t len = 0;
  char *script = build_script(example, data + 2, size - 2, &len);
  fuzz_cli_run(script, len, extra, 6);
  free(script);
  return 0;
}
