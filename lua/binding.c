/* lua/binding.c — the Lua 5.4 module "joinery": a thin binding of joinery/joinery.h.
 *
 * Lua API
 * -------
 *   local joinery = require "joinery"
 *
 *   joinery.version                 "0.1.0"
 *   joinery.types()                 array of the registered part type names
 *   joinery.describe(type)          {name=, doc=, params={{name=, default=, unit=, doc=,
 *                                   domain=}...}, terminals={{name=, dim=}...}, coords={...},
 *                                   rows={...}, outputs={...}} (shape for default parameters;
 *                                   shape_error= instead when the defaults make no part)
 *   joinery.system{gravity = {gx[, gy[, gz]]}}     -> System (table and gravity optional;
 *                                   missing components are 0)
 *
 * System (joinery.System; __gc and __close release it, sys:close() too)
 *   sys:add(type, name[, params])   -> Part. params: the type's parameters (numbers), plus
 *                                   init = {coord = value, ...} (initial coordinates),
 *                                   vel  = {coord = value, ...} (initial velocities),
 *                                   <terminal> = Terminal: glues that terminal of the new part
 *                                   to the given one; the glue is named "<name>.<terminal>"
 *                                   (glued in the order the type lists its terminals).
 *                                   The part is tried in a scratch system first, so a
 *                                   failing add leaves the system unchanged.
 *   sys:glue(a, b[, name])          glue two terminals (force channel "force.<name>")
 *   sys:constrain{name=, on={...}, phi=|psi=|accel=, rows=, kind=, nonideal=}
 *                                   a constraint written in Lua between terminals and
 *                                   coordinates (lua/constrain.c; docs/constraints.md)
 *   sys:settings{...}               store run settings (keys: t_start, t_end, dt_out, rtol,
 *                                   atol, max_step, max_steps, baumgarte_rate,
 *                                   method = "adams"|"bdf", formulation =
 *                                   "udwadia-kalaba"|"natsiavas-paraskevopoulos"; the
 *                                   fields of jySimDef) and solver settings (the keys of
 *                                   sys:compile's table, used by every later compile,
 *                                   `joinery run` included); returns sys.
 *                                   sys:settings() returns the stored settings, both kinds.
 *   sys:compile([solver])           -> Model. solver: {rank_rcond=, augment_scale=,
 *                                   consistency_tol=, assembly_tol=, eliminate_glue=true|false,
 *                                   sparse_min_coords=, dependent_tol=, dependent_rcond=}
 *                                   over those of sys:settings (defaults otherwise); a value
 *                                   out of range is an error naming the setting.
 *                                   The model takes a copy of the system's run settings.
 *   sys:simulate([opts])            compile + model:simulate(opts), opts (run and solver
 *                                   settings) over sys:settings.
 *   sys:part(name)                  -> Part or nil;  sys:parts() -> array of part names
 *
 * Part (joinery.Part): part.name, part.type, and part.<terminal> -> Terminal. Indexing a
 *   name that is no terminal raises an error listing the part's terminals.
 * Terminal (joinery.Terminal): t.name ("bob.pos"), t.terminal ("pos"), t.dim, t.part (Part).
 *   Terminals compare equal with == when they are the same terminal of the same system.
 *
 * Model (joinery.Model; immutable; __gc/__close/model:close())
 *   model:coords(), model:channels(), model:rows()   arrays of names ("bob.x", "t", ...)
 *   model:num_coords(), model:num_rows(), model:num_channels()
 *   model:initial()                 -> q, v (arrays: the consistent initial state)
 *   model:report()                  -> string ("" when the assembly had nothing to say)
 *   model:moved()                   -> array of {name=, from=, to=, set=, follows_glue=, warn=}:
 *                                   initial values moved to meet the constraints
 *   model:acceleration(q, v[, t])   -> array q'' (t defaults to 0)
 *   model:evaluate(q, v[, t])       -> {channel name = value}
 *   model:simulate([opts])          -> result (opts: the run settings above, plus out; a
 *                                   solver setting is an error: the model is compiled)
 *   model:sim([opts])               -> Sim, a simulation stepped from Lua
 *
 * Result of simulate: res.channels (names in CSV order, "t" first), res[<channel>] (array
 *   per channel: res.t, res["bob.x"], res["der(bob.x)"], res.energy, res["force.hinge.x"],
 *   ...), res.rows (number of output rows), res.report, res.stats ({steps=, rhs_evals=,
 *   error_test_fails=, nonlinear_fails=, jac_evals=, restarts=}), res.seconds (wall time of the
 *   integration), res.model. With opts.out = "file.csv" the engine writes the rows to that
 *   file (jy_sim_write_csv: the file appears only when the run succeeded; a failed run's rows
 *   go to <stem>.incomplete.csv and the error says so) and the same
 *   rows fill the arrays; res.out is the path. On a terminal, a run longer than a second
 *   shows the simulated time on stderr as it goes.
 *
 * Sim (joinery.Sim; __gc/__close/sim:close()): sim:advance(t_out), sim:time(),
 *   sim:state() -> q, v, sim:set_state(t, q, v), sim:channels() -> {name = value},
 *   sim:stats(). A sim keeps its model alive; closing the model while sims are open
 *   defers the release until the last sim is gone.
 *
 * Errors in the use of the API are Lua errors located at the calling script line
 * ("model.lua:12: ..."), with the engine's message. Closed objects raise "... is closed".
 *
 * Implementation notes: every userdata is created before the C resource it owns, so a
 * failed allocation never leaks. References between objects are user values (system ->
 * env, model -> env, sim -> model, part/terminal -> system), never registry references,
 * so unreachable groups are collected. No Lua error is raised while an engine function
 * is on the C stack: the row sink only copies numbers into a malloc'ed buffer.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "binding.h"
#include "prelude.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>

#include "joinery/joinery.h"

#ifndef JOINERY_VERSION
#define JOINERY_VERSION "0.1.0"
#endif

#define JYL_ENV "joinery.Env"
#define JYL_ROWS "joinery.Rows"
#define JYL_SCRATCH "joinery.Scratch"

typedef struct LEnv {
  jyEnv *env;
} LEnv;

/* user values: 1 = env userdata, 2 = table part index + 1 -> type name */
typedef struct LSystem {
  jySystem *sys;
  jySimDef def; /* sys:settings */
  jySolverDef solver; /* sys:settings' solver keys: the base of sys:compile */
} LSystem;

/* user value 1 = system userdata */
typedef struct LPart {
  int part;
} LPart;

/* user value 1 = system userdata */
typedef struct LTerminal {
  int part, terminal;
} LTerminal;

/* user value 1 = env userdata */
typedef struct LModel {
  jyModel *model;
  jyEval *eval;   /* made on first evaluation */
  jySimDef def;   /* the system's settings when compiled */
  int nsims;      /* open sims of this model */
  int closed;     /* closed by the script; released when nsims reaches 0 */
} LModel;

/* user value 1 = model userdata */
typedef struct LSim {
  jySim *sim;
} LSim;

/* Output rows collected by the row sink (malloc'ed; freed by __gc or at once). */
typedef struct LRows {
  double *data;
  size_t n, cap; /* doubles */
  int nch;
  int failed; /* 1: out of memory, 2: row width differs from the model's */
  int progress, reported; /* show the simulated time on a terminal during long runs */
  double t0, t_end, next_report;
} LRows;

/* ---- helpers --------------------------------------------------------------------------- */

static const char *msg_or(const char *msg, jyStatus status) {
  return msg && *msg ? msg : jy_status_text(status);
}

/* Pushes "a, b, c". */
static void push_list(lua_State *L, const char *const *names, int n) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (int i = 0; i < n; i++) {
    if (i) luaL_addstring(&b, ", ");
    luaL_addstring(&b, names[i]);
  }
  luaL_pushresult(&b);
}

/* Raises "unknown <what> 'name'; did you mean 'x'? (valid: a, b, c)". */
static int unknown_name(lua_State *L, const char *what, const char *name,
                        const char *const *names, int n) {
  const char *near = jy_nearest_name(name, names, n);
  push_list(L, names, n);
  if (near)
    return luaL_error(L, "unknown %s '%s'; did you mean '%s'? (valid: %s)", what, name, near,
                      lua_tostring(L, -1));
  return luaL_error(L, "unknown %s '%s' (valid: %s)", what, name, lua_tostring(L, -1));
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void push_array(lua_State *L, const double *x, int n) {
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    lua_pushnumber(L, x[i]);
    lua_rawseti(L, -2, i + 1);
  }
}

