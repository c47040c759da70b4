/* lua/settings.c — the run settings (jySimDef) and solver settings (jySolverDef): their names,
 * kinds and choices, written once, and reading and writing them as Lua tables. The bindings
 * (sys:settings, sys:compile, sys:simulate, model:simulate, model:sim) and `joinery run`'s
 * flags (lua/main.c) all go through the tables here, so a new method or drift control is one
 * line in one place. */
#include "settings.h"

#include <math.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "binding_private.h"
#include "sandbox.h"

/* ---- run settings ---------------------------------------------------------------------- */

static const jylChoice method_choices[] = {{"adams", JY_METHOD_ADAMS, NULL},
                                           {"bdf", JY_METHOD_BDF, "stiff, singular configurations"},
                                           {"erk", JY_METHOD_ERK, NULL}};
static const jylChoice formulation_choices[] = {
  {"udwadia-kalaba", JY_FORMULATION_UK, NULL},
  {"natsiavas-paraskevopoulos", JY_FORMULATION_NP, NULL}};
static const jylChoice drift_choices[] = {{"baumgarte", JY_DRIFT_BAUMGARTE, NULL},
                                          {"projection", JY_DRIFT_PROJECTION, NULL},
                                          {"none", JY_DRIFT_NONE, NULL}};
#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)
#define NEWTON_AUTO_USAGE \
  "bdf's linear solver: dense up to " STRINGIFY(JY_NEWTON_DENSE_MAX_STATES) " states, krylov above"
static const jylChoice newton_choices[] = {{"auto", JY_NEWTON_AUTO, NEWTON_AUTO_USAGE},
                                           {"dense", JY_NEWTON_DENSE, NULL},
                                           {"krylov", JY_NEWTON_KRYLOV, NULL}};
#define CHOICES(list) list, (int)(sizeof list / sizeof list[0])
enum { MAX_CHOICES = 8 };

const jylSetting jyl_settings[JYL_NUM_SETTINGS] = {
  [JYL_SET_T_START] = {"t_start", JYL_SETTING_NUMBER, NULL, NULL, 0},
  [JYL_SET_T_END] = {"t_end", JYL_SETTING_NUMBER, NULL, NULL, 0},
  [JYL_SET_DT_OUT] = {"dt_out", JYL_SETTING_NUMBER, NULL, NULL, 0},
  [JYL_SET_RTOL] = {"rtol", JYL_SETTING_NUMBER, NULL, NULL, 0},
  [JYL_SET_ATOL] = {"atol", JYL_SETTING_NUMBER, NULL, NULL, 0},
  [JYL_SET_ATOL_VELOCITY] = {"atol_velocity", JYL_SETTING_NUMBER, NULL, NULL, 0},
  [JYL_SET_MAX_STEP] = {"max_step", JYL_SETTING_NUMBER, NULL, NULL, 0},
  [JYL_SET_MAX_STEPS] = {"max_steps", JYL_SETTING_INTEGER, NULL, NULL, 0},
  [JYL_SET_BAUMGARTE_RATE] = {"baumgarte_rate", JYL_SETTING_NUMBER, NULL, NULL, 0},
  [JYL_SET_METHOD] = {"method", JYL_SETTING_CHOICE, "method", CHOICES(method_choices)},
  [JYL_SET_FORMULATION] = {"formulation", JYL_SETTING_CHOICE, "formulation",
                           CHOICES(formulation_choices)},
  [JYL_SET_DRIFT] = {"drift", JYL_SETTING_CHOICE, "drift control", CHOICES(drift_choices)},
  [JYL_SET_NEWTON] = {"newton", JYL_SETTING_CHOICE, "newton solver", CHOICES(newton_choices)},
  [JYL_SET_OUT] = {"out", JYL_SETTING_PATH, NULL, NULL, 0},
};

