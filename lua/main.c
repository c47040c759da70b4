/* lua/main.c — the `joinery` command.
 *
 *   joinery [--trust] [--traceback] SCRIPT [ARGS...]
 *                                  runs a Lua script as lua5.4 would (global `arg`, `...`),
 *                                  with the joinery module preloaded; an error prints
 *                                  "file:line: message" (and the traceback with
 *                                  --traceback), exit status 1.
 *   joinery run SCRIPT [OPTIONS] [-- ARGS...]
 *                                  runs SCRIPT, which must return a system; compiles it,
 *                                  prints the model's size and assembly report, simulates
 *                                  with the script's settings overridden by the options,
 *                                  writes the CSV, or HDF5 for --out F.h5 (default: the
 *                                  script's base name with .csv, in the current
 *                                  directory) and prints the first rows, the
 *                                  last row, the run time and "wrote N rows x C columns to F".
 *                                  A failed run writes no F: its message (on stderr) says
 *                                  why and where the rows before the failure went
 *                                  (<stem>.incomplete.csv, first line "# incomplete: ...";
 *                                  <stem>.incomplete.h5, attribute "incomplete").
 *   A script runs in the sandbox (lua/sandbox.c): text only, no programs, no native code,
 *   no file writes but run's output file; --trust (before the script, or among run's
 *   options) gives it the full Lua library.
 *   joinery run: the rows stream to F (memory stays flat); SIGINT or SIGTERM stops the run
 *   at its next row as a failure, exit status 128 + the signal's number.
 *   joinery check SCRIPT [--json] [-- ARGS...]
 *                                  compiles the system SCRIPT returns and prints the model
 *                                  doctor's analysis (model:check()), as text or one JSON
 *                                  object; exit status 0 sound, 1 findings, 2 errors.
 *   joinery plot FILE|SCRIPT.lua --y GLOBS [--x NAME] [-o OUT] [OPTIONS]
 *                                  draws channels of a run's CSV through gnuplot (lua/plot.c);
 *                                  a SCRIPT.lua runs first as joinery run would, its other
 *                                  options being run's.
 *   joinery animate SCRIPT [RUN.csv|RUN.h5] [-o PAGE.html] [--forces] [OPTIONS] [-- ARGS...]
 *                                  draws the system SCRIPT returns moving, in one
 *                                  self-contained HTML page (default: the script's base name
 *                                  with .html): the rows of RUN.csv or RUN.h5, or of a run with the
 *                                  script's settings overridden by run's options;
 *                                  docs/animation.md.
 *   joinery types                  lists the registered part types
 *   joinery doc TYPE               parameters, terminals and coordinates of a part type
 *   joinery --help | --version
 *   --traceback (before SCRIPT or run, or among run's options) adds the Lua stack traceback
 *   to a script's error, for those debugging the script's own functions.
 *
 * Exit status: 0 success, 1 error ("joinery: <message>" on stderr), 2 usage error, 130/143
 * a run interrupted by SIGINT/SIGTERM; joinery check: 0 sound, 1 findings, 2 errors.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "animate.h"
#include "binding.h"
#include "binding_private.h"
#include "joinery/joinery.h"
#include "lua_call.h"
#include "plot.h"
#include "sandbox.h"
#include "settings.h"

static const char usage_head[] =
  "usage: joinery [--trust] SCRIPT [ARGS...]\n"
  "                                       run a Lua script (require \"joinery\" works)\n"
  "       joinery [--trust] run SCRIPT [OPTIONS] [-- ARGS...]\n"
  "                                       simulate the system SCRIPT returns, write a CSV\n"
  "                                       (or HDF5: --out run.h5)\n"
  "       joinery [--trust] check SCRIPT [--json] [-- ARGS...]\n"
  "                                       the model doctor: size, rank, degrees of freedom\n"
  "                                       and findings; exit 0 sound, 1 findings, 2 errors\n"
  "       joinery [--trust] plot FILE|SCRIPT.lua --y GLOBS [--x NAME] [-o OUT.png|svg|pdf]\n"
  "                                       draw channels of a run's CSV (or of SCRIPT's run)\n"
  "                                       through gnuplot (joinery plot --help)\n"
  "       joinery [--trust] animate SCRIPT [RUN.csv|RUN.h5] [-o PAGE.html] [--forces] [OPTIONS]\n"
  "                                       one self-contained HTML page of the mechanism moving\n"
  "                                       (the rows of RUN.csv|.h5, else of a run with run's\n"
  "                                       options); --forces: constraint forces as arrows\n"
  "       joinery types                   list the part types\n"
  "       joinery doc TYPE                describe a part type\n"
  "       joinery settings                every setting as a markdown table\n"
  "       joinery --help | --version\n"
  "       --traceback (before SCRIPT or run, or among run's options): a script's error\n"
  "                                       with its Lua stack traceback (default: file:line)\n"
  "\n"
  "options of run (override the script's sys:settings):\n";

/* joinery run's flags are the settings (lua/settings.c, from joinery.h's lists), in the order
 * jyl_setting_at gives them: --t-end sets the setting t_end ('-' for '_'). */
enum { MAX_FLAGS = 64, HELP_COLUMN = 26, HELP_WIDTH = 96 };

/* The flag of a setting: "--t-end" for t_end. */
static void flag_name(char *buf, size_t len, const jySettingInfo *s) {
  snprintf(buf, len, "--%s", s->name);
  for (char *c = buf; *c; c++)
    if (*c == '_') *c = '-';
}

/* Writes a choice setting's names, the default first, into buf: "bdf, adams or erk", or with
 * with_usage "bdf (default: stiff, singular configurations), adams or erk". */
static void format_choices(char *buf, size_t len, const jySettingInfo *s, int with_usage) {
  int def = jyl_default_choice(s);
  if (def < 0) def = 0;
  size_t used = 0;
  buf[0] = '\0';
  for (int k = 0; k < s->nchoices; k++) {
    /* k = 0 is the default; the others follow in the list's order */
    int i = k == 0 ? def : (k <= def ? k - 1 : k);
    const jyChoiceInfo *c = &s->choices[i];
    const char *sep = k == 0 ? "" : k == s->nchoices - 1 ? " or " : ", ";
    char note[128] = "";
    if (with_usage && k == 0)
      snprintf(note, sizeof note, " (default%s%s)", c->usage ? ": " : "", c->usage ? c->usage : "");
    else if (with_usage && c->usage)
      snprintf(note, sizeof note, " (%s)", c->usage);
    int n = snprintf(buf + used, len - used, "%s%s%s", sep, c->name, note);
    if (n < 0 || (size_t)n >= len - used) return; /* truncated: the buffers are ample */
    used += (size_t)n;
  }
}

/* A setting's help: its doc and default, or a choice's names with the default first. */
static void format_help(char *buf, size_t len, const jylSetting *s) {
  char def[64];
  jyl_format_default(def, sizeof def, s->info);
  if (s->info->domain == JY_DOMAIN_CHOICE)
    format_choices(buf, len, s->info, 1);
  else if (s->kind == JYL_SETTING_OUT || s->kind == JYL_SETTING_COLUMNS)
    snprintf(buf, len, "%s", s->info->doc);
  else
    snprintf(buf, len, "%s (default %s)", s->info->doc, def);
}

/* Prints text in the help column (from HELP_COLUMN, wrapped at HELP_WIDTH), starting on this
 * line when the cursor, at `column`, leaves room, else on the next. */
