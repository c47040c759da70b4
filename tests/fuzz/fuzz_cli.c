/* tests/fuzz/fuzz_cli.c — the `joinery run` path for the libFuzzer harnesses.
 *
 * A fuzzed script may loop forever or build a gigabyte string; neither is a defect of
 * joinery, so the Lua state main.c creates (through jyl_fuzz_newstate) refuses allocations
 * beyond FUZZ_LUA_BYTES and raises an error once the script has run FUZZ_LUA_TICKS x 1000
 * virtual-machine instructions or FUZZ_LUA_SECONDS of wall time (checked at the same ticks;
 * a Lua part's functions count too: they run in the same state). The simulation itself is
 * capped by the run's flags (t_end 0.02, two rows after the first) and max_steps.
 *
 * The sandbox oracle: the harness checks the sandbox itself rather than trusting its guards.
 * Each run happens with its working directory a fresh one, <scratch>/run, that holds only
 * the script; afterwards it may hold only the script and the run's output (model.csv, or
 * model.incomplete.csv), and <scratch> only run/ and a canary file whose content must be
 * unchanged (a script escaping the sandbox writes relative paths, "../canary" among them;
 * the seeds under tests/fuzz/corpus/script/escape-*.lua take the routes once used). Every
 * chunk Lua loads goes through lua_load, which this file interposes (the one in liblua5.4
 * is called through the PLT, from the library itself too): a binary chunk that loads is a
 * finding. A violation aborts with "fuzz: sandbox oracle: ...". */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "fuzz_cli.h"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
static char scratch[64], run_dir[96], canary_path[96];
static char script_path[128], csv_path[128], kept_path[128];
static const char canary_text[] = "the sandbox must leave this file alone\n";

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

/* ---- the sandbox oracle ------------------------------------------------------------ */

static void oracle_fail(const char *what, const char *name) {
  fprintf(stderr, "fuzz: sandbox oracle: %s%s%s\n", what, name ? ": " : "", name ? name : "");
  abort();
}

/* lua_load as liblua5.4 has it, with the reader wrapped to see the chunk's first byte. */
typedef int (*LuaLoadFn)(lua_State *, lua_Reader, void *, const char *, const char *);
typedef struct PeekReader {
  lua_Reader reader;
  void *data;
  int seen, binary;
} PeekReader;

static const char *peek_reader(lua_State *L, void *ud, size_t *size) {
  PeekReader *p = (PeekReader *)ud;
  const char *block = p->reader(L, p->data, size);
  if (!p->seen && block && *size > 0) {
    p->seen = 1;
    p->binary = block[0] == LUA_SIGNATURE[0];
  }
  return block;
}

int lua_load(lua_State *L, lua_Reader reader, void *data, const char *chunkname, const char *mode) {
  LuaLoadFn real;
  *(void **)&real = dlsym(RTLD_NEXT, "lua_load"); /* POSIX: a function pointer this way */
  if (!real) oracle_fail("cannot find liblua's lua_load", NULL);
  PeekReader peek = {reader, data, 0, 0};
  int status = real(L, peek_reader, &peek, chunkname, mode);
  if (status == LUA_OK && peek.binary) oracle_fail("a binary chunk was loaded", chunkname);
  return status;
}

static void write_canary(void) {
  FILE *f = fopen(canary_path, "wb");
  if (!f || fputs(canary_text, f) == EOF || fclose(f) != 0) {
    perror("fuzz: writing the canary");
    abort();
  }
}

/* Aborts unless dir holds only the names in allowed (NULL-terminated). */
static void check_listing(const char *dir, const char *const *allowed) {
  DIR *d = opendir(dir);
  if (!d) oracle_fail("a directory of the scratch is gone", dir);
  for (const struct dirent *e; (e = readdir(d)) != NULL;) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    int ok = 0;
    for (const char *const *a = allowed; *a && !ok; a++) ok = strcmp(e->d_name, *a) == 0;
    if (!ok) {
      closedir(d);
      oracle_fail("a sandboxed run created a file", e->d_name);
    }
  }
  closedir(d);
}

/* After a run: only the script and the run's output in run/, only run/ and the canary,
 * intact, beside it. The output goes, so that the next run starts from the script alone. */
static void check_sandbox(void) {
  static const char *const in_run[] = {"model.lua", "model.csv", "model.incomplete.csv", NULL};
  static const char *const in_scratch[] = {"run", "canary", NULL};
  check_listing(run_dir, in_run);
  check_listing(scratch, in_scratch);
  struct stat script;
  if (stat(script_path, &script) != 0) oracle_fail("the script itself was removed", NULL);
  char text[sizeof canary_text + 8] = "";
  FILE *f = fopen(canary_path, "rb");
  size_t got = f ? fread(text, 1, sizeof text - 1, f) : 0;
  if (f) fclose(f);
  text[got] = '\0';
  if (strcmp(text, canary_text) != 0) oracle_fail("the canary file outside the run changed", NULL);
  unlink(csv_path);
  unlink(kept_path);
}

static void remove_scratch(void) {
  unlink(script_path);
  unlink(csv_path);
  unlink(kept_path);
  rmdir(run_dir);
  unlink(canary_path);
  rmdir(scratch);
}

void fuzz_cli_init(void) {
  snprintf(scratch, sizeof scratch, "/tmp/joinery-fuzz-XXXXXX");
  if (!mkdtemp(scratch)) {
    perror("fuzz: mkdtemp");
    abort();
  }
  snprintf(run_dir, sizeof run_dir, "%s/run", scratch);
  snprintf(canary_path, sizeof canary_path, "%s/canary", scratch);
  snprintf(script_path, sizeof script_path, "%s/model.lua", run_dir);
  snprintf(csv_path, sizeof csv_path, "%s/model.csv", run_dir);
  snprintf(kept_path, sizeof kept_path, "%s/model.incomplete.csv", run_dir);
  if (mkdir(run_dir, 0700) != 0) {
    perror("fuzz: mkdir");
    abort();
  }
  write_canary();
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
  /* The run's working directory is run/ (relative paths land where the oracle looks);
   * libFuzzer's own paths are absolute (tests/fuzz/run.sh) or read before the first run. */
  int home = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (home < 0 || chdir(run_dir) != 0) {
    perror("fuzz: entering the run directory");
    abort();
  }
  int status = jyl_cli_main(argc, argv);
  if (fchdir(home) != 0) abort();
  close(home);
  sigaction(SIGINT, &fuzzer_int, NULL);
  sigaction(SIGTERM, &fuzzer_term, NULL);
  check_sandbox();
  if (status == 128 + SIGINT || status == 128 + SIGTERM) raise(status - 128);
  return status;
}