/* Reads an array of exactly n numbers at argument idx. */
static void read_vector(lua_State *L, int idx, int n, double *out, const char *what) {
  luaL_checktype(L, idx, LUA_TTABLE);
  lua_Integer len = luaL_len(L, idx);
  if (len != n)
    luaL_argerror(L, idx,
                  lua_pushfstring(L, "%s must have %d entries, got %d", what, n, (int)len));
  for (int i = 0; i < n; i++) {
    if (lua_geti(L, idx, i + 1) != LUA_TNUMBER)
      luaL_argerror(L, idx, lua_pushfstring(L, "%s[%d] is not a number", what, i + 1));
    out[i] = lua_tonumber(L, -1);
    lua_pop(L, 1);
  }
}

/* A scratch array of n doubles that the garbage collector frees (left on the stack). */
static double *scratch(lua_State *L, size_t n) {
  return (double *)lua_newuserdatauv(L, n * sizeof(double), 0);
}

/* ---- environment ----------------------------------------------------------------------- */

static int env_gc(lua_State *L) {
  LEnv *e = (LEnv *)luaL_checkudata(L, 1, JYL_ENV);
  jy_env_destroy(e->env);
  e->env = NULL;
  return 0;
}

static jyEnv *upvalue_env(lua_State *L) {
  LEnv *e = (LEnv *)lua_touserdata(L, lua_upvalueindex(1));
  return e->env;
}

/* ---- settings -------------------------------------------------------------------------- */

enum {
  S_T_START,
  S_T_END,
  S_DT_OUT,
  S_RTOL,
  S_ATOL,
  S_ATOL_VELOCITY,
  S_MAX_STEP,
  S_MAX_STEPS,
  S_BAUMGARTE,
  S_METHOD,
  S_FORMULATION,
  S_DRIFT,
  S_OUT /* last: only where a file may be named */
};
static const char *const setting_names[] = {
  "t_start", "t_end", "dt_out", "rtol", "atol", "atol_velocity", "max_step", "max_steps",
  "baumgarte_rate", "method",  "formulation", "drift", "out"};
/* In jyMethod order. */
static const char *const method_names[] = {"adams", "bdf", "erk"};
/* In jyFormulation order. */
static const char *const formulation_names[] = {"udwadia-kalaba", "natsiavas-paraskevopoulos"};
/* In jyDrift order. */
static const char *const drift_names[] = {"baumgarte", "projection", "none"};

static const char *const solver_names[] = {"rank_rcond", "augment_scale", "consistency_tol",
                                           "assembly_tol", "eliminate_glue",
                                           "sparse_min_coords", "dependent_tol",
                                           "dependent_rcond"};
enum { NSOLVER = sizeof solver_names / sizeof solver_names[0] };

static int solver_index(const char *key) {
  for (int i = 0; i < NSOLVER; i++)
    if (strcmp(key, solver_names[i]) == 0) return i;
  return -1;
}

/* Applies solver setting `which` from the value on top of the stack; raises naming the
 * setting when the value is out of its range. */
static void apply_solver_setting(lua_State *L, int which, jySolverDef *d) {
  const char *key = solver_names[which];
  if (which == 4) { /* eliminate_glue: a boolean */
    if (lua_type(L, -1) != LUA_TBOOLEAN)
      luaL_error(L, "solver setting 'eliminate_glue' must be true or false, got %s",
                 luaL_typename(L, -1));
    d->eliminate_glue = lua_toboolean(L, -1);
    return;
  }
  if (lua_type(L, -1) != LUA_TNUMBER)
    luaL_error(L, "solver setting '%s' must be a number, got %s", key, luaL_typename(L, -1));
  double x = lua_tonumber(L, -1);
  if (which == 5) { /* sparse_min_coords: a count */
    int isint = 0;
    lua_Integer k = lua_tointegerx(L, -1, &isint);
    if (!isint || k < 0 || k > 1000000000)
      luaL_error(L, "solver setting 'sparse_min_coords' must be a whole number >= 0 (0: never "
                 "the sparse solve), got %f", x);
    d->sparse_min_coords = (int)k;
    return;
  }
  /* relative cuts lie in (0, 1); tolerances and scales are positive */
  int relative = which == 0 || which == 7;
  if (!(x > 0 && isfinite(x)) || (relative && !(x < 1)))
    luaL_error(L, "solver setting '%s' must be %s, got %f", key,
               relative ? "between 0 and 1 (a relative cut)" : "a positive number", x);
  double *field[] = {&d->rank_rcond, &d->augment_scale, &d->consistency_tol, &d->assembly_tol,
                     NULL, NULL, &d->dependent_tol, &d->dependent_rcond};
  *field[which] = x;
}

static void read_solver(lua_State *L, int idx, jySolverDef *d) {
  luaL_checktype(L, idx, LUA_TTABLE);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    if (lua_type(L, -2) != LUA_TSTRING)
      luaL_error(L, "solver settings are keyed by name (got a %s key)", luaL_typename(L, -2));
    const char *key = lua_tostring(L, -2);
    int which = solver_index(key);
    if (which < 0) unknown_name(L, "solver setting", key, solver_names, NSOLVER);
    apply_solver_setting(L, which, d);
    lua_pop(L, 1);
  }
}

static void push_solver_settings(lua_State *L, const jySolverDef *d) {
  double values[] = {d->rank_rcond, d->augment_scale, d->consistency_tol, d->assembly_tol, 0, 0,
                     d->dependent_tol, d->dependent_rcond};
  for (int i = 0; i < NSOLVER; i++) {
    if (i == 4)
      lua_pushboolean(L, d->eliminate_glue);
    else if (i == 5)
      lua_pushinteger(L, d->sparse_min_coords);
    else
      lua_pushnumber(L, values[i]);
    lua_setfield(L, -2, solver_names[i]);
  }
}

/* Applies the settings table at idx to *d, and its solver keys to *solver (NULL where the
 * model is compiled already: a solver key is then an error); *out receives "out" when
 * out != NULL (the string lives in the table). Raises on an unknown name or a bad value
 * before changing anything the caller keeps (callers pass copies). */
static void read_settings(lua_State *L, int idx, jySimDef *d, jySolverDef *solver,
                          const char **out) {
  int nnames = out ? S_OUT + 1 : S_OUT;
  idx = lua_absindex(L, idx);
  luaL_checktype(L, idx, LUA_TTABLE);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    if (lua_type(L, -2) != LUA_TSTRING)
      luaL_error(L, "settings are keyed by name (got a %s key)", luaL_typename(L, -2));
    const char *key = lua_tostring(L, -2);
    int which = -1;
    for (int i = 0; i < nnames; i++)
      if (strcmp(key, setting_names[i]) == 0) which = i;
    if (which < 0 && solver_index(key) >= 0) {
      if (!solver)
        luaL_error(L, "solver setting '%s' belongs to the model, which is compiled already: set "
                   "it with sys:settings or sys:compile{...} before compiling", key);
      apply_solver_setting(L, solver_index(key), solver);
      lua_pop(L, 1);
      continue;
    }
    if (which < 0) {
      const char *names[S_OUT + 1 + NSOLVER];
      for (int i = 0; i < nnames; i++) names[i] = setting_names[i];
      for (int i = 0; i < NSOLVER; i++) names[nnames + i] = solver_names[i];
      unknown_name(L, "setting", key, names, nnames + NSOLVER);
    }
    if (which == S_OUT || which == S_METHOD || which == S_FORMULATION || which == S_DRIFT) {
      if (lua_type(L, -1) != LUA_TSTRING)
        luaL_error(L, "setting '%s' must be a string, got %s", key, luaL_typename(L, -1));
      const char *s = lua_tostring(L, -1);
      if (which == S_OUT) {
        *out = s;
      } else if (which == S_DRIFT) {
        int found = -1;
        for (int i = 0; i < 3; i++)
          if (strcmp(s, drift_names[i]) == 0) found = i;
        if (found < 0) unknown_name(L, "drift control", s, drift_names, 3);
        d->drift = (jyDrift)found;
      } else if (which == S_FORMULATION) {
        if (strcmp(s, formulation_names[0]) == 0)
          d->formulation = JY_FORMULATION_UK;
        else if (strcmp(s, formulation_names[1]) == 0)
          d->formulation = JY_FORMULATION_NP;
        else
          unknown_name(L, "formulation", s, formulation_names, 2);
      } else {
        int found = -1;
        for (int i = 0; i < 3; i++)
          if (strcmp(s, method_names[i]) == 0) found = i;
        if (found < 0) unknown_name(L, "method", s, method_names, 3);
        d->method = (jyMethod)found;
      }
    } else {
      if (lua_type(L, -1) != LUA_TNUMBER)
        luaL_error(L, "setting '%s' must be a number, got %s", key, luaL_typename(L, -1));
      double x = lua_tonumber(L, -1);
      if (!isfinite(x)) luaL_error(L, "setting '%s' must be finite, got %f", key, x);
      switch (which) {
      case S_T_START: d->t_start = x; break;
      case S_T_END: d->t_end = x; break;
      case S_DT_OUT: d->dt_out = x; break;
      case S_RTOL: d->rtol = x; break;
      case S_ATOL: d->atol = x; break;
      case S_ATOL_VELOCITY: d->atol_velocity = x; break;
      case S_MAX_STEP: d->max_step = x; break;
      case S_BAUMGARTE: d->baumgarte_rate = x; break;
      default: {
        int isint = 0;
        lua_Integer k = lua_tointegerx(L, -1, &isint);
        if (!isint) luaL_error(L, "setting 'max_steps' must be an integer, got %f", x);
        d->max_steps = (long)k;
      }
      }
    }
    lua_pop(L, 1);
  }
}