/* The field of a JYL_SETTING_NUMBER setting. */
static double *number_field(jySimDef *d, int id) {
  switch (id) {
  case JYL_SET_T_START:
    return &d->t_start;
  case JYL_SET_T_END:
    return &d->t_end;
  case JYL_SET_DT_OUT:
    return &d->dt_out;
  case JYL_SET_RTOL:
    return &d->rtol;
  case JYL_SET_ATOL:
    return &d->atol;
  case JYL_SET_ATOL_VELOCITY:
    return &d->atol_velocity;
  case JYL_SET_MAX_STEP:
    return &d->max_step;
  default:
    return &d->baumgarte_rate;
  }
}

static int choice_value(const jySimDef *d, int id) {
  switch (id) {
  case JYL_SET_METHOD:
    return (int)d->method;
  case JYL_SET_FORMULATION:
    return (int)d->formulation;
  case JYL_SET_NEWTON:
    return (int)d->newton;
  default:
    return (int)d->drift;
  }
}

static void set_choice(jySimDef *d, int id, int value) {
  switch (id) {
  case JYL_SET_METHOD:
    d->method = (jyMethod)value;
    break;
  case JYL_SET_FORMULATION:
    d->formulation = (jyFormulation)value;
    break;
  case JYL_SET_NEWTON:
    d->newton = (jyNewtonSolver)value;
    break;
  default:
    d->drift = (jyDrift)value;
    break;
  }
}

const jylChoice *jyl_find_choice(const jylSetting *s, const char *name) {
  for (int i = 0; i < s->nchoices; i++)
    if (strcmp(name, s->choices[i].name) == 0) return &s->choices[i];
  return NULL;
}

static int choice_index(const jylSetting *s, int value) {
  for (int i = 0; i < s->nchoices; i++)
    if (s->choices[i].value == value) return i;
  return -1;
}

int jyl_default_choice(jylSettingId id) {
  jySimDef d = jy_default_sim_def();
  return choice_index(&jyl_settings[id], choice_value(&d, id));
}

/* ---- solver settings ------------------------------------------------------------------- */

enum {
  SOLVER_RANK_RCOND,
  SOLVER_AUGMENT_SCALE,
  SOLVER_CONSISTENCY_TOL,
  SOLVER_ASSEMBLY_TOL,
  SOLVER_ELIMINATE_GLUE,
  SOLVER_SPARSE_MIN_COORDS,
  SOLVER_DEPENDENT_TOL,
  SOLVER_DEPENDENT_RCOND,
  SOLVER_TREE_RECURSION,
  NSOLVER
};
typedef enum SolverKind {
  SOLVER_RELATIVE, /* a relative cut in (0, 1) */
  SOLVER_POSITIVE, /* a tolerance or scale > 0 */
  SOLVER_BOOLEAN,
  SOLVER_COUNT /* a whole number >= 0 */
} SolverKind;
static const char *const solver_names[NSOLVER] = {
  [SOLVER_RANK_RCOND] = "rank_rcond",           [SOLVER_AUGMENT_SCALE] = "augment_scale",
  [SOLVER_CONSISTENCY_TOL] = "consistency_tol", [SOLVER_ASSEMBLY_TOL] = "assembly_tol",
  [SOLVER_ELIMINATE_GLUE] = "eliminate_glue",   [SOLVER_SPARSE_MIN_COORDS] = "sparse_min_coords",
  [SOLVER_DEPENDENT_TOL] = "dependent_tol",     [SOLVER_DEPENDENT_RCOND] = "dependent_rcond",
  [SOLVER_TREE_RECURSION] = "tree_recursion"};

static SolverKind solver_kind(int which) {
  switch (which) {
  case SOLVER_RANK_RCOND:
  case SOLVER_DEPENDENT_RCOND:
    return SOLVER_RELATIVE;
  case SOLVER_ELIMINATE_GLUE:
  case SOLVER_TREE_RECURSION:
    return SOLVER_BOOLEAN;
  case SOLVER_SPARSE_MIN_COORDS:
    return SOLVER_COUNT;
  default:
    return SOLVER_POSITIVE;
  }
}

