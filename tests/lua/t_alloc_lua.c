/* tests/lua/t_alloc_lua.c — running out of memory anywhere in a Lua model's run is an error
 * that says so, never another diagnosis, and a crash only at SUNDIALS's own unchecked
 * allocations (listed in docs/numerics.md, "Out of memory"). Every example script but
 * plugin_model (a C plugin: t_plugin) is loaded — Lua parts, sys:constrain, body helpers and
 * loads included — then sys:simulate runs a few steps with Adams and with BDF in a child
 * process while the process's malloc/calloc/realloc (wrapped: tests/count_malloc.h) fail
 * from the k-th allocation of the run on, k spread evenly over the run's allocations: at
 * most POINTS_PER_RUN of them (every point of every example is too slow for the suite; the C
 * test t_alloc covers every point of seven built-in examples). The run must end in success
 * or in an error naming memory ("out of memory", or Lua's "not enough memory"). Under
 * AddressSanitizer, which owns malloc, the test skips itself. */
#define _GNU_SOURCE /* dladdr */
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "binding.h"
#include "count_malloc.h"
#include "fail_in_child.h"
#include "tap.h"

#define POINTS_PER_RUN 40

static const char *const examples[] = {
  "andrews",           "bricard",
  "compound_pendulum", "constant_speed",
  "double_pendulum",   "double_pendulum_lua",
  "driven_pendulum",   "four_bar",
  "four_bar_chain",    "four_bar_redundant",
  "free_body",         "friction_incline",
  "heavy_top",         "incline_em",
  "pendulum",          "rolling_disk",
  "slider_crank",      "spring_chain",
  "spring_chain_lua",  "spring_chain_monolithic",
  "tracking",          "bouncing_ball",
  "incline_stick",     "newtons_cradle",
  "rope_pendulum",     "stick_slip",
  "stick_slip_lua",    "flyball",
};

/* A fresh state with the example's system in global `sys`, or NULL (message printed). */
static lua_State *load_example(const char *root, const char *name) {
  lua_State *L = luaL_newstate();
  if (!L) return NULL;
  jyl_open_libs(L);
  char path[1024];
  snprintf(path, sizeof path, "%s/examples/%s.lua", root, name);
  if (luaL_dofile(L, path) == LUA_OK) lua_settop(L, 1); /* the system: its first result */
  if (lua_gettop(L) < 1 || lua_isnil(L, -1) || !lua_isuserdata(L, -1)) {
    diag("%s: %s", name,
         lua_gettop(L) > 0 && lua_isstring(L, -1) ? lua_tostring(L, -1) : "no system");
    lua_close(L);
    return NULL;
  }
  lua_setglobal(L, "sys");
  return L;
}

/* Runs sys:simulate for a few steps with the method; failing from allocation fail_at of the
 * run on (< 0: never). Returns 1 for success, 0 for an error naming memory, -1 otherwise
 * (the message in why). */
static int run(lua_State *L, const char *method, long fail_at, long *allocations, char *why,
               size_t len) {
  char code[256];
  snprintf(code, sizeof code,
           "return sys:simulate { method = '%s', t_end = 0.004, dt_out = 0.002, rtol = 1e-6, "
           "atol = 1e-8 }",
           method);
  if (luaL_loadstring(L, code) != LUA_OK) return -1;
  long before = process_allocations;
  if (fail_at >= 0) process_fail_after = before + fail_at;
  int rc = lua_pcall(L, 0, 1, 0);
  process_fail_after = -1;
  *allocations = process_allocations - before;
  const char *msg = rc == LUA_OK ? "" : lua_tostring(L, -1) ? lua_tostring(L, -1) : "?";
  snprintf(why, len, "%s", msg);
  lua_pop(L, 1);
  if (rc == LUA_OK) return 1;
  return strstr(msg, "out of memory") || strstr(msg, "not enough memory") ? 0 : -1;
}

typedef struct example_run {
  lua_State *L;
  const char *name, *method;
} example_run;

/* In the child: the run failing from allocation `fail` on. */
static int child_run(long fail, void *ctx) {
  const example_run *ex = ctx;
  long used;
  char why[1024];
  int outcome = run(ex->L, ex->method, fail, &used, why, sizeof why);
  if (outcome < 0)
    diag("%s (%s), failing from allocation %ld: %s", ex->name, ex->method, fail, why);
  return outcome < 0 ? POINT_WRONG : POINT_FINE;
}

static void check_example(const char *root, const char *name, const char *method,
                          crash_sites *sites) {
  lua_State *L = load_example(root, name);
  long total = 0;
  char why[1024];
  int clean = L ? run(L, method, -1, &total, why, sizeof why) : -1;
  if (clean != 1) {
    ok(0, "%s (%s) runs with memory to spare: %s", name, method, L ? why : "did not load");
    if (L) lua_close(L);
    return;
  }
  example_run ex = {L, name, method};
  long step = total / POINTS_PER_RUN > 0 ? total / POINTS_PER_RUN : 1, points = 0, wrong = 0;
  int crashes = 0;
  for (long k = 0; k < total; k += step, points++) {
    void *where[2];
    int got = fail_malloc_in_child(k, child_run, &ex, where);
    if (got == POINT_FINE) continue;
    if (got < 0 && sundials_crash_site(where, sites)) {
      crashes++;
      continue;
    }
    wrong++;
    if (got < 0) {
      char site[96];
      code_site(where[0], site, sizeof site);
      diag("%s (%s), failing from allocation %ld: a crash in %s", name, method, k, site);
    }
  }
  ok(wrong == 0,
     "%s (%s): %ld allocations in the run; failing from %ld points of them, each run succeeded, "
     "said out of memory or crashed at a listed SUNDIALS site (%d)",
     name, method, total, points, crashes);
  lua_close(L);
}

int main(int argc, char **argv) {
  const char *root = argc > 1 ? argv[1] : ".";
  int n = (int)(sizeof examples / sizeof examples[0]);
  if (!WRAP_MALLOC) {
    printf("1..0 # SKIP malloc is AddressSanitizer's here\n");
    return 0;
  }
  plan(2 * n);
  crash_sites sites = {0};
  for (int i = 0; i < n; i++) {
    check_example(root, examples[i], "adams", &sites);
    check_example(root, examples[i], "bdf", &sites);
  }
  for (int k = 0; k < sites.n; k++) diag("SUNDIALS crashes in %s", sites.site[k]);
  return done();
}