static void push_settings(lua_State *L, const jySimDef *d, const jySolverDef *solver) {
  lua_createtable(L, 0, 11 + NSOLVER);
  push_solver_settings(L, solver);
  lua_pushnumber(L, d->t_start);
  lua_setfield(L, -2, "t_start");
  lua_pushnumber(L, d->t_end);
  lua_setfield(L, -2, "t_end");
  lua_pushnumber(L, d->dt_out);
  lua_setfield(L, -2, "dt_out");
  lua_pushnumber(L, d->rtol);
  lua_setfield(L, -2, "rtol");
  lua_pushnumber(L, d->atol);
  lua_setfield(L, -2, "atol");
  lua_pushnumber(L, d->atol_velocity);
  lua_setfield(L, -2, "atol_velocity");
  lua_pushnumber(L, d->max_step);
  lua_setfield(L, -2, "max_step");
  lua_pushinteger(L, (lua_Integer)d->max_steps);
  lua_setfield(L, -2, "max_steps");
  lua_pushnumber(L, d->baumgarte_rate);
  lua_setfield(L, -2, "baumgarte_rate");
  lua_pushstring(L, method_names[d->method]);
  lua_setfield(L, -2, "method");
  lua_pushstring(L, formulation_names[d->formulation == JY_FORMULATION_NP]);
  lua_setfield(L, -2, "formulation");
  lua_pushstring(L, drift_names[d->drift]);
  lua_setfield(L, -2, "drift");
}

/* ---- system ---------------------------------------------------------------------------- */

static LSystem *check_system(lua_State *L, int idx) {
  LSystem *s = (LSystem *)luaL_checkudata(L, idx, JYL_SYSTEM);
  if (!s->sys) luaL_error(L, "the system is closed");
  return s;
}

static int sys_gc(lua_State *L) {
  LSystem *s = (LSystem *)luaL_checkudata(L, 1, JYL_SYSTEM);
  jy_system_destroy(s->sys);
  s->sys = NULL;
  return 0;
}

static void read_gravity(lua_State *L, int idx, double g[3]) {
  if (lua_type(L, idx) != LUA_TTABLE)
    luaL_error(L, "gravity must be a list of 1 to 3 numbers, got %s", luaL_typename(L, idx));
  lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
  int count = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    count++;
    lua_pop(L, 1);
  }
  if (n < 1 || n > 3 || count != n)
    luaL_error(L, "gravity must be a list of 1 to 3 numbers, e.g. {0, -9.81}");
  for (int i = 0; i < (int)n; i++) {
    if (lua_rawgeti(L, idx, i + 1) != LUA_TNUMBER)
      luaL_error(L, "gravity[%d] must be a number, got %s", i + 1, luaL_typename(L, -1));
    g[i] = lua_tonumber(L, -1);
    if (!isfinite(g[i])) luaL_error(L, "gravity[%d] must be finite", i + 1);
    lua_pop(L, 1);
  }
}

/* joinery.system([{gravity = {...}}]); upvalue 1 = env userdata */
static int l_system(lua_State *L) {
  static const char *const option_names[] = {"gravity"};
  double g[3] = {0, 0, 0};
  if (!lua_isnoneornil(L, 1)) {
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_pushnil(L);
    while (lua_next(L, 1)) {
      if (lua_type(L, -2) != LUA_TSTRING)
        luaL_error(L, "system options are keyed by name (got a %s key)", luaL_typename(L, -2));
      const char *key = lua_tostring(L, -2);
      if (strcmp(key, "gravity") == 0)
        read_gravity(L, lua_gettop(L), g);
      else
        unknown_name(L, "system option", key, option_names, 1);
      lua_pop(L, 1);
    }
  }
  LSystem *s = (LSystem *)lua_newuserdatauv(L, sizeof *s, 2);
  s->sys = NULL;
  s->def = jy_default_sim_def();
  s->solver = jy_default_solver_def();
  luaL_setmetatable(L, JYL_SYSTEM);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_setiuservalue(L, -2, 1);
  lua_newtable(L);
  lua_setiuservalue(L, -2, 2);
  s->sys = jy_system_create(upvalue_env(L));
  if (!s->sys) return luaL_error(L, "out of memory creating a system");
  jy_system_set_gravity(s->sys, g);
  return 1;
}

static void push_part(lua_State *L, int sys_idx, int part) {
  sys_idx = lua_absindex(L, sys_idx);
  LPart *p = (LPart *)lua_newuserdatauv(L, sizeof *p, 1);
  p->part = part;
  luaL_setmetatable(L, JYL_PART);
  lua_pushvalue(L, sys_idx);
  lua_setiuservalue(L, -2, 1);
}

/* Name and dimension of terminal k of a shape: a real terminal, or (k >= nterminals) the
 * 1-D terminal of coordinate k - nterminals (jy_system_coord_terminal). */
static const char *terminal_label(const jyPartShape *shape, int k) {
  if (!shape || k < 0) return "?";
  if (k < shape->nterminals) return shape->terminals[k].name;
  return k - shape->nterminals < shape->ncoords ? shape->coord_names[k - shape->nterminals] : "?";
}

static int terminal_dim(const jyPartShape *shape, int k) {
  if (!shape || k < 0) return 0;
  return k < shape->nterminals ? shape->terminals[k].dim : 1;
}

static void push_terminal(lua_State *L, int sys_idx, jyTerminalId id) {
  sys_idx = lua_absindex(L, sys_idx);
  LTerminal *t = (LTerminal *)lua_newuserdatauv(L, sizeof *t, 1);
  t->part = id.part;
  t->terminal = id.terminal;
  luaL_setmetatable(L, JYL_TERMINAL);
  lua_pushvalue(L, sys_idx);
  lua_setiuservalue(L, -2, 1);
}

/* Pushes the type name of a part of the system at sys_idx. */
static void push_part_type(lua_State *L, int sys_idx, int part) {
  lua_getiuservalue(L, sys_idx, 2);
  lua_rawgeti(L, -1, part + 1);
  lua_remove(L, -2);
}

/* Pushes the names of a shape's terminals as "a, b". */
static void push_terminal_list(lua_State *L, const jyPartShape *shape) {
  const char *names[JY_PART_MAX_TERMINALS] = {NULL};
  int n = shape->nterminals < JY_PART_MAX_TERMINALS ? shape->nterminals : JY_PART_MAX_TERMINALS;
  for (int k = 0; k < n; k++) names[k] = shape->terminals[k].name;
  if (n == 0) {
    lua_pushliteral(L, "none");
    return;
  }
  push_list(L, names, n);
}

/* The terminal at idx, which must belong to the system at sys_idx. */
static LTerminal *check_terminal_of(lua_State *L, int idx, int sys_idx) {
  LTerminal *t = (LTerminal *)luaL_checkudata(L, idx, JYL_TERMINAL);
  lua_getiuservalue(L, idx, 1);
  int same = lua_rawequal(L, -1, sys_idx);
  lua_pop(L, 1);
  if (!same) luaL_argerror(L, idx, "the terminal belongs to another system");
  return t;
}

/* Pushes "part.terminal". */
static const char *push_terminal_name(lua_State *L, const LSystem *s, int part, int terminal) {
  const jyPartShape *shape = jy_system_part_shape(s->sys, (jyPartId){part});
  const char *pname = jy_system_part_name(s->sys, (jyPartId){part});
  const char *tname = terminal_label(shape, terminal);
  return lua_pushfstring(L, "%s.%s", pname ? pname : "?", tname);
}