/* The field of a SOLVER_RELATIVE or SOLVER_POSITIVE setting. */
static double *solver_field(jySolverDef *d, int which) {
  switch (which) {
  case SOLVER_RANK_RCOND:
    return &d->rank_rcond;
  case SOLVER_AUGMENT_SCALE:
    return &d->augment_scale;
  case SOLVER_CONSISTENCY_TOL:
    return &d->consistency_tol;
  case SOLVER_ASSEMBLY_TOL:
    return &d->assembly_tol;
  case SOLVER_DEPENDENT_TOL:
    return &d->dependent_tol;
  default:
    return &d->dependent_rcond;
  }
}

static int solver_index(const char *key) {
  for (int i = 0; i < NSOLVER; i++)
    if (strcmp(key, solver_names[i]) == 0) return i;
  return -1;
}

/* Applies solver setting `which` from the value on top of the stack; raises naming the
 * setting when the value is out of its range. */
static void apply_solver_setting(lua_State *L, int which, jySolverDef *d) {
  const char *key = solver_names[which];
  SolverKind kind = solver_kind(which);
  if (kind == SOLVER_BOOLEAN) {
    if (lua_type(L, -1) != LUA_TBOOLEAN)
      luaL_error(L, "solver setting '%s' must be true or false, got %s", key, luaL_typename(L, -1));
    *(which == SOLVER_TREE_RECURSION ? &d->tree_recursion : &d->eliminate_glue) =
      lua_toboolean(L, -1);
    return;
  }
  if (lua_type(L, -1) != LUA_TNUMBER)
    luaL_error(L, "solver setting '%s' must be a number, got %s", key, luaL_typename(L, -1));
  double x = lua_tonumber(L, -1);
  if (kind == SOLVER_COUNT) {
    int isint = 0;
    lua_Integer k = lua_tointegerx(L, -1, &isint);
    if (!isint || k < 0 || k > 1000000000)
      luaL_error(L,
                 "solver setting '%s' must be a whole number >= 0 (0: never the sparse solve), "
                 "got %f",
                 key, x);
    d->sparse_min_coords = (int)k;
    return;
  }
  int relative = kind == SOLVER_RELATIVE;
  if (!(x > 0 && isfinite(x)) || (relative && !(x < 1)))
    luaL_error(L, "solver setting '%s' must be %s, got %f", key,
               relative ? "between 0 and 1 (a relative cut)" : "a positive number", x);
  *solver_field(d, which) = x;
}

void jyl_read_solver(lua_State *L, int idx, jySolverDef *d) {
  luaL_checktype(L, idx, LUA_TTABLE);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    if (lua_type(L, -2) != LUA_TSTRING)
      luaL_error(L, "solver settings are keyed by name (got a %s key)", luaL_typename(L, -2));
    const char *key = lua_tostring(L, -2);
    int which = solver_index(key);
    if (which < 0) jyl_unknown_name(L, "solver setting", key, solver_names, NSOLVER);
    apply_solver_setting(L, which, d);
    lua_pop(L, 1);
  }
}

static void push_solver_settings(lua_State *L, const jySolverDef *d) {
  jySolverDef copy = *d;
  for (int i = 0; i < NSOLVER; i++) {
    SolverKind kind = solver_kind(i);
    if (kind == SOLVER_BOOLEAN)
      lua_pushboolean(L, i == SOLVER_TREE_RECURSION ? d->tree_recursion : d->eliminate_glue);
    else if (kind == SOLVER_COUNT)
      lua_pushinteger(L, d->sparse_min_coords);
    else
      lua_pushnumber(L, *solver_field(&copy, i));
    lua_setfield(L, -2, solver_names[i]);
  }
}

/* ---- reading and pushing --------------------------------------------------------------- */

/* The run setting named key among the first n, or -1. */
static int setting_index(const char *key, int n) {
  for (int i = 0; i < n; i++)
    if (strcmp(key, jyl_settings[i].name) == 0) return i;
  return -1;
}

/* Raises "unknown setting" listing the run settings (the first nnames) and solver settings. */
static void unknown_setting(lua_State *L, const char *key, int nnames) {
  const char *names[JYL_NUM_SETTINGS + NSOLVER];
  for (int i = 0; i < nnames; i++) names[i] = jyl_settings[i].name;
  for (int i = 0; i < NSOLVER; i++) names[nnames + i] = solver_names[i];
  jyl_unknown_name(L, "setting", key, names, nnames + NSOLVER);
}

