/* lua/system.c — the builder side of the binding: joinery.system, the System userdata
 * (sys:add, glue, settings, compile, simulate, part, parts) and the Part and Terminal handles
 * a script glues with. Compiling hands over to lua/model.c, a run to lua/simulation.c; the
 * settings tables are lua/settings.c's.
 *
 * System (joinery.System; __gc and __close release it, sys:close() too)
 *   sys:add(type, name[, params])   -> Part. params: the type's parameters (numbers), plus
 *                                   init = {coord = value, ...} (initial coordinates),
 *                                   vel  = {coord = value, ...} (initial velocities;
 *                                   a body3d's also omega = {wx, wy, wz}, space axes, or
 *                                   omega_body, body axes: jy_system_set_angular_velocity),
 *                                   <terminal> = Terminal: glues that terminal of the new part
 *                                   to the given one; the glue is named "<name>.<terminal>"
 *                                   (glued in the order the type lists its terminals).
 *                                   The part is tried in a scratch system first, so a
 *                                   failing add leaves the system unchanged.
 *   sys:glue(a, b[, name])          glue two terminals (force channel "force.<name>")
 *   sys:constrain{name=, on={...}, phi=|psi=|accel=, rows=, kind=, nonideal=}
 *                                   a constraint written in Lua between terminals and
 *                                   coordinates (lua/constrain.c; docs/constraints.md)
 *   sys:settings{...}               store run settings (the fields of jySimDef: t_start,
 *                                   t_end, ..., method, formulation, drift; lua/settings.c
 *                                   names them and their choices) and solver settings (the
 *                                   keys of sys:compile's table, used by every later compile,
 *                                   `joinery run` included); returns sys.
 *                                   sys:settings() returns the stored settings, both kinds.
 *   sys:compile([solver])           -> Model. solver: {rank_rcond=, augment_scale=,
 *                                   consistency_tol=, assembly_tol=, eliminate_glue=true|false,
 *                                   tree_recursion=true|false,
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
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "binding.h"
#include "binding_private.h"
#include "joinery/joinery.h"
#include "settings.h"

/* ---- system ---------------------------------------------------------------------------- */

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
int jyl_system_new(lua_State *L) {
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
        jyl_unknown_name(L, "system option", key, option_names, 1);
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
  s->sys = jy_system_create(jyl_upvalue_env(L));
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
  jyl_push_list(L, names, n);
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

/* Whether the part is a spatial body: its terminal "frame" is its own 7-D coordinate block
 * (what jy_system_set_angular_velocity accepts). */
static int is_spatial_body(const jySystem *sys, jyPartId id) {
  const jyPartShape *shape = jy_system_part_shape(sys, id);
  for (int k = 0; shape && k < shape->nterminals; k++)
    if (strcmp(shape->terminals[k].name, "frame") == 0)
      return shape->terminals[k].dim == 7 && shape->terminals[k].is_coord_block;
  return 0;
}

/* vel.omega or vel.omega_body (key) = {wx, wy, wz}, the value on top of the stack. */
static void apply_omega(lua_State *L, jySystem *sys, jyPartId id, const char *type,
                        const char *key) {
  const char *name = jy_system_part_name(sys, id);
  double w[3];
  int ok = lua_type(L, -1) == LUA_TTABLE && luaL_len(L, -1) == 3;
  for (int i = 0; ok && i < 3; i++) {
    ok = lua_geti(L, -1, i + 1) == LUA_TNUMBER;
    w[i] = lua_tonumber(L, -1);
    lua_pop(L, 1);
  }
  if (!ok && lua_type(L, -1) == LUA_TTABLE)
    luaL_error(L,
               "part '%s' (%s): vel.%s must be {wx, wy, wz}, three numbers (rad/s), got %d "
               "values",
               name, type, key, (int)luaL_len(L, -1));
  if (!ok)
    luaL_error(L, "part '%s' (%s): vel.%s must be {wx, wy, wz}, three numbers (rad/s), got %s",
               name, type, key, luaL_typename(L, -1));
  jyStatus st = jy_system_set_angular_velocity(
    sys, id, w, strcmp(key, "omega_body") == 0 ? JY_OMEGA_BODY : JY_OMEGA_SPACE);
  if (st != JY_OK) luaL_error(L, "%s", jyl_msg_or(jy_system_error(sys), st));
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
    if (velocity == 1 && (strcmp(coord, "omega") == 0 || strcmp(coord, "omega_body") == 0)) {
      apply_omega(L, sys, id, type, coord);
      lua_pop(L, 1);
      continue;
    }
    if (lua_type(L, -1) != LUA_TNUMBER)
      luaL_error(L, "part '%s' (%s): %s.%s must be a number, got %s", jy_system_part_name(sys, id),
                 type, what, coord, luaL_typename(L, -1));
    double x = lua_tonumber(L, -1);
    jyStatus st = velocity == 1 ? jy_system_set_velocity(sys, id, coord, x)
      : velocity == 2           ? jy_system_guess_coord(sys, id, coord, x)
                                : jy_system_set_coord(sys, id, coord, x);
    if (st == JY_ERR_UNKNOWN_NAME && velocity == 1 && is_spatial_body(sys, id)) {
      static const char *const keys[] = {"omega", "omega_body"};
      const char *near = jy_nearest_name(coord, keys, 2);
      luaL_error(L,
                 "part '%s' (%s): vel has no '%s'%s%s%s; vel takes coordinate velocities (x, y, "
                 "z, q0..q3), or omega = {wx, wy, wz} (space axes) or omega_body = {wx, wy, wz} "
                 "(body axes), rad/s",
                 jy_system_part_name(sys, id), type, coord, near ? " (did you mean '" : "",
                 near ? near : "", near ? "'?)" : "");
    }
    if (st != JY_OK) luaL_error(L, "%s", jyl_msg_or(jy_system_error(sys), st));
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
        if (st != JY_OK) luaL_error(L, "%s", jyl_msg_or(jy_system_error(sys), st));
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

/* sys:add's pass 1 over the params table at 4: checks the value types (numbers, init/vel/
 * guess tables, terminals of this system at 1) and returns the count of numeric parameters;
 * *bad_key: the first key whose value is none of these (NULL: none). */
static int count_params(lua_State *L, const char *name, const char *type, const char **bad_key) {
  int n = 0;
  lua_pushnil(L);
  while (lua_next(L, 4)) {
    if (lua_type(L, -2) != LUA_TSTRING)
      luaL_error(L, "part '%s' (%s): parameters are keyed by name (got a %s key)", name, type,
                 luaL_typename(L, -2));
    const char *key = lua_tostring(L, -2);
    if (strcmp(key, "init") == 0 || strcmp(key, "vel") == 0 || strcmp(key, "guess") == 0) {
      if (lua_type(L, -1) != LUA_TTABLE)
        luaL_error(L, "part '%s' (%s): %s must be a table {coord = value, ...}, got %s", name, type,
                   key, luaL_typename(L, -1));
    } else if (lua_type(L, -1) == LUA_TNUMBER) {
      n++;
    } else if (luaL_testudata(L, -1, JYL_TERMINAL)) {
      lua_getiuservalue(L, -1, 1);
      int same = lua_rawequal(L, -1, 1);
      lua_pop(L, 1);
      if (!same)
        luaL_error(L, "part '%s' (%s): the terminal given for '%s' belongs to another system", name,
                   type, key);
    } else if (!*bad_key) {
      *bad_key = key; /* judged once the part's terminals are known (try_part) */
    }
    lua_pop(L, 1);
  }
  return n;
}

/* A value of the wrong type at key in the params table at 4: said as what the key names for
 * the part id of sys (a terminal wants a terminal, anything else a number). */
static void refuse_bad_value(lua_State *L, jySystem *sys, jyPartId id, const char *name,
                             const char *type, const char *key) {
  const jyPartShape *shape = jy_system_part_shape(sys, id);
  lua_getfield(L, 4, key);
  const char *got = luaL_typename(L, -1);
  for (int t = 0; shape && t < shape->nterminals; t++)
    if (strcmp(shape->terminals[t].name, key) == 0)
      luaL_error(L,
                 "part '%s' (%s): terminal '%s' must be given a terminal of this system to glue "
                 "to (%s = other_part.terminal), got %s",
                 name, type, key, key, got);
  luaL_error(L, "part '%s' (%s): parameter '%s' must be a number, got %s", name, type, key, got);
}

/* sys:add's pass 2: the n numeric parameters of the table at 4, sorted by name so that the
 * outcome does not depend on the table's iteration order (pushed: the array's userdata). */
static jyParamSetting *collect_params(lua_State *L, int n) {
  jyParamSetting *set =
    (jyParamSetting *)lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof *set, 0);
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
  return set;
}

/* Tries the part in a scratch system first, so that a bad init, vel or terminal key fails
 * before the real system at 1 changes. */
static void try_part(lua_State *L, LSystem *s, const char *type, const char *name,
                     const jyParamSetting *set, int n, const char *bad_key) {
  LScratch *trial = (LScratch *)lua_newuserdatauv(L, sizeof *trial, 0);
  trial->sys = NULL;
  luaL_setmetatable(L, JYL_SCRATCH);
  lua_getiuservalue(L, 1, 1);
  trial->sys = jy_system_create(((LEnv *)lua_touserdata(L, -1))->env);
  lua_pop(L, 1);
  if (!trial->sys) luaL_error(L, "out of memory creating a system");
  jyPartId tid = jy_system_add_part(trial->sys, type, name, set, n);
  if (tid.index < 0) luaL_error(L, "%s", jyl_msg_or(jy_system_error(trial->sys), JY_ERR_INVALID));
  if (bad_key) refuse_bad_value(L, trial->sys, tid, name, type, bad_key);
  apply_extras(L, s, trial->sys, tid, type, 0);
  jy_system_destroy(trial->sys);
  trial->sys = NULL;
  lua_pop(L, 1);
}

/* sys:add(type, name[, params]) */
static int sys_add(lua_State *L) {
  LSystem *s = jyl_check_system(L, 1);
  const char *type = luaL_checkstring(L, 2);
  const char *name = luaL_checkstring(L, 3);
  if (lua_isnoneornil(L, 4)) {
    lua_settop(L, 3);
    lua_newtable(L);
  }
  luaL_checktype(L, 4, LUA_TTABLE);
  lua_settop(L, 4);
  const char *bad_key = NULL;
  int n = count_params(L, name, type, &bad_key);
  jyParamSetting *set = collect_params(L, n); /* 5 */
  try_part(L, s, type, name, set, n, bad_key);

  jyPartId id = jy_system_add_part(s->sys, type, name, set, n);
  if (id.index < 0) return luaL_error(L, "%s", jyl_msg_or(jy_system_error(s->sys), JY_ERR_INVALID));
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
  LSystem *s = jyl_check_system(L, 1);
  LTerminal *a = check_terminal_of(L, 2, 1);
  LTerminal *b = check_terminal_of(L, 3, 1);
  const char *name = luaL_optstring(L, 4, NULL);
  if (a->part == b->part && a->terminal == b->terminal)
    return luaL_error(L, "cannot glue terminal %s to itself",
                      push_terminal_name(L, s, a->part, a->terminal));
  jyStatus st = jy_system_glue(s->sys, (jyTerminalId){a->part, a->terminal},
                               (jyTerminalId){b->part, b->terminal}, name);
  if (st != JY_OK) return luaL_error(L, "%s", jyl_msg_or(jy_system_error(s->sys), st));
  return 0;
}

/* sys:settings([t]) */
static int sys_settings(lua_State *L) {
  LSystem *s = jyl_check_system(L, 1);
  if (lua_isnoneornil(L, 2)) {
    jyl_push_settings(L, &s->def, &s->solver);
    return 1;
  }
  jySimDef d = s->def;
  jySolverDef solver = s->solver;
  jyl_read_settings(L, 2, &d, &solver, NULL);
  s->def = d;
  s->solver = solver;
  lua_settop(L, 1);
  return 1;
}

/* sys:output(patterns): the output selection of its runs (the setting columns): a list of
 * glob patterns or one string of comma-separated ones; nil or {} restores the default.
 * Returns sys. */
static int sys_output(lua_State *L) {
  LSystem *s = jyl_check_system(L, 1);
  lua_settop(L, 2);
  jySimDef d = s->def;
  jyl_read_columns(L, 2, &d, "sys:output");
  s->def = d;
  lua_settop(L, 1);
  return 1;
}

/* Compiles the system at idx; pushes the model. */
/* sys:compile([solver]): the solver settings over those of sys:settings */
static int sys_compile(lua_State *L) {
  LSystem *s = jyl_check_system(L, 1);
  jySolverDef def = s->solver;
  if (!lua_isnoneornil(L, 2)) jyl_read_solver(L, 2, &def);
  lua_settop(L, 1);
  jyl_compile_system(L, 1, &def);
  return 1;
}

/* sys:check() -> {unglued = {{name =, part =, terminal =}, ...}, isolated = {{name =}, ...},
 * findings =}: the findings that need no compile (jy_system_check). */
static int sys_check(lua_State *L) {
  const jySystem *sys = jyl_check_system(L, 1)->sys;
  jyModelCheck c;
  jyStatus st = jy_system_check(sys, &c);
  if (st != JY_OK) {
    jy_system_check_free(sys, &c);
    return luaL_error(L, "system check: %s", jy_status_text(st));
  }
  lua_createtable(L, 0, 3);
  jyl_push_check_items(L, c.unglued, c.nunglued, "unglued");
  jyl_push_check_items(L, c.isolated, c.nisolated, "isolated");
  lua_pushinteger(L, c.findings);
  lua_setfield(L, -2, "findings");
  jy_system_check_free(sys, &c);
  return 1;
}

/* sys:simulate([opts]) */
static int sys_simulate(lua_State *L) {
  LSystem *s = jyl_check_system(L, 1);
  jySimDef d = s->def;
  jySolverDef solver = s->solver;
  const char *out = NULL;
  if (!lua_isnoneornil(L, 2)) jyl_read_settings(L, 2, &d, &solver, &out);
  lua_settop(L, 2);
  jyl_compile_system(L, 1, &solver); /* index 3 */
  jylRunOpts opts = {out, 0, NULL, 0};
  return jyl_run_simulation(L, 3, &d, &opts);
}

/* sys:part(name) */
static int sys_part(lua_State *L) {
  LSystem *s = jyl_check_system(L, 1);
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
  LSystem *s = jyl_check_system(L, 1);
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

/* host.part_param(part, name): a parameter's value as the system holds it, or nil (the
 * prelude's sys:motor reads a joint's axis with it). */
int jyl_host_part_param(lua_State *L) {
  LPart *p = (LPart *)luaL_checkudata(L, 1, JYL_PART);
  const char *name = luaL_checkstring(L, 2);
  LSystem *s = owner_system(L, 1);
  double x = jy_system_part_param(s->sys, (jyPartId){p->part}, name);
  if (isnan(x))
    lua_pushnil(L);
  else
    lua_pushnumber(L, x);
  return 1;
}

/* host.find_input(sys, name): the index of the system's input `name` (0, 1, ...), or nil. */
int jyl_host_find_input(lua_State *L) {
  LSystem *s = jyl_check_system(L, 1);
  int k = jy_system_find_input(s->sys, luaL_checkstring(L, 2));
  if (k < 0)
    lua_pushnil(L);
  else
    lua_pushinteger(L, k);
  return 1;
}

/* host.glued_to(terminal[, k]): the terminal at the other side of the terminal's k-th glue
 * (k from 1), or nil. */
int jyl_host_glued_to(lua_State *L) {
  LTerminal *t = (LTerminal *)luaL_checkudata(L, 1, JYL_TERMINAL);
  lua_Integer k = luaL_optinteger(L, 2, 1);
  LSystem *s = owner_system(L, 1); /* index 3 */
  int sys_idx = lua_gettop(L);
  jyTerminalId other =
    jy_system_glued_to(s->sys, (jyTerminalId){t->part, t->terminal}, (int)(k - 1));
  if (k < 1 || other.part < 0) {
    lua_pushnil(L);
    return 1;
  }
  push_terminal(L, sys_idx, other);
  return 1;
}

/* host.last_glue(sys): the name of the latest glue (nil: none); sys:pin names its angle
 * part after it, whatever name sys:glue gave. */
int jyl_host_last_glue(lua_State *L) {
  LSystem *s = jyl_check_system(L, 1);
  const char *name = jy_system_glue_name(s->sys, jy_system_num_glues(s->sys) - 1);
  if (name)
    lua_pushstring(L, name);
  else
    lua_pushnil(L);
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

/* ---- registration ---------------------------------------------------------------------- */

static const luaL_Reg system_meta[] = {
  {"__gc", sys_gc}, {"__close", sys_gc}, {"__tostring", sys_tostring}, {NULL, NULL}};
static const luaL_Reg system_methods[] = {{"add", sys_add},
                                          {"glue", sys_glue},
                                          {"settings", sys_settings},
                                          {"output", sys_output},
                                          {"compile", sys_compile},
                                          {"simulate", sys_simulate},
                                          {"part", sys_part},
                                          {"parts", sys_parts},
                                          {"check", sys_check},
                                          {"close", sys_gc},
                                          {NULL, NULL}};

static const luaL_Reg part_meta[] = {
  {"__index", part_index}, {"__tostring", part_tostring}, {NULL, NULL}};

static const luaL_Reg terminal_meta[] = {{"__index", terminal_index},
                                         {"__eq", terminal_eq},
                                         {"__tostring", terminal_tostring},
                                         {NULL, NULL}};

static const luaL_Reg scratch_meta[] = {{"__gc", scratch_gc}, {NULL, NULL}};

void jyl_open_system(lua_State *L) {
  jyl_new_class(L, JYL_SYSTEM, system_meta, system_methods);
  jyl_new_class(L, JYL_PART, part_meta, NULL);
  jyl_new_class(L, JYL_TERMINAL, terminal_meta, NULL);
  jyl_new_class(L, JYL_SCRATCH, scratch_meta, NULL);
}