static int cmp_setting(const void *a, const void *b) {
  return strcmp(((const jyParamSetting *)a)->name, ((const jyParamSetting *)b)->name);
}

/* Sets init (or vel) values from the table at idx. */
static void apply_initial(lua_State *L, jySystem *sys, jyPartId id, const char *type, int idx,
                          int velocity) {
  const char *what = velocity == 1 ? "vel" : velocity == 2 ? "guess" : "init";
  idx = lua_absindex(L, idx);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    if (lua_type(L, -2) != LUA_TSTRING)
      luaL_error(L, "part '%s' (%s): %s is keyed by coordinate name (got a %s key)",
                 jy_system_part_name(sys, id), type, what, luaL_typename(L, -2));
    const char *coord = lua_tostring(L, -2);
    if (lua_type(L, -1) != LUA_TNUMBER)
      luaL_error(L, "part '%s' (%s): %s.%s must be a number, got %s",
                 jy_system_part_name(sys, id), type, what, coord, luaL_typename(L, -1));
    double x = lua_tonumber(L, -1);
    jyStatus st = velocity == 1   ? jy_system_set_velocity(sys, id, coord, x)
                  : velocity == 2 ? jy_system_guess_coord(sys, id, coord, x)
                                  : jy_system_set_coord(sys, id, coord, x);
    if (st != JY_OK) luaL_error(L, "%s", msg_or(jy_system_error(sys), st));
    lua_pop(L, 1);
  }
}

/* A system for trying a part out; __gc destroys it. */
typedef struct LScratch {
  jySystem *sys;
} LScratch;

static int scratch_gc(lua_State *L) {
  LScratch *t = (LScratch *)luaL_checkudata(L, 1, JYL_SCRATCH);
  jy_system_destroy(t->sys);
  t->sys = NULL;
  return 0;
}

/* Applies init, vel and the terminal-valued keys of params (index 4) to part id of sys:
 * glues are made only when glue != 0; with glue == 0 they are checked (the terminal exists,
 * the dimensions agree with the other terminal in the real system s). */
static void apply_extras(lua_State *L, LSystem *s, jySystem *sys, jyPartId id, const char *type,
                         int glue) {
  const char *name = jy_system_part_name(sys, id);
  const jyPartShape *shape = jy_system_part_shape(sys, id);
  if (!shape) luaL_error(L, "part '%s' (%s): no shape", name, type);
  /* Every terminal-valued key must name a terminal of the new part. */
  lua_pushnil(L);
  while (lua_next(L, 4)) {
    if (luaL_testudata(L, -1, JYL_TERMINAL)) {
      const char *key = lua_tostring(L, -2);
      jyTerminalId tid = jy_system_terminal(sys, id, key);
      if (tid.part < 0 || tid.terminal < 0) {
        push_terminal_list(L, shape);
        luaL_error(L, "part '%s' (%s) has no terminal '%s' to glue (terminals: %s)", name, type,
                   key, lua_tostring(L, -1));
      }
    }
    lua_pop(L, 1);
  }
  if (lua_getfield(L, 4, "init") == LUA_TTABLE) apply_initial(L, sys, id, type, -1, 0);
  lua_pop(L, 1);
  if (lua_getfield(L, 4, "vel") == LUA_TTABLE) apply_initial(L, sys, id, type, -1, 1);
  lua_pop(L, 1);
  if (lua_getfield(L, 4, "guess") == LUA_TTABLE) apply_initial(L, sys, id, type, -1, 2);
  lua_pop(L, 1);
  /* Glue in the order the type lists its terminals. */
  for (int t = 0; t < shape->nterminals; t++) {
    if (lua_getfield(L, 4, shape->terminals[t].name) == LUA_TUSERDATA &&
        luaL_testudata(L, -1, JYL_TERMINAL)) {
      LTerminal *other = (LTerminal *)lua_touserdata(L, -1);
      const char *gname = lua_pushfstring(L, "%s.%s", name, shape->terminals[t].name);
      if (glue) {
        jyStatus st = jy_system_glue(sys, (jyTerminalId){id.index, t},
                                     (jyTerminalId){other->part, other->terminal}, gname);
        if (st != JY_OK) luaL_error(L, "%s", msg_or(jy_system_error(sys), st));
      } else {
        const jyPartShape *oshape = jy_system_part_shape(s->sys, (jyPartId){other->part});
        int odim = terminal_dim(oshape, other->terminal);
        if (odim != shape->terminals[t].dim) {
          push_terminal_name(L, s, other->part, other->terminal);
          luaL_error(L, "glue '%s': terminals %s (%d-D) and %s (%d-D) have different dimensions",
                     gname, gname, shape->terminals[t].dim, lua_tostring(L, -1), odim);
        }
      }
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  }
}

/* sys:add(type, name[, params]) */
static int sys_add(lua_State *L) {
  LSystem *s = check_system(L, 1);
  const char *type = luaL_checkstring(L, 2);
  const char *name = luaL_checkstring(L, 3);
  if (lua_isnoneornil(L, 4)) {
    lua_settop(L, 3);
    lua_newtable(L);
  }
  luaL_checktype(L, 4, LUA_TTABLE);
  lua_settop(L, 4);

  /* Pass 1: check the value types and count the numeric parameters. */
  int n = 0;
  lua_pushnil(L);
  while (lua_next(L, 4)) {
    if (lua_type(L, -2) != LUA_TSTRING)
      luaL_error(L, "part '%s' (%s): parameters are keyed by name (got a %s key)", name, type,
                 luaL_typename(L, -2));
    const char *key = lua_tostring(L, -2);
    if (strcmp(key, "init") == 0 || strcmp(key, "vel") == 0 || strcmp(key, "guess") == 0) {
      if (lua_type(L, -1) != LUA_TTABLE)
        luaL_error(L, "part '%s' (%s): %s must be a table {coord = value, ...}, got %s", name,
                   type, key, luaL_typename(L, -1));
    } else if (lua_type(L, -1) == LUA_TNUMBER) {
      n++;
    } else if (luaL_testudata(L, -1, JYL_TERMINAL)) {
      lua_getiuservalue(L, -1, 1);
      int same = lua_rawequal(L, -1, 1);
      lua_pop(L, 1);
      if (!same)
        luaL_error(L, "part '%s' (%s): the terminal given for '%s' belongs to another system",
                   name, type, key);
    } else {
      luaL_error(L, "part '%s' (%s): parameter '%s' must be a number, got %s", name, type, key,
                 luaL_typename(L, -1));
    }
    lua_pop(L, 1);
  }

  /* Pass 2: the numeric parameters, sorted by name so that the outcome does not depend on
   * the table's iteration order. */
  jyParamSetting *set =
    (jyParamSetting *)lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof *set, 0); /* 5 */
  int k = 0;
  lua_pushnil(L);
  while (lua_next(L, 4)) {
    if (lua_type(L, -1) == LUA_TNUMBER) {
      set[k].name = lua_tostring(L, -2); /* a string key: no conversion, kept by the table */
      set[k].value = lua_tonumber(L, -1);
      k++;
    }
    lua_pop(L, 1);
  }
  qsort(set, (size_t)n, sizeof *set, cmp_setting);

  /* Try the part in a scratch system first, so that a bad init, vel or terminal key fails
   * before the real system changes. */
  LScratch *trial = (LScratch *)lua_newuserdatauv(L, sizeof *trial, 0); /* 6 */
  trial->sys = NULL;
  luaL_setmetatable(L, JYL_SCRATCH);
  lua_getiuservalue(L, 1, 1);
  trial->sys = jy_system_create(((LEnv *)lua_touserdata(L, -1))->env);
  lua_pop(L, 1);
  if (!trial->sys) return luaL_error(L, "out of memory creating a system");
  jyPartId tid = jy_system_add_part(trial->sys, type, name, set, n);
  if (tid.index < 0)
    return luaL_error(L, "%s", msg_or(jy_system_error(trial->sys), JY_ERR_INVALID));
  apply_extras(L, s, trial->sys, tid, type, 0);
  jy_system_destroy(trial->sys);
  trial->sys = NULL;

  jyPartId id = jy_system_add_part(s->sys, type, name, set, n);
  if (id.index < 0) return luaL_error(L, "%s", msg_or(jy_system_error(s->sys), JY_ERR_INVALID));
  lua_getiuservalue(L, 1, 2);
  lua_pushstring(L, type);
  lua_rawseti(L, -2, id.index + 1);
  lua_pop(L, 1);
  apply_extras(L, s, s->sys, id, type, 1);
  push_part(L, 1, id.index);
  return 1;
}