/* Applies a choice setting from the string s. */
static void read_choice(lua_State *L, int id, const char *s, jySimDef *d) {
  const jylSetting *spec = &jyl_settings[id];
  const jylChoice *choice = jyl_find_choice(spec, s);
  if (!choice) {
    const char *names[MAX_CHOICES];
    for (int i = 0; i < spec->nchoices && i < MAX_CHOICES; i++) names[i] = spec->choices[i].name;
    jyl_unknown_name(L, spec->what, s, names, spec->nchoices);
  }
  set_choice(d, id, choice->value);
}

/* Applies run setting id from the value on top of the stack (a path goes to *out). */
static void apply_setting(lua_State *L, int id, jySimDef *d, const char **out) {
  const jylSetting *spec = &jyl_settings[id];
  if (spec->kind == JYL_SETTING_CHOICE || spec->kind == JYL_SETTING_PATH) {
    if (lua_type(L, -1) != LUA_TSTRING)
      luaL_error(L, "setting '%s' must be a string, got %s", spec->name, luaL_typename(L, -1));
    if (spec->kind == JYL_SETTING_PATH) {
      jyl_sandbox_check_write(L, lua_tostring(L, -1), "setting 'out'");
      *out = lua_tostring(L, -1);
    } else
      read_choice(L, id, lua_tostring(L, -1), d);
    return;
  }
  if (lua_type(L, -1) != LUA_TNUMBER)
    luaL_error(L, "setting '%s' must be a number, got %s", spec->name, luaL_typename(L, -1));
  double x = lua_tonumber(L, -1);
  if (!isfinite(x)) luaL_error(L, "setting '%s' must be finite, got %f", spec->name, x);
  if (spec->kind == JYL_SETTING_NUMBER) {
    *number_field(d, id) = x;
    return;
  }
  int isint = 0;
  lua_Integer k = lua_tointegerx(L, -1, &isint);
  if (!isint) luaL_error(L, "setting '%s' must be an integer, got %f", spec->name, x);
  d->max_steps = (long)k; /* the one whole-number setting */
}

void jyl_read_settings(lua_State *L, int idx, jySimDef *d, jySolverDef *solver, const char **out) {
  int nnames = out ? JYL_SET_OUT + 1 : JYL_SET_OUT;
  idx = lua_absindex(L, idx);
  luaL_checktype(L, idx, LUA_TTABLE);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    if (lua_type(L, -2) != LUA_TSTRING)
      luaL_error(L, "settings are keyed by name (got a %s key)", luaL_typename(L, -2));
    const char *key = lua_tostring(L, -2);
    int id = setting_index(key, nnames);
    if (id >= 0) {
      apply_setting(L, id, d, out);
    } else if (solver_index(key) >= 0) {
      if (!solver)
        luaL_error(L,
                   "solver setting '%s' belongs to the model, which is compiled already: set "
                   "it with sys:settings or sys:compile{...} before compiling",
                   key);
      apply_solver_setting(L, solver_index(key), solver);
    } else {
      unknown_setting(L, key, nnames);
    }
    lua_pop(L, 1);
  }
}

void jyl_push_settings(lua_State *L, const jySimDef *d, const jySolverDef *solver) {
  jySimDef copy = *d;
  lua_createtable(L, 0, JYL_SET_OUT + NSOLVER);
  push_solver_settings(L, solver);
  for (int id = 0; id < JYL_SET_OUT; id++) {
    const jylSetting *spec = &jyl_settings[id];
    if (spec->kind == JYL_SETTING_NUMBER) {
      lua_pushnumber(L, *number_field(&copy, id));
    } else if (spec->kind == JYL_SETTING_INTEGER) {
      lua_pushinteger(L, (lua_Integer)d->max_steps);
    } else {
      int k = choice_index(spec, choice_value(d, id));
      lua_pushstring(L, k >= 0 ? spec->choices[k].name : "?");
    }
    lua_setfield(L, -2, spec->name);
  }
}