static void print_wrapped(FILE *f, const char *text, int column) {
  if (column >= HELP_COLUMN) {
    fputc('\n', f);
    column = 0;
  }
  while (*text) {
    fprintf(f, "%*s", HELP_COLUMN - column, "");
    size_t n = strlen(text), room = (size_t)(HELP_WIDTH - HELP_COLUMN);
    if (n > room) { /* break at the last space that fits */
      n = room;
      while (n > 0 && text[n] != ' ') n--;
      if (n == 0) n = strcspn(text, " ");
    }
    fprintf(f, "%.*s\n", (int)n, text);
    text += n;
    while (*text == ' ') text++;
    column = 0;
  }
}

static void print_usage(FILE *f) {
  fputs(usage_head, f);
  jylSetting s;
  for (int i = 0; jyl_setting_at(i, &s); i++) {
    if (s.kind == JYL_SETTING_SOLVER && s.index == 0)
      fputs("solver settings (options of run too; docs/numerics.md):\n", f);
    char flag[64], help[512];
    flag_name(flag, sizeof flag, s.info);
    size_t n = strlen(flag);
    snprintf(flag + n, sizeof flag - n, " %s", s.info->arg);
    format_help(help, sizeof help, &s);
    fprintf(f, "  %s", flag);
    print_wrapped(f, help, 2 + (int)strlen(flag));
  }
  fputs("  --quiet", f);
  print_wrapped(f,
                "run: no progress line every 10 s when stderr is not a terminal (on a terminal "
                "the progress line rewrites itself)",
                (int)strlen("  --quiet"));
  fputs("  --columns-from FILE", f);
  print_wrapped(f, "the setting columns from a file, one pattern a line (# comments)",
                (int)strlen("  --columns-from FILE"));
  fputs("  --trust", f);
  print_wrapped(f,
                "give the script the full Lua library: programs, native code, any file (without "
                "it, scripts run in a sandbox: see the README, \"Running models you did not "
                "write\")",
                (int)strlen("  --trust"));
}

/* `joinery settings`: every flag as a markdown table, the one in docs/cli.md. */
static int cmd_settings(void) {
  printf("| flag | setting | default | meaning |\n|---|---|---|---|\n");
  jylSetting s;
  for (int i = 0; jyl_setting_at(i, &s); i++) {
    char flag[64], def[64], help[512];
    flag_name(flag, sizeof flag, s.info);
    jyl_format_default(def, sizeof def, s.info);
    if (s.info->domain == JY_DOMAIN_CHOICE) {
      char choices[256];
      format_choices(choices, sizeof choices, s.info, 1);
      snprintf(help, sizeof help, "%s: %s", s.info->doc, choices);
    } else {
      snprintf(help, sizeof help, "%s", s.info->doc);
    }
    printf("| `%s %s` | `%s` | %s%s%s | %s |\n", flag, s.info->arg, s.info->name, *def ? "`" : "",
           def, *def ? "`" : "", help);
  }
  return 0;
}

typedef struct Cli {
  int argc;
  char **argv;
  int status;    /* exit status */
  int trust;     /* --trust: the script gets the full Lua library */
  int traceback; /* --traceback: a script's error with the Lua stack traceback */
  int quiet;     /* run --quiet: no progress lines when stderr is not a terminal */
} Cli;

static void print_error(const char *msg) {
  fprintf(stderr, "joinery: %s\n", msg ? msg : "(no message)");
  fflush(stderr);
}

/* Prints "joinery: <message>" and the usage to stderr; returns the usage exit status. */
#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static int
usage_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "joinery: ");
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\n");
  print_usage(stderr);
  return 2;
}

/* The known option nearest to the unknown a[0..len) (run's flags too when with_run), copied
 * into near[64]; NULL when none is near enough. */
static const char *nearest_option(const char *a, size_t len, int with_run, char *near) {
  static const char *const global[] = {"--help", "--version", "--traceback", "--trust"};
  char names[MAX_FLAGS][64], typed[64];
  const char *candidates[MAX_FLAGS + 4];
  int n = 0;
  for (int k = 0; k < 4; k++) candidates[n++] = global[k];
  jylSetting s;
  for (int k = 0; with_run && k < MAX_FLAGS && jyl_setting_at(k, &s); k++) {
    flag_name(names[k], sizeof names[k], s.info);
    candidates[n++] = names[k];
  }
  snprintf(typed, sizeof typed, "%.*s", (int)(len < sizeof typed ? len : sizeof typed - 1), a);
  const char *found = jy_nearest_name(typed, candidates, n);
  if (!found) return NULL;
  snprintf(near, 64, "%s", found); /* found may point into names[] */
  return near;
}

/* The usage error of an unknown option spelt a[0..len), with the nearest known one. */
static int unknown_option(const char *a, size_t len, int with_run) {
  char buf[64], run_buf[64];
  const char *near = nearest_option(a, len, with_run, buf);
  const char *of_run = nearest_option(a, len, 1, run_buf);
  if (near) return usage_error("unknown option '%.*s' (did you mean %s?)", (int)len, a, near);
  if (of_run) /* a run option before the command: say where it goes */
    return usage_error("unknown option '%.*s' (%s is an option of run: joinery run SCRIPT %s ...)",
                       (int)len, a, of_run, of_run);
  return usage_error("unknown option '%.*s'", (int)len, a);
}

/* Calls the function below narg arguments under the script's message handler: file:line,
 * and the traceback with --traceback. */
static int docall(lua_State *L, int narg, int nres, int traceback) {
  int base = lua_gettop(L) - narg;
  jyl_push_msgh(L, traceback ? JYL_MSGH_TRACEBACK : JYL_MSGH_LOCATE);
  lua_insert(L, base);
  int status = lua_pcall(L, narg, nres, base);
  lua_remove(L, base);
  return status;
}