/* sys:glue(a, b[, name]) */
static int sys_glue(lua_State *L) {
  LSystem *s = check_system(L, 1);
  LTerminal *a = check_terminal_of(L, 2, 1);
  LTerminal *b = check_terminal_of(L, 3, 1);
  const char *name = luaL_optstring(L, 4, NULL);
  if (a->part == b->part && a->terminal == b->terminal)
    return luaL_error(L, "cannot glue terminal %s to itself",
                      push_terminal_name(L, s, a->part, a->terminal));
  jyStatus st = jy_system_glue(s->sys, (jyTerminalId){a->part, a->terminal},
                               (jyTerminalId){b->part, b->terminal}, name);
  if (st != JY_OK) return luaL_error(L, "%s", msg_or(jy_system_error(s->sys), st));
  return 0;
}

/* sys:settings([t]) */
static int sys_settings(lua_State *L) {
  LSystem *s = check_system(L, 1);
  if (lua_isnoneornil(L, 2)) {
    push_settings(L, &s->def, &s->solver);
    return 1;
  }
  jySimDef d = s->def;
  jySolverDef solver = s->solver;
  read_settings(L, 2, &d, &solver, NULL);
  s->def = d;
  s->solver = solver;
  lua_settop(L, 1);
  return 1;
}

/* Compiles the system at idx; pushes the model. */
static LModel *compile_system(lua_State *L, int idx, const jySolverDef *def) {
  LSystem *s = check_system(L, idx);
  idx = lua_absindex(L, idx);
  LModel *m = (LModel *)lua_newuserdatauv(L, sizeof *m, 2);
  m->model = NULL;
  m->eval = NULL;
  m->def = s->def;
  m->nsims = 0;
  m->closed = 0;
  luaL_setmetatable(L, JYL_MODEL);
  lua_getiuservalue(L, idx, 1);
  lua_setiuservalue(L, -2, 1);
  lua_getiuservalue(L, idx, 2); /* keeps the system's sys:channel functions (lua/channel.c) */
  lua_setiuservalue(L, -2, 2);
  jyStatus st = jy_model_compile(s->sys, def, &m->model);
  if (st != JY_OK) {
    m->model = NULL;
    luaL_error(L, "%s", msg_or(jy_system_error(s->sys), st));
  }
  return m;
}

/* sys:compile([solver]): the solver settings over those of sys:settings */
static int sys_compile(lua_State *L) {
  LSystem *s = check_system(L, 1);
  jySolverDef def = s->solver;
  if (!lua_isnoneornil(L, 2)) read_solver(L, 2, &def);
  lua_settop(L, 1);
  compile_system(L, 1, &def);
  return 1;
}

static int run_simulation(lua_State *L, int model_idx, const jySimDef *def, const char *out);

/* sys:simulate([opts]) */
static int sys_simulate(lua_State *L) {
  LSystem *s = check_system(L, 1);
  jySimDef d = s->def;
  jySolverDef solver = s->solver;
  const char *out = NULL;
  if (!lua_isnoneornil(L, 2)) read_settings(L, 2, &d, &solver, &out);
  lua_settop(L, 2);
  compile_system(L, 1, &solver); /* index 3 */
  return run_simulation(L, 3, &d, out);
}

/* sys:part(name) */
static int sys_part(lua_State *L) {
  LSystem *s = check_system(L, 1);
  jyPartId id = jy_system_find_part(s->sys, luaL_checkstring(L, 2));
  if (id.index < 0) {
    lua_pushnil(L);
    return 1;
  }
  push_part(L, 1, id.index);
  return 1;
}

