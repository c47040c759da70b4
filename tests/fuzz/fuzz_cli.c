/* tests/fuzz/fuzz_cli.c — the `joinery run` path for the libFuzzer harnesses.
 *
 * A fuzzed script may loop forever or build a gigabyte string; neither is a defect of
 * joinery, so the Lua state main.c creates (through jyl_fuzz_newstate) refuses allocations
 * beyond FUZZ_LUA_BYTES and raises an error once the script has run FUZZ_LUA_TICKS x 1000
 * virtual-machine instructions or FUZZ_LUA_SECONDS of wall time (checked at the same ticks;
 * a Lua part's functions count too: they run in the same state). The simulation itself is
 * capped by the run's flags (t_end 0.02, two rows after the first) and max_steps. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "fuzz_cli.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>

enum { FUZZ_LUA_TICKS = 2000, FUZZ_TICK = 1000 };
#define FUZZ_LUA_BYTES ((size_t)256 << 20)
#define FUZZ_LUA_SECONDS 2.0

/* The budget of the one Lua state alive at a time (main.c creates and closes it per run);
 * process-wide because lua_close leaves the allocator's user data to its owner, and main.c
 * owns nothing here. */
typedef struct FuzzBudget {
  size_t bytes; /* live bytes of the state */
  long ticks;   /* FUZZ_TICK-instruction counts so far */
  double start; /* monotonic seconds at the state's creation */
} FuzzBudget;

static FuzzBudget budget;
static char scratch[64];
static char script_path[128], csv_path[128];

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *capped_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  FuzzBudget *b = (FuzzBudget *)ud;
  if (!ptr) osize = 0; /* osize is then the kind of object, not a size */
  if (nsize == 0) {
    free(ptr);
    b->bytes -= osize;
    return NULL;
  }
  if (nsize > osize && b->bytes + (nsize - osize) > FUZZ_LUA_BYTES) return NULL;
  void *p = realloc(ptr, nsize);
  if (p) b->bytes = b->bytes - osize + nsize;
  return p;
}

static void count_hook(lua_State *L, lua_Debug *ar) {
  (void)ar;
  void *ud = NULL;
  lua_getallocf(L, &ud);
  FuzzBudget *b = (FuzzBudget *)ud;
  if (++b->ticks > FUZZ_LUA_TICKS || now_seconds() - b->start > FUZZ_LUA_SECONDS)
    luaL_error(L, "fuzz: the script's instruction or time budget is spent");
}

static int panic(lua_State *L) {
  fprintf(stderr, "fuzz: Lua panic: %s\n", lua_tostring(L, -1));
  abort(); /* a finding: main.c runs everything under lua_pcall */
}

lua_State *jyl_fuzz_newstate(void) {
  budget = (FuzzBudget){0, 0, now_seconds()};
  lua_State *L = lua_newstate(capped_alloc, &budget);
  if (!L) return NULL;
  lua_atpanic(L, panic);
  lua_sethook(L, count_hook, LUA_MASKCOUNT, FUZZ_TICK);
  return L;
}

static void remove_scratch(void) {
  unlink(script_path);
  unlink(csv_path);
  rmdir(scratch);
}

void fuzz_cli_init(void) {
  snprintf(scratch, sizeof scratch, "/tmp/joinery-fuzz-XXXXXX");
  if (!mkdtemp(scratch)) {
    perror("fuzz: mkdtemp");
    abort();
  }
  snprintf(script_path, sizeof script_path, "%s/model.lua", scratch);
  snprintf(csv_path, sizeof csv_path, "%s/model.csv", scratch);
  atexit(remove_scratch);
  if (!freopen("/dev/null", "w", stdout)) abort(); /* the run's table of rows */
}

int fuzz_cli_run(const char *text, size_t len, const char *const *extra, int nextra) {
  FILE *f = fopen(script_path, "wb");
  if (!f || fwrite(text, 1, len, f) != len || fclose(f) != 0) {
    perror("fuzz: writing the script");
    abort();
  }
  enum { FIXED = 11, MAX_EXTRA = 8 };
  char *argv[FIXED + MAX_EXTRA + 1] = {"joinery", "run",     script_path, "--out",
                                       csv_path,  "--t-end", "0.02",      "--dt-out",
                                       "0.01",    "--rtol",  "1e-6"};
  int argc = FIXED;
  for (int k = 0; k < nextra && k < MAX_EXTRA; k++) argv[argc++] = (char *)extra[k];
  argv[argc] = NULL;
  /* joinery run catches SIGINT and SIGTERM to stop the run at its next row, and leaves its
   * handlers installed: a signal meant for the fuzzer would only interrupt every later run.
   * libFuzzer's handlers come back after each run, and a signal the run caught is raised
   * again for them (they print the statistics and exit). */
  struct sigaction fuzzer_int, fuzzer_term;
  sigaction(SIGINT, NULL, &fuzzer_int);
  sigaction(SIGTERM, NULL, &fuzzer_term);
  int status = jyl_cli_main(argc, argv);
  sigaction(SIGINT, &fuzzer_int, NULL);
  sigaction(SIGTERM, &fuzzer_term, NULL);
  if (status == 128 + SIGINT || status == 128 + SIGTERM) raise(status - 128);
  return status;
}