/* The global `arg`: arg[-k..-1] the command words, arg[0] the script, arg[1..] its args. */
static void set_arg_table(lua_State *L, char **argv, int script_at, int nbefore, int first,
                          int nafter) {
  lua_createtable(L, nafter, nbefore + 1);
  for (int i = 0; i < nbefore; i++) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i - nbefore);
  }
  lua_pushstring(L, argv[script_at]);
  lua_rawseti(L, -2, 0);
  for (int i = 0; i < nafter; i++) {
    lua_pushstring(L, argv[first + i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setglobal(L, "arg");
}

/* Loads and runs the script with nargs arguments argv[first..]; leaves nres results.
 * Returns 0, or 1 after printing the error. */
static int run_script(lua_State *L, const char *script, char **argv, int first, int nargs, int nres,
                      int traceback) {
  jyl_note_script(L, script);
  if (luaL_loadfilex(L, script, jyl_sandboxed(L) ? "t" : NULL) != LUA_OK) {
    jyl_sandbox_explain_binary(L, script);
    print_error(lua_tostring(L, -1));
    lua_pop(L, 1);
    return 1;
  }
  luaL_checkstack(L, nargs, "too many arguments to the script");
  for (int i = 0; i < nargs; i++) lua_pushstring(L, argv[first + i]);
  if (docall(L, nargs, nres, traceback) != LUA_OK) {
    print_error(lua_tostring(L, -1));
    lua_pop(L, 1);
    return 1;
  }
  return 0;
}

/* Unless --trust was given, puts the state in the sandbox; out: the file joinery run writes
 * (NULL: none). */
static void enter_sandbox(lua_State *L, const Cli *cli, const char *out) {
  if (cli->trust) return;
  const char *writable[1] = {out};
  jyl_sandbox(L, writable, out ? 1 : 0, "run with --trust to allow it");
}

/* Pushes the module table. */
static void require_joinery(lua_State *L) {
  lua_getglobal(L, "require");
  lua_pushliteral(L, "joinery");
  lua_call(L, 1, 1);
}

/* ---- joinery run ----------------------------------------------------------------------- */

#define SHOW_COLS 6

/* Prints row i (1-based) of the first ncols channels of the result at res. */
static void print_row(lua_State *L, int res, int names, int ncols, lua_Integer i) {
  for (int c = 1; c <= ncols; c++) {
    lua_geti(L, names, c);
    lua_gettable(L, res);
    lua_geti(L, -1, i);
    printf(" %14.7g", lua_tonumber(L, -1));
    lua_pop(L, 2);
  }
  printf("\n");
}

/* The first three rows and the last one of the leading columns of the result at res. */
static void print_summary(lua_State *L, int res) {
  lua_getfield(L, res, "channels");
  int names = lua_gettop(L);
  int cols = (int)luaL_len(L, names);
  int ncols = cols < SHOW_COLS ? cols : SHOW_COLS;
  lua_getfield(L, res, "rows");
  lua_Integer rows = lua_tointeger(L, -1);
  lua_pop(L, 1);
  if (cols > SHOW_COLS) printf("first %d of %d columns:\n", ncols, cols);
  for (int c = 1; c <= ncols; c++) {
    lua_geti(L, names, c);
    printf(" %14s", lua_tostring(L, -1));
    lua_pop(L, 1);
  }
  printf("\n");
  for (lua_Integer i = 1; i <= rows && i <= 3; i++) print_row(L, res, names, ncols, i);
  if (rows > 4) printf(" %14s\n", "...");
  if (rows > 3) print_row(L, res, names, ncols, rows);
  lua_pop(L, 1);
}

static lua_Integer int_field(lua_State *L, int idx, const char *key) {
  idx = lua_absindex(L, idx);
  lua_getfield(L, idx, key);
  lua_Integer v = lua_tointeger(L, -1);
  lua_pop(L, 1);
  return v;
}

/* The events that fired (name, count, first and last time) and the one that stopped the
 * run, from the result at res; nothing for a run without any. */
static void print_events(lua_State *L, int res, long guard_evals) {
  int top = lua_gettop(L);
  lua_getfield(L, res, "events");
  lua_Integer kinds = luaL_len(L, -1);
  if (kinds > 0) printf("events (%ld evaluations of their functions):\n", guard_evals);
  for (lua_Integer k = 1; k <= kinds; k++) {
    lua_rawgeti(L, -1, k);
    int e = lua_gettop(L);
    lua_getfield(L, e, "name");
    lua_getfield(L, e, "first");
    lua_getfield(L, e, "last");
    long count = (long)int_field(L, e, "count");
    printf("  %-24s %6ld x, first t = %.9g, last t = %.9g\n", lua_tostring(L, e + 1), count,
           lua_tonumber(L, e + 2), lua_tonumber(L, e + 3));
    lua_settop(L, e - 1);
  }
  if (lua_getfield(L, res, "stopped_by") == LUA_TSTRING) {
    lua_getfield(L, res, "t");
    lua_rawgeti(L, -1, int_field(L, res, "rows"));
    printf("stopped by event '%s' at t = %.9g\n", lua_tostring(L, -3), lua_tonumber(L, -1));
  }
  lua_settop(L, top);
}

/* A large model may move thousands of values: the first few say what happened. */
#define MAX_MOVED_WARNINGS 20

/* One warning line on stderr per initial value the script set that the model at idx had to
 * move, the first MAX_MOVED_WARNINGS of them, then how many more. Unset values (guesses, rates
 * a drive decides) settling onto the constraints are what the compile is for, not a warning:
 * the doctor's line counts them and the report lists them. */
static void warn_moved(lua_State *L, int idx) {
  lua_getfield(L, idx, "moved");
  lua_pushvalue(L, idx);
  lua_call(L, 1, 1);
  lua_Integer count = luaL_len(L, -1), warned = 0;
  for (lua_Integer i = 1; i <= count; i++) {
    lua_geti(L, -1, i);
    lua_getfield(L, -1, "warn");
    lua_getfield(L, -2, "set");
    lua_getfield(L, -3, "name");
    lua_getfield(L, -4, "from");
    lua_getfield(L, -5, "to");
    if (lua_toboolean(L, -5) && lua_toboolean(L, -4) && ++warned <= MAX_MOVED_WARNINGS)
      fprintf(stderr,
              "warning: initial %s moved from %.9g to %.9g to meet the constraints (it was set by "
              "the script)\n",
              lua_tostring(L, -3), lua_tonumber(L, -2), lua_tonumber(L, -1));
    lua_pop(L, 6);
  }
  if (warned > MAX_MOVED_WARNINGS)
    fprintf(stderr, "warning: ... and %lld more initial values moved (model:moved() lists all)\n",
            (long long)(warned - MAX_MOVED_WARNINGS));
  lua_pop(L, 1);
}

/* Protected: 1 = system, 2 = settings table (with out). Prints as it goes. */

/* method = auto: which method ran for how much of the run, and why it changed (stats at
 * `stats`). ERK runs only once it has won the race with Adams, and never hands back to
 * Adams: where it ran, the stretches after BDF's were its. */
static void print_methods(lua_State *L, int stats) {
  static const char *const names[] = {"adams", "erk", "bdf"};
  long changes = int_field(L, stats, "to_stiff") + int_field(L, stats, "to_singular") +
    int_field(L, stats, "to_collapse");
  lua_getfield(L, stats, "methods");
  int ran = 0, erk_ran = 0;
  for (int k = 0; k < 3; k++) {
    lua_getfield(L, -1, names[k]);
    if (lua_istable(L, -1)) {
      lua_getfield(L, -1, "time");
      double time = lua_tonumber(L, -1);
      lua_pop(L, 1);
      lua_getfield(L, -1, "rtol");
      double rtol = lua_tonumber(L, -1);
      lua_pop(L, 1);
      printf("%s%s %.4g s (%ld steps", ran ? ", " : "method auto: ", names[k], time,
             (long)int_field(L, lua_gettop(L), "steps"));
      if (rtol > 0) printf(" at rtol %.3g", rtol); /* ERK's (auto's on a prescribed motion: 1e-6) */
      printf(")");
      ran = 1;
      erk_ran |= k == 1;
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  if (!ran) return;
  if (changes == 0) {
    printf("; no change to bdf\n");
    return;
  }
  printf("; %ld changes to bdf (%ld where the step collapsed, %ld at the branch guard, %ld for "
         "stiffness), %ld back to %s\n",
         changes, (long)int_field(L, stats, "to_collapse"),
         (long)int_field(L, stats, "to_singular"), (long)int_field(L, stats, "to_stiff"),
         (long)int_field(L, stats, "to_adams"), erk_ran ? "erk" : "adams");
}

/* One line of the model doctor on stderr: "model: N coordinates, M rows (R redundant), D
 * degrees of freedom", its other findings' count (joinery check SCRIPT lists them) and how many
 * unset initial values settled onto the constraints (the report lists them). */
static void print_check_line(lua_State *L, int model) {
  lua_getfield(L, model, "check");
  lua_pushvalue(L, model);
  if (lua_pcall(L, 1, 1, 0) != LUA_OK || !lua_istable(L, -1)) {
    lua_pop(L, 1);
    return;
  }
  int c = lua_gettop(L);
  lua_getfield(L, c, "redundant");
  long redundant = (long)luaL_len(L, -1);
  lua_pop(L, 1);
  long dof = (long)int_field(L, c, "dof"), velocity = (long)int_field(L, c, "velocity_rows");
  long others = (long)int_field(L, c, "findings") - redundant;
  fprintf(stderr, "model: %ld coordinates, %ld rows (%ld redundant",
          (long)int_field(L, c, "coords"), (long)int_field(L, c, "rows"), redundant);
  if (velocity > 0) fprintf(stderr, ", %ld nonholonomic", velocity);
  fprintf(stderr, "), %ld degree%s of freedom", dof, dof == 1 ? "" : "s");
  if (others > 0)
    fprintf(stderr, "; %ld other finding%s (joinery check)", others, others == 1 ? "" : "s");
  lua_getfield(L, c, "moved");
  long settled = (long)int_field(L, lua_gettop(L), "unset");
  lua_pop(L, 1);
  if (settled > 0)
    fprintf(stderr,
            "; %ld unset initial value%s settled onto the constraints (the report lists %s)",
            settled, settled == 1 ? "" : "s", settled == 1 ? "it" : "them");
  fputc('\n', stderr);
  lua_pop(L, 1);
}

static int simulate_system(lua_State *L) {
  /* The flags over the script's sys:settings: solver settings for the compile, run settings
   * and out for the run (the model takes a copy of the system's run settings). Argument 3:
   * --quiet. */
  int quiet = lua_toboolean(L, 3);
  lua_settop(L, 2);
  jySimDef def = jyl_check_system(L, 1)->def;
  jySolverDef solver = jyl_check_system(L, 1)->solver;
  const char *out = NULL;
  jyl_read_settings(L, 2, &def, &solver, &out);
  lua_settop(L, 2);
  jyl_compile_system(L, 1, &solver); /* 3: model */
  lua_getfield(L, 3, "num_coords");
  lua_pushvalue(L, 3);
  lua_call(L, 1, 1);
  lua_getfield(L, 3, "num_rows");
  lua_pushvalue(L, 3);
  lua_call(L, 1, 1);
  lua_getfield(L, 3, "num_channels");
  lua_pushvalue(L, 3);
  lua_call(L, 1, 1);
  printf("model: %d coordinates, %d constraint rows, %d output channels\n",
         (int)lua_tointeger(L, -3), (int)lua_tointeger(L, -2), (int)lua_tointeger(L, -1));
  lua_pop(L, 3);
  lua_getfield(L, 3, "report");
  lua_pushvalue(L, 3);
  lua_call(L, 1, 1);
  const char *report = lua_tostring(L, -1);
  if (report && *report) {
    printf("assembly report:\n");
    while (*report) { /* each line indented */
      size_t n = strcspn(report, "\n");
      printf("  %.*s\n", (int)n, report);
      report += n + (report[n] == '\n');
    }
  }
  lua_pop(L, 1);
  fflush(stdout);
  print_check_line(L, 3);
  warn_moved(L, 3);

  /* Streamed: the rows go to the file, the result keeps only those print_summary shows. */
  jylRunOpts opts = {out, 1, NULL, quiet}; /* stopped by the flag dispatch set */
  lua_settop(L, 3);
  jyl_run_simulation(L, 3, &def, &opts); /* leaves the sim and the row buffer below */
  lua_replace(L, 4);                     /* 4: result */
  lua_settop(L, 4);
  print_summary(L, 4);
  lua_getfield(L, 4, "seconds");
  double seconds = lua_tonumber(L, -1);
  lua_getfield(L, 4, "stats"); /* 6 */
  lua_getfield(L, 4, "cpu_seconds");
  double cpu = lua_tonumber(L, -1);
  lua_pop(L, 1);
  printf("run time: wall %.4g s, CPU %.4g s (%ld steps, %ld right-hand-side evaluations)\n",
         seconds, cpu, (long)int_field(L, 6, "steps"), (long)int_field(L, 6, "rhs_evals"));
  if (def.method == JY_METHOD_AUTO) print_methods(L, 6);
  print_events(L, 4, (long)int_field(L, 6, "guard_evals"));
  lua_getfield(L, 4, "channels");
  lua_getfield(L, 4, "out");
  lua_getfield(L, 4, "out_note");
  printf("wrote %ld rows x %d columns to %s%s%s%s\n", (long)int_field(L, 4, "rows"),
         (int)luaL_len(L, -3), lua_tostring(L, -2), lua_isstring(L, -1) ? " (but " : "",
         lua_isstring(L, -1) ? lua_tostring(L, -1) : "", lua_isstring(L, -1) ? ")" : "");
  return 0;
}

/* What joinery run's words name besides the flags. */
typedef struct RunArgs {
  const char *script;
  int script_at;        /* argv index of the script */
  int first_arg, nargs; /* the script's arguments, after "--" */
} RunArgs;

/* The setting whose flag is spelt a[0..len), into *s; 0 when there is none. */
static int find_flag(const char *a, size_t len, jylSetting *s) {
  for (int k = 0; jyl_setting_at(k, s); k++) {
    char name[64];
    flag_name(name, sizeof name, s->info);
    if (strlen(name) == len && strncmp(a, name, len) == 0) return 1;
  }
  return 0;
}

/* Reads the flag at argv[*i] (--flag value or --flag=value) into the settings table at
 * `settings`; returns -1, or the usage exit status after a usage error. */
static int read_flag(lua_State *L, Cli *cli, int *i, int settings) {
  const char *a = cli->argv[*i];
  const char *eq = strchr(a, '=');
  jylSetting flag;
  if (!find_flag(a, eq ? (size_t)(eq - a) : strlen(a), &flag))
    return unknown_option(a, eq ? (size_t)(eq - a) : strlen(a), 1);
  const jySettingInfo *spec = flag.info;
  char name[64];
  flag_name(name, sizeof name, spec);
  const char *value = NULL;
  if (eq)
    value = eq + 1;
  else if (*i + 1 < cli->argc)
    value = cli->argv[++*i];
  if (!value || !*value || (!eq && strncmp(value, "--", 2) == 0))
    return usage_error("option %s needs a value", name);
  if (flag.kind == JYL_SETTING_OUT || flag.kind == JYL_SETTING_COLUMNS) {
    lua_pushstring(L, value);
  } else if (spec->domain == JY_DOMAIN_CHOICE) {
    if (!jyl_find_choice(spec, value)) {
      char choices[256];
      format_choices(choices, sizeof choices, spec, 0);
      return usage_error("option %s expects %s, got '%s'", name, choices, value);
    }
    lua_pushstring(L, value);
  } else if (spec->domain == JY_DOMAIN_FLAG) {
    if (strcmp(value, "true") != 0 && strcmp(value, "false") != 0)
      return usage_error("option %s expects true or false, got '%s'", name, value);
    lua_pushboolean(L, strcmp(value, "true") == 0);
  } else {
    char *end = NULL;
    double x = strtod(value, &end);
    int unbounded = spec->domain == JY_DOMAIN_AT_LEAST_0 && x == INFINITY; /* --max-step inf */
    if (end == value || *end != '\0' || !(isfinite(x) || unbounded))
      return usage_error("option %s expects a number, got '%s'", name, value);
    if (jyl_setting_is_integer(spec) && x == floor(x) && fabs(x) < 9e15)
      lua_pushinteger(L, (lua_Integer)x); /* read by the table's checks as a whole number */
    else
      lua_pushnumber(L, x);
  }
  lua_setfield(L, settings, spec->name);
  return -1;
}

/* --columns-from FILE: the setting columns from a file of patterns, one a line (blank
 * lines and lines starting with # skipped). Read before the script runs, outside the
 * sandbox: the file is the command line's, as the script is. Returns -1, or the usage exit
 * status (2) when the file cannot be read or holds no pattern. */
static int read_columns_from(lua_State *L, Cli *cli, int *i, int settings) {
  const char *a = cli->argv[*i], *path = NULL;
  if (a[14] == '=')
    path = a + 15;
  else if (*i + 1 < cli->argc)
    path = cli->argv[++*i];
  if (!path || !*path) return usage_error("option --columns-from needs a value");
  FILE *f = fopen(path, "r");
  if (!f) return usage_error("--columns-from %s: %s", path, strerror(errno));
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  char line[4096];
  int n = 0;
  while (fgets(line, sizeof line, f)) {
    char *p = line, *end;
    while (*p == ' ' || *p == '\t') p++;
    end = p + strlen(p);
    while (end > p && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
      end--;
    if (end == p || *p == '#') continue;
    if (n++) luaL_addchar(&b, ',');
    luaL_addlstring(&b, p, (size_t)(end - p));
  }
  int failed = ferror(f);
  fclose(f);
  luaL_pushresult(&b);
  if (failed) return usage_error("--columns-from %s: read error", path);
  if (n == 0) return usage_error("--columns-from %s: no pattern in the file", path);
  lua_setfield(L, settings, "columns");
  return -1;
}

/* Reads joinery run's words from argv[at]: the script, the flags (into the settings table at
 * `settings`) and the script's arguments after "--". Returns -1 to go on, or the exit
 * status (--help: 0; a usage error: 2). */
static int read_run_args(lua_State *L, Cli *cli, int at, int settings, RunArgs *ra) {
  for (int i = at; i < cli->argc; i++) {
    const char *a = cli->argv[i];
    if (strcmp(a, "--") == 0) {
      ra->first_arg = i + 1;
      ra->nargs = cli->argc - ra->first_arg;
      break;
    }
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      print_usage(stdout);
      return 0;
    }
    if (strcmp(a, "--trust") == 0) {
      cli->trust = 1;
      continue;
    }
    if (strcmp(a, "--traceback") == 0) {
      cli->traceback = 1;
      continue;
    }
    if (strcmp(a, "--quiet") == 0) {
      cli->quiet = 1;
      continue;
    }
    if (strncmp(a, "--columns-from", 14) == 0 && (a[14] == '\0' || a[14] == '=')) {
      int status = read_columns_from(L, cli, &i, settings);
      if (status >= 0) return status;
      continue;
    }
    if (a[0] == '-' && a[1] != '\0') {
      int status = read_flag(L, cli, &i, settings);
      if (status >= 0) return status;
      continue;
    }
    if (ra->script) return usage_error("unexpected argument '%s' (script is %s)", a, ra->script);
    ra->script = a;
    ra->script_at = i;
  }
  if (!ra->script) return usage_error("run needs a SCRIPT");
  return -1;
}

/* settings.out defaults to the script's base name with .csv, in the current directory. */
static void default_out(lua_State *L, int settings, const char *script) {
  if (lua_getfield(L, settings, "out") == LUA_TNIL) {
    const char *base = strrchr(script, '/');
    base = base ? base + 1 : script;
    size_t n = strlen(base);
    if (n > 4 && strcmp(base + n - 4, ".lua") == 0) n -= 4;
    lua_pushlstring(L, base, n);
    lua_pushliteral(L, ".csv");
    lua_concat(L, 2);
    lua_setfield(L, settings, "out");
  }
  lua_pop(L, 1);
}

/* The signal that interrupted joinery run (0: none). Process-wide by necessity: a signal
 * handler can reach nothing else. The run's row sink polls it (jylRunOpts.stop). */
static volatile sig_atomic_t caught_signal;

static void on_signal(int signo) { caught_signal = signo; }

/* SIGINT and SIGTERM stop a run that writes a file at its next output row, so that its
 * temporary file is removed (joinery run also keeps the rows so far as
 * <stem>.incomplete.csv). A second one kills at once: a script busy elsewhere than in
 * such a run notices the first only at its next run. */
static void catch_interrupts(lua_State *L) {
  jyl_set_stop_flag(L, &caught_signal);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

/* joinery run SCRIPT [options] [-- args]; argv[at] is the word after "run". Settings go
 * into a table on the stack. */
static int cmd_run(lua_State *L, Cli *cli, int at) {
  RunArgs ra = {NULL, 0, cli->argc, 0};
  lua_newtable(L);
  int settings = lua_gettop(L);
  int status = read_run_args(L, cli, at, settings, &ra);
  if (status >= 0) return status;
  default_out(L, settings, ra.script);
  lua_getfield(L, settings, "out");
  enter_sandbox(L, cli, lua_tostring(L, -1)); /* the string stays in the settings table */
  lua_pop(L, 1);

  set_arg_table(L, cli->argv, ra.script_at, ra.script_at, ra.first_arg, ra.nargs);
  if (run_script(L, ra.script, cli->argv, ra.first_arg, ra.nargs, 1, cli->traceback) != 0) return 1;
  if (!luaL_testudata(L, -1, JYL_SYSTEM)) {
    fprintf(stderr,
            "joinery: %s must return a system (end it with `return sys`), but it returned %s\n",
            ra.script, lua_isnil(L, -1) ? "nothing" : luaL_typename(L, -1));
    return 1;
  }
  lua_pushcfunction(L, simulate_system);
  lua_insert(L, -2);
  lua_pushvalue(L, settings);
  lua_pushboolean(L, cli->quiet);
  catch_interrupts(L);
  if (docall(L, 3, 0, cli->traceback) != LUA_OK) {
    fflush(stdout);
    print_error(lua_tostring(L, -1));
    return caught_signal ? 128 + caught_signal : 1; /* as a shell reports a signal */
  }
  return 0;
}

/* ---- joinery check ---------------------------------------------------------------------- */

/* The doctor's printer, in Lua: called with (system, script, json), returns the text and the
 * exit status. Loaded and run before the sandbox, so the library functions it keeps are the
 * full ones. A compile that fails on massless coordinates no constraint determines is a
 * finding (the compile's first acceleration names them), any other failure an error. */
static const char *const check_printer[] = {
  "local format, concat, pcall, ipairs, tostring, type, mtype, huge, floor =",
  "  string.format, table.concat, pcall, ipairs, tostring, type, math.type, math.huge,",
  "  math.floor\n",
  "local gmatch, match, gsub, pairs, next, sort = string.gmatch, string.match, string.gsub, pairs,"
  "  next, table.sort\n",
  "local function jstr(s)\n",
  "  return '\"' .. gsub(tostring(s), '[%c\"\\\\]', function(c)\n",
  "    if c == '\"' then return '\\\\\"' elseif c == '\\\\' then return '\\\\\\\\' end\n",
  "    return format('\\\\u%04x', c:byte()) end) .. '\"'\n",
  "end\n",
  "local function json(v)\n",
  "  local t = type(v)\n",
  "  if t == 'table' then\n",
  "    local out = {}\n",
  "    if v[1] ~= nil or next(v) == nil and v.__array then\n",
  "      for _, x in ipairs(v) do out[#out + 1] = json(x) end\n",
  "      return '[' .. concat(out, ',') .. ']'\n",
  "    end\n",
  "    local keys = {}\n",
  "    for k in pairs(v) do if k ~= '__array' then keys[#keys + 1] = k end end\n",
  "    sort(keys)\n",
  "    if #keys == 0 then return '[]' end\n",
  "    for _, k in ipairs(keys) do out[#out + 1] = jstr(k) .. ':' .. json(v[k]) end\n",
  "    return '{' .. concat(out, ',') .. '}'\n",
  "  elseif t == 'string' then return jstr(v)\n",
  "  elseif t == 'number' then\n",
  "    if mtype(v) == 'integer' then return format('%d', v) end\n",
  "    if v ~= v or v == huge or v == -huge then return 'null' end\n",
  "    return format('%.17g', v)\n",
  "  elseif t == 'boolean' then return tostring(v) end\n",
  "  return 'null'\n",
  "end\n",
  "local function row_text(r)\n",
  "  if r.glue then return format('%s (glue %s between %s and %s)', r.name, r.glue, r.part, r.part_b) end\n",
  "  return r.part and format('%s (part %s)', r.name, r.part) or r.name\n",
  "end\n",
  "local function unglued_text(it) return format('%s.%s: massless, held by no glue', it.part, it.terminal) end\n",
  "return function(sys, script, as_json)\n",
  "  local ok, model = pcall(sys.compile, sys)\n",
  "  local c\n",
  "  if not ok then\n",
  "    local list = match(tostring(model), 'massless coordinates that no constraint determines: ([^;]*)')\n",
  "    if not list then return nil, tostring(model) end\n",
  "    c = { compiled = false, error = tostring(model), massless = {}, findings = 0, sound = false }\n",
  "    for name in gmatch(list, '[^,%s]+') do\n",
  "      c.massless[#c.massless + 1] = { name = name, part = match(name, '^(.*)%.[^.]*$') }\n",
  "      c.findings = c.findings + 1\n",
  "    end\n",
  "    local sc = sys:check()\n",
  "    c.unglued, c.isolated, c.findings = sc.unglued, sc.isolated, c.findings + sc.findings\n",
  "  else\n",
  "    c = model:check()\n",
  "    c.moved.values = {}\n",
  "    for i, mv in ipairs(model:moved()) do\n",
  "      c.moved.values[i] = { name = mv.name, from = mv.from, to = mv.to,\n",
  "        kind = mv.set and 'set' or mv.follows_glue and 'follows_glue' or 'unset' }\n",
  "    end\n",
  "    c.compiled = true\n",
  "  end\n",
  "  c.script = script\n",
  "  local status = c.findings > 0 and 1 or 0\n",
  "  if as_json then return json(c) .. '\\n', status end\n",
  "  local o = {}\n",
  "  local function say(...) o[#o + 1] = format(...) end\n",
  "  local function list(title, items, fmt)\n",
  "    if #items == 0 then say('%s: none', title) return end\n",
  "    say('%s: %d', title, #items)\n",
  "    for _, it in ipairs(items) do say('  %s', fmt(it)) end\n",
  "  end\n",
  "  say('model check of %s', script)\n",
  "  if not c.compiled then\n",
  "    say('the compile stopped at the first acceleration: %s', c.error)\n",
  "    list('massless coordinates no row determines', c.massless,\n",
  "      function(it) return format('%s (part %s): give it mass or glue its terminal', it.name, it.part) end)\n",
  "    list('terminals never glued', c.unglued, unglued_text)\n",
  "    list('parts not connected to anything', c.isolated, function(it) return it.name end)\n",
  "    say('findings: %d (not sound)', c.findings)\n",
  "    return concat(o, '\\n') .. '\\n', status\n",
  "  end\n",
  "  say('coordinates: %d', c.coords)\n",
  "  say('constraint rows: %d (%d position, %d velocity/nonholonomic)', c.rows, c.position_rows, c.velocity_rows)\n",
  "  say('rank of A: %d of the position rows, %d of all rows%s', c.rank, c.rank_all,\n",
  "    c.rank_from_svd and '' or ' (from the compile\\'s dependent rows: too large to decompose)')\n",
  "  say('degrees of freedom: %d (%d coordinates - rank %d, at the initial state)', c.dof, c.coords, c.rank)\n",
  "  if c.velocity_rows > 0 then say('velocity freedoms: %d (with the %d nonholonomic rows)', c.motion_dof, c.velocity_rows) end\n",
  "  list('redundant rows', c.redundant, row_text)\n",
  "  list('massless coordinates with no row', c.massless, function(it) return format('%s (part %s)', it.name, it.part or '?') end)\n",
  "  if not c.mass_known then say('  (a tree model forms no mass matrix: only parts without mass were looked at)') end\n",
  "  list('terminals never glued', c.unglued, unglued_text)\n",
  "  list('parts not connected to anything', c.isolated, function(it) return it.name end)\n",
  "  say('initial state: %d values moved (%d set by the script, %d unset or guessed, %d following their glue)',\n",
  "    c.moved.set + c.moved.unset + c.moved.follows_glue, c.moved.set, c.moved.unset, c.moved.follows_glue)\n",
  "  for i, mv in ipairs(c.moved.values) do\n",
  "    if i > 20 then say('  ... and %d more', #c.moved.values - 20) break end\n",
  "    say('  %s: %.9g -> %.9g (%s)', mv.name, mv.from, mv.to, mv.kind == 'set' and 'set by the script'\n",
  "      or mv.kind == 'unset' and 'unset or guessed' or 'follows its glue')\n",
  "  end\n",
  "  local s = c.singular\n",
  "  if s.sigma then\n",
  "    local along = {}\n",
  "    for _, x in ipairs(s.coords) do along[#along + 1] = format('%s (%.3g)', x.name, x.weight) end\n",
  "    say('nearest singular configuration: smallest singular value %.4g (threshold %g)%s, along %s', s.sigma, s.tol,\n",
  "      s.near and ': NEAR SINGULAR' or '', concat(along, ', '))\n",
  "  else say('nearest singular configuration: not computed (no rows, or too large)') end\n",
  "  say('findings: %d%s', c.findings, c.findings == 0 and ' (sound)' or ' (not sound)')\n",
  "  return concat(o, '\\n') .. '\\n', status\n",
  "end\n",
  NULL};

static int cmd_check(lua_State *L, Cli *cli, int at) {
  const char *script = NULL;
  int json = 0, first_arg = cli->argc, nargs = 0, script_at = 0;
  for (int i = at; i < cli->argc; i++) {
    const char *a = cli->argv[i];
    if (strcmp(a, "--") == 0) {
      first_arg = i + 1;
      nargs = cli->argc - i - 1;
      break;
    }
    if (strcmp(a, "--json") == 0)
      json = 1;
    else if (strcmp(a, "--trust") == 0)
      cli->trust = 1;
    else if (strcmp(a, "--traceback") == 0)
      cli->traceback = 1;
    else if (a[0] == '-' && a[1])
      return usage_error("check: unknown option %s (check SCRIPT [--json] [-- ARGS...])", a);
    else if (script)
      return usage_error("check takes one SCRIPT (its arguments go after --)");
    else {
      script = a;
      script_at = i;
    }
  }
  if (!script) return usage_error("check needs a SCRIPT");
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (int i = 0; check_printer[i]; i++) luaL_addstring(&b, check_printer[i]);
  luaL_pushresult(&b);
  const char *code = lua_tostring(L, -1);
  if (luaL_loadbufferx(L, code, strlen(code), "=check", "t") != LUA_OK)
    return luaL_error(L, "%s", lua_tostring(L, -1));
  lua_call(L, 0, 1);
  lua_remove(L, -2); /* the code */
  int printer = lua_gettop(L);
  enter_sandbox(L, cli, NULL);
  set_arg_table(L, cli->argv, script_at, script_at, first_arg, nargs);
  if (run_script(L, script, cli->argv, first_arg, nargs, 1, cli->traceback) != 0) return 2;
  if (!luaL_testudata(L, -1, JYL_SYSTEM)) {
    fprintf(stderr,
            "joinery: %s must return a system (end it with `return sys`), but it returned %s\n",
            script, lua_isnil(L, -1) ? "nothing" : luaL_typename(L, -1));
    return 2;
  }
  lua_pushvalue(L, printer);
  lua_insert(L, -2);
  lua_pushstring(L, script);
  lua_pushboolean(L, json);
  if (docall(L, 3, 2, cli->traceback) != LUA_OK) {
    print_error(lua_tostring(L, -1));
    return 2;
  }
  if (lua_isnil(L, -2)) {
    print_error(lua_tostring(L, -1));
    return 2;
  }
  fputs(lua_tostring(L, -2), stdout);
  return (int)lua_tointeger(L, -1);
}

/* ---- joinery plot ----------------------------------------------------------------------- */

/* The plot's arguments in a userdata, freed by its __gc even when a Lua error unwinds. */
static int plot_args_gc(lua_State *L) {
  plot_args_free((PlotArgs *)lua_touserdata(L, 1));
  return 0;
}

/* SCRIPT.lua: joinery run SCRIPT with run's options and --out (by default <stem>.csv here, as
 * run writes it), then the plot of that CSV; of a failed run, the plot of the rows it kept
 * (<stem>.incomplete.csv), with the run's exit status. */
static int plot_script(lua_State *L, Cli *cli, const PlotArgs *pa) {
  int n = pa->nrest, dashes = n, has_out = 0;
  const char *csv = NULL;
  for (int i = 0; i < n; i++) {
    const char *r = pa->rest[i];
    if (strcmp(r, "--") == 0) {
      dashes = i;
      break;
    }
    if (strncmp(r, "--out=", 6) == 0) csv = r + 6, has_out = 1;
    if (strcmp(r, "--out") == 0 && i + 1 < n) csv = pa->rest[i + 1], has_out = 1;
  }
  lua_newtable(L); /* settings, only for default_out */
  if (!csv) {
    default_out(L, lua_gettop(L), pa->input);
    lua_getfield(L, -1, "out");
    csv = lua_tostring(L, -1); /* kept on the stack */
  }
  char **argv = lua_newuserdatauv(L, sizeof(char *) * (size_t)(n + 6), 0);
  int k = 0;
  argv[k++] = cli->argv[0];
  argv[k++] = (char *)"run";
  argv[k++] = (char *)pa->input;
  for (int i = 0; i < dashes; i++) argv[k++] = pa->rest[i];
  if (!has_out) {
    argv[k++] = (char *)"--out";
    argv[k++] = (char *)csv;
  }
  for (int i = dashes; i < n; i++) argv[k++] = pa->rest[i];
  argv[k] = NULL;
  if (plot_check_out(pa) != 0) return 1;
  size_t len = strlen(csv);
  if (len > 4 && strcmp(csv + len - 4, ".csv") == 0) len -= 4;
  const char *kept = lua_pushfstring(L, "%s.incomplete.csv", lua_pushlstring(L, csv, len));
  struct stat before, after;
  int had_kept = stat(kept, &before) == 0;
  Cli run = *cli;
  run.argc = k;
  run.argv = argv;
  int status = cmd_run(L, &run, 2);
  if (status == 0) return plot_draw(pa, csv);
  /* The rows before the failure are worth seeing, if this run wrote them: an earlier run's
   * file, left as it was by a failure before the simulation, is not this run's. */
  if (stat(kept, &after) == 0 &&
      (!had_kept || after.st_ino != before.st_ino || after.st_dev != before.st_dev ||
       after.st_mtim.tv_sec != before.st_mtim.tv_sec ||
       after.st_mtim.tv_nsec != before.st_mtim.tv_nsec)) {
    fprintf(stderr, "joinery: plot: drawing the rows the failed run kept in %s\n", kept);
    plot_draw(pa, kept);
  }
  return status;
}

static int cmd_plot(lua_State *L, Cli *cli, int at) {
  PlotArgs *pa = lua_newuserdatauv(L, sizeof *pa, 0);
  memset(pa, 0, sizeof *pa);
  lua_newtable(L);
  lua_pushcfunction(L, plot_args_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  int status = plot_parse(cli->argc, cli->argv, at, pa);
  if (status >= 0) return status;
  return plot_is_script(pa->input) ? plot_script(L, cli, pa) : plot_draw(pa, pa->input);
}

/* ---- joinery animate ------------------------------------------------------------------- */

/* Arguments 1 system, 2 settings table, 3 light userdata jylAnimOpts: compiles with the
 * settings' solver keys and writes the page. */
static int animate_system(lua_State *L) {
  jylAnimOpts *opts = (jylAnimOpts *)lua_touserdata(L, 3);
  lua_settop(L, 2);
  jySimDef def = jyl_check_system(L, 1)->def;
  jySolverDef solver = jyl_check_system(L, 1)->solver;
  const char *csv_out = NULL; /* run's --out: not animate's, which writes no CSV */
  jyl_read_settings(L, 2, &def, &solver, &csv_out);
  lua_settop(L, 2);
  jyl_compile_system(L, 1, &solver); /* 3: model */
  jylAnimResult res;
  jyl_animate(L, 3, &def, opts, &res);
  FILE *f = fopen(opts->out, "rb");
  long size = -1;
  if (f && fseek(f, 0, SEEK_END) == 0) size = ftell(f);
  if (f) fclose(f);
  printf("wrote %s: %ld frames of %d visuals, %s view, %ld bytes", opts->out, res.frames,
         res.visuals, res.planar ? "planar" : "3-D", size);
  if (res.every > 1)
    printf(" (every %ld-th row: a page holds at most %d frames)", res.every, JYL_ANIM_MAX_FRAMES);
  printf("\n");
  return 0;
}

/* joinery animate SCRIPT [RUN.csv|RUN.h5] [-o PAGE] [--forces] [options] [-- args]. */
static int cmd_animate(lua_State *L, Cli *cli, int at) {
  const char *script = NULL, *csv = NULL, *out = NULL;
  int forces = 0, script_at = 0, first_arg = cli->argc, nargs = 0;
  lua_newtable(L);
  int settings = lua_gettop(L);
  for (int i = at; i < cli->argc; i++) {
    const char *a = cli->argv[i];
    if (strcmp(a, "--") == 0) {
      first_arg = i + 1;
      nargs = cli->argc - first_arg;
      break;
    }
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      print_usage(stdout);
      return 0;
    }
    if (strcmp(a, "-o") == 0) {
      if (i + 1 >= cli->argc) return usage_error("animate: -o needs the page's file name");
      out = cli->argv[++i];
    } else if (strncmp(a, "-o=", 3) == 0) {
      out = a + 3;
    } else if (strcmp(a, "--forces") == 0) {
      forces = 1;
    } else if (strcmp(a, "--trust") == 0) {
      cli->trust = 1;
    } else if (strcmp(a, "--traceback") == 0) {
      cli->traceback = 1;
    } else if (strcmp(a, "--quiet") == 0) {
      cli->quiet = 1;
    } else if (a[0] == '-' && a[1] != '\0') {
      int status = read_flag(L, cli, &i, settings);
      if (status >= 0) return status;
    } else if (!script) {
      script = a;
      script_at = i;
    } else if (!csv) {
      csv = a;
    } else {
      return usage_error("animate takes SCRIPT and at most one CSV (got '%s' too)", a);
    }
  }
  if (!script) return usage_error("animate needs a SCRIPT");
  const char *base = strrchr(script, '/');
  base = base ? base + 1 : script;
  size_t n = strlen(base);
  if (n > 4 && strcmp(base + n - 4, ".lua") == 0) n -= 4;
  lua_pushlstring(L, base, n); /* the title, kept on the stack */
  const char *title = lua_tostring(L, -1);
  if (!out) {
    lua_pushfstring(L, "%s.html", title);
    out = lua_tostring(L, -1);
  }
  enter_sandbox(L, cli, NULL); /* the script writes nothing: the page is the command's */
  set_arg_table(L, cli->argv, script_at, script_at, first_arg, nargs);
  if (run_script(L, script, cli->argv, first_arg, nargs, 1, cli->traceback) != 0) return 1;
  if (!luaL_testudata(L, -1, JYL_SYSTEM)) {
    fprintf(stderr,
            "joinery: %s must return a system (end it with `return sys`), but it returned %s\n",
            script, lua_isnil(L, -1) ? "nothing" : luaL_typename(L, -1));
    return 1;
  }
  jylAnimOpts opts = {csv, out, title, forces};
  lua_pushcfunction(L, animate_system);
  lua_insert(L, -2);
  lua_pushvalue(L, settings);
  lua_pushlightuserdata(L, &opts);
  /* SIGINT keeps its default: the page is written only at the end, under a temporary name */
  if (docall(L, 3, 0, cli->traceback) != LUA_OK) {
    fflush(stdout);
    print_error(lua_tostring(L, -1));
    return 1;
  }
  return 0;
}

/* ---- joinery types / doc --------------------------------------------------------------- */

static int cmd_types(lua_State *L) {
  require_joinery(L);
  int mod = lua_gettop(L);
  lua_getfield(L, mod, "types");
  lua_call(L, 0, 1);
  int types = lua_gettop(L);
  lua_Integer n = luaL_len(L, types);
  for (lua_Integer i = 1; i <= n; i++) {
    lua_getfield(L, mod, "describe");
    lua_geti(L, types, i);
    lua_call(L, 1, 1);
    lua_getfield(L, -1, "name");
    lua_getfield(L, -2, "doc");
    printf("%-14s %s\n", lua_tostring(L, -2), lua_tostring(L, -1));
    lua_pop(L, 3);
  }
  return 0;
}

/* Prints the strings of the array at idx joined by ", " (or "none"). */
static void print_names(lua_State *L, int idx) {
  lua_Integer n = luaL_len(L, idx);
  if (n == 0) printf("none");
  for (lua_Integer i = 1; i <= n; i++) {
    lua_geti(L, idx, i);
    printf("%s%s", i > 1 ? ", " : "", lua_tostring(L, -1));
    lua_pop(L, 1);
  }
  printf("\n");
}

/* The parameter table of the description at d. */
static void print_params(lua_State *L, int d) {
  lua_getfield(L, d, "params");
  int params = lua_gettop(L);
  lua_Integer n = luaL_len(L, params);
  printf("parameters:\n");
  if (n == 0)
    printf("  none\n");
  else
    printf("  %-10s %10s  %-8s %-12s %s\n", "name", "default", "unit", "domain", "meaning");
  for (lua_Integer i = 1; i <= n; i++) {
    lua_geti(L, params, i);
    lua_getfield(L, -1, "name");
    lua_getfield(L, -2, "default");
    lua_getfield(L, -3, "unit");
    lua_getfield(L, -4, "domain");
    lua_getfield(L, -5, "doc");
    printf("  %-10s %10g  %-8s %-12s %s\n", lua_tostring(L, -5), lua_tonumber(L, -4),
           lua_tostring(L, -3), lua_tostring(L, -2), lua_tostring(L, -1));
    lua_pop(L, 6);
  }
  lua_pop(L, 1);
}

/* Terminals, coordinates, constraint rows and outputs of the description at d. */
static void print_shape(lua_State *L, int d) {
  printf("with the default parameters:\n  terminals: ");
  lua_getfield(L, d, "terminals");
  int terms = lua_gettop(L);
  lua_Integer n = luaL_len(L, terms);
  if (n == 0) printf("none");
  for (lua_Integer i = 1; i <= n; i++) {
    lua_geti(L, terms, i);
    lua_getfield(L, -1, "name");
    lua_getfield(L, -2, "dim");
    printf("%s%s (dim %d)", i > 1 ? ", " : "", lua_tostring(L, -2), (int)lua_tointeger(L, -1));
    lua_pop(L, 3);
  }
  printf("\n");
  lua_pop(L, 1);
  static const char *const lists[][2] = {
    {"coords", "coordinates"}, {"rows", "constraint rows"}, {"outputs", "outputs"}};
  for (int k = 0; k < 3; k++) {
    printf("  %s: ", lists[k][1]);
    lua_getfield(L, d, lists[k][0]);
    print_names(L, lua_gettop(L));
    lua_pop(L, 1);
  }
}

static int cmd_doc(lua_State *L, const char *type) {
  require_joinery(L);
  lua_getfield(L, -1, "describe");
  lua_pushstring(L, type);
  lua_call(L, 1, 1);
  int d = lua_gettop(L);
  lua_getfield(L, d, "name");
  lua_getfield(L, d, "doc");
  printf("%s: %s\n", lua_tostring(L, -2), lua_tostring(L, -1));
  lua_pop(L, 2);
  print_params(L, d);
  if (lua_getfield(L, d, "shape_error") == LUA_TSTRING) {
    printf("shape for the default parameters: %s\n", lua_tostring(L, -1));
    return 0;
  }
  lua_pop(L, 1);
  print_shape(L, d);
  return 0;
}

/* ---- main ------------------------------------------------------------------------------ */

static int dispatch(lua_State *L, Cli *cli) {
  char **argv = cli->argv;
  int at = 1; /* the command word, after the global flags */
  for (; at < cli->argc; at++) {
    if (strcmp(argv[at], "--trust") == 0)
      cli->trust = 1;
    else if (strcmp(argv[at], "--traceback") == 0)
      cli->traceback = 1;
    else
      break;
  }
  if (at == cli->argc && at > 1)
    return usage_error("%s needs a SCRIPT or run SCRIPT after it", argv[at - 1]);
  const char *cmd = argv[at];
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
    print_usage(stdout);
    return 0;
  }
  if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-v") == 0) {
    printf("joinery %s (%s)\n", jy_version(), LUA_RELEASE);
    return 0;
  }
  if (strcmp(cmd, "run") == 0) return cmd_run(L, cli, at + 1);
  if (strcmp(cmd, "check") == 0) return cmd_check(L, cli, at + 1);
  if (strcmp(cmd, "plot") == 0) return cmd_plot(L, cli, at + 1);
  if (strcmp(cmd, "animate") == 0) return cmd_animate(L, cli, at + 1);
  if (strcmp(cmd, "types") == 0) {
    if (cli->argc != at + 1) return usage_error("types takes no arguments");
    return cmd_types(L);
  }
  if (strcmp(cmd, "settings") == 0) {
    if (cli->argc != at + 1) return usage_error("settings takes no arguments");
    return cmd_settings();
  }
  if (strcmp(cmd, "doc") == 0) {
    if (cli->argc != at + 2) return usage_error("doc needs one part type name");
    return cmd_doc(L, argv[at + 1]);
  }
  if (cmd[0] == '-') return unknown_option(cmd, strlen(cmd), 0);
  set_arg_table(L, argv, at, at, at + 1, cli->argc - at - 1);
  enter_sandbox(L, cli, NULL);
  catch_interrupts(L);
  if (run_script(L, cmd, argv, at + 1, cli->argc - at - 1, 0, cli->traceback) != 0)
    return caught_signal ? 128 + caught_signal : 1;
  return 0;
}

/* Everything that may raise a Lua error runs in here, under lua_pcall. */
static int pmain(lua_State *L) {
  /* Once per state, with the command's own argument: a script that reached this function
   * (under --trust, through debug.getinfo's "f") and called it gets an error, not a crash. */
  static const char started_key = 'p';
  Cli *cli = (Cli *)lua_touserdata(L, 1);
  if (!cli || lua_type(L, 1) != LUA_TLIGHTUSERDATA ||
      lua_rawgetp(L, LUA_REGISTRYINDEX, &started_key) != LUA_TNIL)
    return luaL_error(L, "the joinery command's main function is not for scripts to call");
  lua_pop(L, 1);
  lua_pushboolean(L, 1);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &started_key);
  luaL_checkversion(L);
  jyl_open_libs(L);
  cli->status = dispatch(L, cli);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    print_usage(stderr);
    return 2;
  }
  lua_State *L = luaL_newstate();
  if (!L) {
    print_error("cannot create the Lua state (out of memory)");
    return 1;
  }
  Cli cli = {.argc = argc, .argv = argv, .status = 1};
  lua_pushcfunction(L, pmain);
  lua_pushlightuserdata(L, &cli);
  if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
    fflush(stdout);
    print_error(lua_tostring(L, -1));
    cli.status = 1;
  }
  fflush(stdout);
  lua_close(L);
  return cli.status;
}