/* sys:parts() */
static int sys_parts(lua_State *L) {
  LSystem *s = check_system(L, 1);
  int n = jy_system_num_parts(s->sys);
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    lua_pushstring(L, jy_system_part_name(s->sys, (jyPartId){i}));
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

static int sys_tostring(lua_State *L) {
  LSystem *s = (LSystem *)luaL_checkudata(L, 1, JYL_SYSTEM);
  if (!s->sys)
    lua_pushliteral(L, "joinery.System (closed)");
  else
    lua_pushfstring(L, "joinery.System (%d parts)", jy_system_num_parts(s->sys));
  return 1;
}

/* ---- parts and terminals --------------------------------------------------------------- */

/* The open system behind a part or terminal at idx; pushes the system userdata. */
static LSystem *owner_system(lua_State *L, int idx) {
  lua_getiuservalue(L, idx, 1);
  LSystem *s = (LSystem *)lua_touserdata(L, -1);
  if (!s || !s->sys) luaL_error(L, "the system is closed");
  return s;
}

static int part_index(lua_State *L) {
  LPart *p = (LPart *)luaL_checkudata(L, 1, JYL_PART);
  if (lua_type(L, 2) != LUA_TSTRING)
    return luaL_error(L, "a part is indexed by terminal name, not by a %s", luaL_typename(L, 2));
  const char *key = lua_tostring(L, 2);
  LSystem *s = owner_system(L, 1); /* index 3 */
  jyPartId id = {p->part};
  if (strcmp(key, "name") == 0) {
    lua_pushstring(L, jy_system_part_name(s->sys, id));
    return 1;
  }
  if (strcmp(key, "type") == 0) {
    push_part_type(L, 3, p->part);
    return 1;
  }
  jyTerminalId t = jy_system_terminal(s->sys, id, key);
  if (t.part < 0 || t.terminal < 0) t = jy_system_coord_terminal(s->sys, id, key);
  if (t.part < 0 || t.terminal < 0) {
    const jyPartShape *shape = jy_system_part_shape(s->sys, id);
    push_part_type(L, 3, p->part);
    const char *names[JY_PART_MAX_TERMINALS] = {NULL};
    int n = shape ? shape->nterminals : 0;
    if (n > JY_PART_MAX_TERMINALS) n = JY_PART_MAX_TERMINALS;
    for (int k = 0; k < n; k++) names[k] = shape->terminals[k].name;
    const char *near = jy_nearest_name(key, names, n);
    if (shape)
      push_terminal_list(L, shape);
    else
      lua_pushliteral(L, "none");
    return luaL_error(L, "part '%s' (%s) has no terminal or coordinate '%s'%s%s%s (terminals: %s)",
                      jy_system_part_name(s->sys, id), lua_tostring(L, -2), key,
                      near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "",
                      lua_tostring(L, -1));
  }
  push_terminal(L, 3, t);
  return 1;
}

static int part_tostring(lua_State *L) {
  LPart *p = (LPart *)luaL_checkudata(L, 1, JYL_PART);
  lua_getiuservalue(L, 1, 1);
  LSystem *s = (LSystem *)lua_touserdata(L, -1);
  if (!s || !s->sys) {
    lua_pushliteral(L, "joinery.Part (system closed)");
    return 1;
  }
  push_part_type(L, 2, p->part);
  lua_pushfstring(L, "joinery.Part %s (%s)", jy_system_part_name(s->sys, (jyPartId){p->part}),
                  lua_tostring(L, -1));
  return 1;
}

static int terminal_index(lua_State *L) {
  LTerminal *t = (LTerminal *)luaL_checkudata(L, 1, JYL_TERMINAL);
  const char *key = luaL_checkstring(L, 2);
  LSystem *s = owner_system(L, 1); /* index 3 */
  const jyPartShape *shape = jy_system_part_shape(s->sys, (jyPartId){t->part});
  if (strcmp(key, "name") == 0) {
    push_terminal_name(L, s, t->part, t->terminal);
  } else if (strcmp(key, "terminal") == 0) {
    lua_pushstring(L, terminal_label(shape, t->terminal));
  } else if (strcmp(key, "dim") == 0) {
    lua_pushinteger(L, terminal_dim(shape, t->terminal));
  } else if (strcmp(key, "part") == 0) {
    push_part(L, 3, t->part);
  } else {
    return luaL_error(L, "a terminal has no field '%s' (fields: name, terminal, dim, part)", key);
  }
  return 1;
}

static int terminal_eq(lua_State *L) {
  LTerminal *a = (LTerminal *)luaL_testudata(L, 1, JYL_TERMINAL);
  LTerminal *b = (LTerminal *)luaL_testudata(L, 2, JYL_TERMINAL);
  int eq = 0;
  if (a && b && a->part == b->part && a->terminal == b->terminal) {
    lua_getiuservalue(L, 1, 1);
    lua_getiuservalue(L, 2, 1);
    eq = lua_rawequal(L, -1, -2);
  }
  lua_pushboolean(L, eq);
  return 1;
}

static int terminal_tostring(lua_State *L) {
  LTerminal *t = (LTerminal *)luaL_checkudata(L, 1, JYL_TERMINAL);
  lua_getiuservalue(L, 1, 1);
  LSystem *s = (LSystem *)lua_touserdata(L, -1);
  if (!s || !s->sys) {
    lua_pushliteral(L, "joinery.Terminal (system closed)");
    return 1;
  }
  const jyPartShape *shape = jy_system_part_shape(s->sys, (jyPartId){t->part});
  push_terminal_name(L, s, t->part, t->terminal);
  lua_pushfstring(L, "joinery.Terminal %s (dim %d)", lua_tostring(L, -1),
                  terminal_dim(shape, t->terminal));
  return 1;
}

/* ---- model ----------------------------------------------------------------------------- */

static void model_release(LModel *m) {
  jy_eval_destroy(m->eval);
  m->eval = NULL;
  jy_model_destroy(m->model);
  m->model = NULL;
}

static LModel *check_model(lua_State *L, int idx) {
  LModel *m = (LModel *)luaL_checkudata(L, idx, JYL_MODEL);
  if (!m->model || m->closed) luaL_error(L, "the model is closed");
  return m;
}

/* __gc and __close; model:close() */
static int model_gc(lua_State *L) {
  LModel *m = (LModel *)luaL_checkudata(L, 1, JYL_MODEL);
  m->closed = 1;
  jy_eval_destroy(m->eval);
  m->eval = NULL;
  if (m->nsims == 0) model_release(m);
  return 0;
}

static jyEval *model_eval(lua_State *L, LModel *m) {
  if (!m->eval) {
    m->eval = jy_eval_create(m->model);
    if (!m->eval) luaL_error(L, "out of memory creating an evaluator");
  }
  return m->eval;
}

typedef const char *(*NameFn)(const jyModel *, int);

static int push_names(lua_State *L, const jyModel *model, int n, NameFn fn) {
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    lua_pushstring(L, fn(model, i));
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

static int model_coords(lua_State *L) {
  LModel *m = check_model(L, 1);
  return push_names(L, m->model, jy_model_num_coords(m->model), jy_model_coord_name);
}

static int model_channels(lua_State *L) {
  LModel *m = check_model(L, 1);
  return push_names(L, m->model, jy_model_num_channels(m->model), jy_model_channel_name);
}

static int model_rows(lua_State *L) {
  LModel *m = check_model(L, 1);
  return push_names(L, m->model, jy_model_num_rows(m->model), jy_model_row_name);
}

static int model_num_coords(lua_State *L) {
  lua_pushinteger(L, jy_model_num_coords(check_model(L, 1)->model));
  return 1;
}

static int model_num_rows(lua_State *L) {
  lua_pushinteger(L, jy_model_num_rows(check_model(L, 1)->model));
  return 1;
}

static int model_num_channels(lua_State *L) {
  lua_pushinteger(L, jy_model_num_channels(check_model(L, 1)->model));
  return 1;
}

static int model_initial(lua_State *L) {
  LModel *m = check_model(L, 1);
  int n = jy_model_num_coords(m->model);
  push_array(L, jy_model_initial_q(m->model), n);
  push_array(L, jy_model_initial_v(m->model), n);
  return 2;
}

/* model:moved() -> array of {name = "p.x" | "der(p.x)", from, to, set, follows_glue, warn}:
 * the initial values the consistent state moved beyond the assembly tolerance; warn for a
 * value the script set or one left unset that does not just follow its glue. */
static int model_moved(lua_State *L) {
  const jyModel *model = check_model(L, 1)->model;
  int count = jy_model_num_moved(model);
  lua_createtable(L, count, 0);
  for (int i = 0; i < count; i++) {
    const jyMovedValue *mv = jy_model_moved(model, i);
    const char *coord = jy_model_coord_name(model, mv->coord);
    lua_createtable(L, 0, 6);
    if (mv->velocity) lua_pushfstring(L, "der(%s)", coord);
    else lua_pushstring(L, coord);
    lua_setfield(L, -2, "name");
    lua_pushnumber(L, mv->from);
    lua_setfield(L, -2, "from");
    lua_pushnumber(L, mv->to);
    lua_setfield(L, -2, "to");
    lua_pushboolean(L, mv->set);
    lua_setfield(L, -2, "set");
    lua_pushboolean(L, mv->follows_glue);
    lua_setfield(L, -2, "follows_glue");
    lua_pushboolean(L, mv->set || !mv->follows_glue);
    lua_setfield(L, -2, "warn");
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

static int model_report(lua_State *L) {
  const char *r = jy_model_report(check_model(L, 1)->model);
  lua_pushstring(L, r ? r : "");
  return 1;
}

/* Pushes {channel name = value} of the n channel values in x. */
static void push_channel_table(lua_State *L, const jyModel *model, const double *x) {
  int nch = jy_model_num_channels(model);
  lua_createtable(L, 0, nch);
  for (int i = 0; i < nch; i++) {
    lua_pushnumber(L, x[i]);
    lua_setfield(L, -2, jy_model_channel_name(model, i));
  }
}

/* model:acceleration(q, v[, t]) */
static int model_acceleration(lua_State *L) {
  LModel *m = check_model(L, 1);
  int n = jy_model_num_coords(m->model);
  double t = luaL_optnumber(L, 4, 0.0);
  lua_settop(L, 4);
  double *buf = scratch(L, 3 * (size_t)n);
  read_vector(L, 2, n, buf, "q");
  read_vector(L, 3, n, buf + n, "v");
  jyEval *e = model_eval(L, m);
  jyStatus st = jy_eval_acceleration(e, buf, buf + n, t, buf + 2 * n);
  if (st != JY_OK) return luaL_error(L, "%s", msg_or(jy_eval_error(e), st));
  push_array(L, buf + 2 * n, n);
  return 1;
}

/* model:evaluate(q, v[, t]) */
static int model_evaluate(lua_State *L) {
  LModel *m = check_model(L, 1);
  int n = jy_model_num_coords(m->model);
  int nch = jy_model_num_channels(m->model);
  double t = luaL_optnumber(L, 4, 0.0);
  lua_settop(L, 4);
  double *buf = scratch(L, 2 * (size_t)n + (size_t)nch);
  read_vector(L, 2, n, buf, "q");
  read_vector(L, 3, n, buf + n, "v");
  jyEval *e = model_eval(L, m);
  jyStatus st = jy_eval_channels(e, buf, buf + n, t, buf + 2 * n);
  if (st != JY_OK) return luaL_error(L, "%s", msg_or(jy_eval_error(e), st));
  push_channel_table(L, m->model, buf + 2 * n);
  return 1;
}

/* ---- simulations ----------------------------------------------------------------------- */

static int sim_gc(lua_State *L) {
  LSim *sm = (LSim *)luaL_checkudata(L, 1, JYL_SIM);
  if (!sm->sim) return 0;
  jy_sim_destroy(sm->sim);
  sm->sim = NULL;
  lua_getiuservalue(L, 1, 1);
  LModel *m = (LModel *)lua_touserdata(L, -1);
  if (m) {
    m->nsims--;
    if (m->closed && m->nsims == 0) model_release(m);
  }
  return 0;
}

static LSim *check_sim(lua_State *L, int idx) {
  LSim *sm = (LSim *)luaL_checkudata(L, idx, JYL_SIM);
  if (!sm->sim) luaL_error(L, "the simulation is closed");
  return sm;
}

/* Pushes a Sim of the model at model_idx (raises with the engine's message). */
static LSim *new_sim(lua_State *L, int model_idx, const jySimDef *def) {
  model_idx = lua_absindex(L, model_idx);
  LModel *m = check_model(L, model_idx);
  LSim *sm = (LSim *)lua_newuserdatauv(L, sizeof *sm, 1);
  sm->sim = NULL;
  luaL_setmetatable(L, JYL_SIM);
  lua_pushvalue(L, model_idx);
  lua_setiuservalue(L, -2, 1);
  jyStatus st = JY_OK;
  jySim *sim = jy_sim_create(m->model, def, &st);
  if (sim && st == JY_OK) {
    sm->sim = sim;
    m->nsims++;
    return sm;
  }
  lua_pushstring(L, msg_or(sim ? jy_sim_error(sim) : NULL, st != JY_OK ? st : JY_ERR_NOMEM));
  jy_sim_destroy(sim);
  luaL_error(L, "%s", lua_tostring(L, -1));
  return NULL;
}

static int rows_gc(lua_State *L) {
  LRows *r = (LRows *)luaL_checkudata(L, 1, JYL_ROWS);
  free(r->data);
  r->data = NULL;
  return 0;
}

/* Room for w more doubles; 0 on success, else r->failed = 1. */
static int rows_reserve(LRows *r, size_t w) {
  if (r->cap - r->n >= w) return 0;
  size_t cap = r->cap ? r->cap : 256 * (size_t)(r->nch > 0 ? r->nch : 1);
  while (cap - r->n < w) {
    if (cap > SIZE_MAX / 2 / sizeof(double)) return r->failed = 1;
    cap *= 2;
  }
  double *p = (double *)realloc(r->data, cap * sizeof *p);
  if (!p) return r->failed = 1;
  r->data = p;
  r->cap = cap;
  return 0;
}

/* The row sink: copies the row; never calls Lua. */
static int rows_sink(void *ud, const double *row, int nchannels) {
  LRows *r = (LRows *)ud;
  if (nchannels != r->nch) return r->failed = 2;
  if (rows_reserve(r, (size_t)nchannels)) return 1;
  memcpy(r->data + r->n, row, (size_t)nchannels * sizeof *row);
  r->n += (size_t)nchannels;
  if (r->progress) {
    double now = now_seconds();
    if (now >= r->next_report) {
      fprintf(stderr, "\r  t = %.6g of %.6g s (%.0f s so far)", row[0], r->t_end, now - r->t0);
      fflush(stderr);
      r->reported = 1;
      r->next_report = now + 0.5;
    }
  }
  return 0;
}

static void push_stats(lua_State *L, const jySim *sim) {
  jySimStats st = jy_sim_stats(sim);
  lua_createtable(L, 0, 5);
  lua_pushinteger(L, (lua_Integer)st.steps);
  lua_setfield(L, -2, "steps");
  lua_pushinteger(L, (lua_Integer)st.rhs_evals);
  lua_setfield(L, -2, "rhs_evals");
  lua_pushinteger(L, (lua_Integer)st.error_test_fails);
  lua_setfield(L, -2, "error_test_fails");
  lua_pushinteger(L, (lua_Integer)st.nonlinear_fails);
  lua_setfield(L, -2, "nonlinear_fails");
  lua_pushinteger(L, (lua_Integer)st.jac_evals);
  lua_setfield(L, -2, "jac_evals");
  lua_pushinteger(L, (lua_Integer)st.restarts);
  lua_setfield(L, -2, "restarts");
}

/* Runs a fresh simulation of the model at model_idx and pushes the result table. */
static int run_simulation(lua_State *L, int model_idx, const jySimDef *def, const char *out) {
  model_idx = lua_absindex(L, model_idx);
  LModel *m = check_model(L, model_idx);
  int nch = jy_model_num_channels(m->model);
  LSim *sm = new_sim(L, model_idx, def);
  int sim_idx = lua_gettop(L);
  LRows *r = (LRows *)lua_newuserdatauv(L, sizeof *r, 0);
  memset(r, 0, sizeof *r);
  r->nch = nch;
  luaL_setmetatable(L, JYL_ROWS);
  double t0 = now_seconds();
  r->t0 = t0;
  r->t_end = def->t_end;
  r->progress = isatty(STDERR_FILENO);
  r->next_report = t0 + 1.0; /* runs shorter than a second stay quiet */
  jyStatus st = out ? jy_sim_write_csv(sm->sim, out, rows_sink, r)
                    : jy_sim_run(sm->sim, rows_sink, r);
  double seconds = now_seconds() - t0;
  if (r->reported) fprintf(stderr, "\r%40s\r", "");
  if (r->failed == 1) return luaL_error(L, "out of memory collecting the output rows");
  if (r->failed == 2) return luaL_error(L, "the engine gave rows of the wrong width");
  if (st != JY_OK) return luaL_error(L, "%s", msg_or(jy_sim_error(sm->sim), st));

  lua_createtable(L, 0, nch + 8);
  int res = lua_gettop(L);
  push_names(L, m->model, nch, jy_model_channel_name);
  lua_setfield(L, res, "channels");
  size_t nrows = r->n / (size_t)nch;
  for (int c = 0; c < nch; c++) {
    lua_createtable(L, (int)nrows, 0);
    for (size_t i = 0; i < nrows; i++) {
      lua_pushnumber(L, r->data[i * (size_t)nch + (size_t)c]);
      lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, res, jy_model_channel_name(m->model, c));
  }
  free(r->data);
  r->data = NULL;
  lua_pushinteger(L, (lua_Integer)nrows);
  lua_setfield(L, res, "rows");
  if (out) {
    lua_pushstring(L, out);
    lua_setfield(L, res, "out");
  }
  const char *report = jy_model_report(m->model);
  lua_pushstring(L, report ? report : "");
  lua_setfield(L, res, "report");
  push_stats(L, sm->sim);
  lua_setfield(L, res, "stats");
  lua_pushnumber(L, seconds);
  lua_setfield(L, res, "seconds");
  lua_pushvalue(L, model_idx);
  lua_setfield(L, res, "model");
  /* Release the integrator now rather than at the next collection. */
  lua_pushcfunction(L, sim_gc);
  lua_pushvalue(L, sim_idx);
  lua_call(L, 1, 0);
  return 1;
}

/* model:simulate([opts]) */
static int model_simulate(lua_State *L) {
  LModel *m = check_model(L, 1);
  jySimDef d = m->def;
  const char *out = NULL;
  if (!lua_isnoneornil(L, 2)) read_settings(L, 2, &d, NULL, &out);
  lua_settop(L, 2);
  return run_simulation(L, 1, &d, out);
}

/* model:sim([opts]) */
static int model_sim(lua_State *L) {
  LModel *m = check_model(L, 1);
  jySimDef d = m->def;
  if (!lua_isnoneornil(L, 2)) read_settings(L, 2, &d, NULL, NULL);
  lua_settop(L, 2);
  new_sim(L, 1, &d);
  return 1;
}

static int model_tostring(lua_State *L) {
  LModel *m = (LModel *)luaL_checkudata(L, 1, JYL_MODEL);
  if (!m->model || m->closed)
    lua_pushliteral(L, "joinery.Model (closed)");
  else
    lua_pushfstring(L, "joinery.Model (%d coordinates, %d constraint rows)",
                    jy_model_num_coords(m->model), jy_model_num_rows(m->model));
  return 1;
}

/* The model of a sim (pushed). */
static LModel *sim_model(lua_State *L, int idx) {
  lua_getiuservalue(L, idx, 1);
  return (LModel *)lua_touserdata(L, -1);
}

static int sim_advance(lua_State *L) {
  LSim *sm = check_sim(L, 1);
  double t = luaL_checknumber(L, 2);
  jyStatus st = jy_sim_advance(sm->sim, t);
  if (st != JY_OK) return luaL_error(L, "%s", msg_or(jy_sim_error(sm->sim), st));
  lua_pushnumber(L, jy_sim_time(sm->sim));
  return 1;
}

static int sim_time(lua_State *L) {
  lua_pushnumber(L, jy_sim_time(check_sim(L, 1)->sim));
  return 1;
}

static int sim_state(lua_State *L) {
  LSim *sm = check_sim(L, 1);
  int n = jy_model_num_coords(sim_model(L, 1)->model);
  push_array(L, jy_sim_q(sm->sim), n);
  push_array(L, jy_sim_v(sm->sim), n);
  return 2;
}

static int sim_set_state(lua_State *L) {
  LSim *sm = check_sim(L, 1);
  double t = luaL_checknumber(L, 2);
  lua_settop(L, 4);
  int n = jy_model_num_coords(sim_model(L, 1)->model);
  double *buf = scratch(L, 2 * (size_t)n);
  read_vector(L, 3, n, buf, "q");
  read_vector(L, 4, n, buf + n, "v");
  jyStatus st = jy_sim_set_state(sm->sim, t, buf, buf + n);
  if (st != JY_OK) return luaL_error(L, "%s", msg_or(jy_sim_error(sm->sim), st));
  return 0;
}

static int sim_channels(lua_State *L) {
  LSim *sm = check_sim(L, 1);
  LModel *m = sim_model(L, 1);
  double *buf = scratch(L, (size_t)jy_model_num_channels(m->model));
  jyStatus st = jy_sim_channels(sm->sim, buf);
  if (st != JY_OK) return luaL_error(L, "%s", msg_or(jy_sim_error(sm->sim), st));
  push_channel_table(L, m->model, buf);
  return 1;
}

static int sim_stats(lua_State *L) {
  push_stats(L, check_sim(L, 1)->sim);
  return 1;
}

static int sim_tostring(lua_State *L) {
  LSim *sm = (LSim *)luaL_checkudata(L, 1, JYL_SIM);
  if (!sm->sim)
    lua_pushliteral(L, "joinery.Sim (closed)");
  else
    lua_pushfstring(L, "joinery.Sim (t = %f)", jy_sim_time(sm->sim));
  return 1;
}

/* ---- module functions ------------------------------------------------------------------ */

/* joinery.types() */
static int l_types(lua_State *L) {
  jyEnv *env = upvalue_env(L);
  int n = jy_env_num_types(env);
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    lua_pushstring(L, jy_env_type(env, i)->name);
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

static const char *domain_name(jyParamDomain d) {
  switch (d) {
  case JY_PARAM_POSITIVE: return "positive";
  case JY_PARAM_NONNEGATIVE: return "nonnegative";
  case JY_PARAM_DIMENSION: return "dimension";
  default: return "real";
  }
}

static void push_string_list(lua_State *L, const char *const *names, int n) {
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    lua_pushstring(L, names[i]);
    lua_rawseti(L, -2, i + 1);
  }
}

/* joinery.describe(type) */
static int l_describe(lua_State *L) {
  jyEnv *env = upvalue_env(L);
  const char *name = luaL_checkstring(L, 1);
  const jyPartType *type = jy_env_find_type(env, name);
  if (!type) {
    int n = jy_env_num_types(env);
    const char **names =
      (const char **)lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof *names, 0);
    for (int i = 0; i < n; i++) names[i] = jy_env_type(env, i)->name;
    return unknown_name(L, "part type", name, names, n);
  }
  lua_createtable(L, 0, 8);
  int res = lua_gettop(L);
  lua_pushstring(L, type->name);
  lua_setfield(L, res, "name");
  lua_pushstring(L, type->doc ? type->doc : "");
  lua_setfield(L, res, "doc");
  double *defaults = scratch(L, (size_t)(type->nparams > 0 ? type->nparams : 1));
  lua_createtable(L, type->nparams, 0);
  for (int i = 0; i < type->nparams; i++) {
    const jyParamSpec *p = &type->params[i];
    defaults[i] = p->default_value;
    lua_createtable(L, 0, 5);
    lua_pushstring(L, p->name);
    lua_setfield(L, -2, "name");
    lua_pushnumber(L, p->default_value);
    lua_setfield(L, -2, "default");
    lua_pushstring(L, p->unit ? p->unit : "");
    lua_setfield(L, -2, "unit");
    lua_pushstring(L, p->doc ? p->doc : "");
    lua_setfield(L, -2, "doc");
    lua_pushstring(L, domain_name(p->domain));
    lua_setfield(L, -2, "domain");
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, res, "params");

  jyPartShape *shape = (jyPartShape *)lua_newuserdatauv(L, sizeof *shape, 0);
  memset(shape, 0, sizeof *shape);
  char error[256] = "";
  if (type->shape && type->shape(type, defaults, shape, error, sizeof error) == 0) {
    lua_createtable(L, shape->nterminals, 0);
    for (int k = 0; k < shape->nterminals; k++) {
      lua_createtable(L, 0, 2);
      lua_pushstring(L, shape->terminals[k].name);
      lua_setfield(L, -2, "name");
      lua_pushinteger(L, shape->terminals[k].dim);
      lua_setfield(L, -2, "dim");
      lua_rawseti(L, -2, k + 1);
    }
    lua_setfield(L, res, "terminals");
    push_string_list(L, shape->coord_names, shape->ncoords);
    lua_setfield(L, res, "coords");
    push_string_list(L, shape->row_names, shape->nrows);
    lua_setfield(L, res, "rows");
    push_string_list(L, shape->output_names, shape->noutputs);
    lua_setfield(L, res, "outputs");
  } else {
    lua_pushstring(L, error[0] ? error : "the default parameters make no part");
    lua_setfield(L, res, "shape_error");
  }
  lua_settop(L, res);
  return 1;
}

/* ---- registration ---------------------------------------------------------------------- */

static void new_class(lua_State *L, const char *name, const luaL_Reg *meta,
                      const luaL_Reg *methods) {
  if (!luaL_newmetatable(L, name)) { /* opened before in this state */
    lua_pop(L, 1);
    return;
  }
  luaL_setfuncs(L, meta, 0);
  if (methods) {
    lua_newtable(L);
    luaL_setfuncs(L, methods, 0);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
}

static const luaL_Reg env_meta[] = {{"__gc", env_gc}, {NULL, NULL}};

static const luaL_Reg system_meta[] = {
  {"__gc", sys_gc}, {"__close", sys_gc}, {"__tostring", sys_tostring}, {NULL, NULL}};
static const luaL_Reg system_methods[] = {
  {"add", sys_add},         {"glue", sys_glue},   {"settings", sys_settings},
  {"compile", sys_compile}, {"simulate", sys_simulate}, {"part", sys_part},
  {"parts", sys_parts},     {"close", sys_gc},    {NULL, NULL}};

static const luaL_Reg part_meta[] = {
  {"__index", part_index}, {"__tostring", part_tostring}, {NULL, NULL}};

static const luaL_Reg terminal_meta[] = {{"__index", terminal_index},
                                         {"__eq", terminal_eq},
                                         {"__tostring", terminal_tostring},
                                         {NULL, NULL}};

static const luaL_Reg model_meta[] = {
  {"__gc", model_gc}, {"__close", model_gc}, {"__tostring", model_tostring}, {NULL, NULL}};
static const luaL_Reg model_methods[] = {{"coords", model_coords},
                                         {"channels", model_channels},
                                         {"rows", model_rows},
                                         {"num_coords", model_num_coords},
                                         {"num_rows", model_num_rows},
                                         {"num_channels", model_num_channels},
                                         {"initial", model_initial},
                                         {"report", model_report},
                                         {"moved", model_moved},
                                         {"acceleration", model_acceleration},
                                         {"evaluate", model_evaluate},
                                         {"simulate", model_simulate},
                                         {"sim", model_sim},
                                         {"close", model_gc},
                                         {NULL, NULL}};

static const luaL_Reg sim_meta[] = {
  {"__gc", sim_gc}, {"__close", sim_gc}, {"__tostring", sim_tostring}, {NULL, NULL}};
static const luaL_Reg sim_methods[] = {
  {"advance", sim_advance}, {"time", sim_time},   {"state", sim_state},
  {"set_state", sim_set_state}, {"channels", sim_channels}, {"stats", sim_stats},
  {"close", sim_gc},        {NULL, NULL}};

static const luaL_Reg rows_meta[] = {{"__gc", rows_gc}, {NULL, NULL}};
static const luaL_Reg scratch_meta[] = {{"__gc", scratch_gc}, {NULL, NULL}};

/* Module functions; upvalue 1 = the env userdata. */
static const luaL_Reg module_funcs[] = {
  {"system", l_system}, {"types", l_types}, {"describe", l_describe}, {NULL, NULL}};

int luaopen_joinery(lua_State *L) {
  luaL_checkversion(L);
  new_class(L, JYL_ENV, env_meta, NULL);
  new_class(L, JYL_SYSTEM, system_meta, system_methods);
  new_class(L, JYL_PART, part_meta, NULL);
  new_class(L, JYL_TERMINAL, terminal_meta, NULL);
  new_class(L, JYL_MODEL, model_meta, model_methods);
  new_class(L, JYL_SIM, sim_meta, sim_methods);
  new_class(L, JYL_ROWS, rows_meta, NULL);
  new_class(L, JYL_SCRATCH, scratch_meta, NULL);

  LEnv *e = (LEnv *)lua_newuserdatauv(L, sizeof *e, 0);
  e->env = NULL;
  luaL_setmetatable(L, JYL_ENV);
  e->env = jy_env_create(NULL);
  if (!e->env) return luaL_error(L, "joinery: out of memory creating the environment");
  jyStatus st = jy_components_register(e->env);
  if (st != JY_OK)
    return luaL_error(L, "joinery: registering the built-in parts failed: %s",
                      msg_or(jy_env_error(e->env), st));

  luaL_newlibtable(L, module_funcs);
  lua_pushvalue(L, -2);
  luaL_setfuncs(L, module_funcs, 1);
  lua_pushliteral(L, JOINERY_VERSION);
  lua_setfield(L, -2, "version");
  jyl_open_math(L);
  jyl_open_plugin(L, -2, &e->env); /* lua/plugin.c: load_plugin, check_part */
  jyl_open_parts(L, -2); /* lua/luapart.c: part_type, eval_part, Jets in joinery.math */
  jyl_open_channel(L);   /* lua/channel.c: sys:channel */
  jyl_open_prelude(L, -1); /* lua/prelude.c: sys:constrain, sys:load, body:point, sys:pin ... */
  return 1;
}
