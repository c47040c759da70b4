/* lua/model.c — the compiled side of the binding: the Model userdata (joinery.Model), made
 * by sys:compile (lua/system.c) from a System. A model is immutable; evaluating it goes
 * through one jyEval made on first use, and its runs and Sims are lua/simulation.c's.
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
 *   model:simulate([opts])          -> result (opts: the run settings of sys:settings, plus
 *                                   out; a solver setting is an error: the model is compiled)
 *   model:sim([opts])               -> Sim, a simulation stepped from Lua
 *   model:equilibrium{q =, hold =, inputs =, t =, tol =, max_iter =}
 *                                   -> q, {iterations =, residual =, free =, rcond =}
 *   model:linearize{q =, v =, t =, inputs =, outputs =, tol =, step =}
 *                                   -> {A =, B =, C =, D =, states =, inputs =, outputs =,
 *                                      error =, errors =} (docs/control.md)
 * Both run on an evaluator of their own, made and destroyed in the call (the inputs they set
 * stay theirs); every argument is read before it is made, so a Lua error leaks nothing.
 */
#include <math.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "binding.h"
#include "binding_private.h"
#include "joinery/joinery.h"
#include "settings.h"

/* __gc and __close; model:close() */
static int model_gc(lua_State *L) {
  LModel *m = (LModel *)luaL_checkudata(L, 1, JYL_MODEL);
  m->closed = 1;
  jy_eval_destroy(m->eval);
  m->eval = NULL;
  if (m->nsims == 0) jyl_model_release(m);
  return 0;
}

/* sys:compile and sys:simulate: the model takes the system's run settings and shares its
 * user values (lua/binding_private.h). */
LModel *jyl_compile_system(lua_State *L, int idx, const jySolverDef *def) {
  LSystem *s = jyl_check_system(L, idx);
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
    luaL_error(L, "%s", jyl_msg_or(jy_system_error(s->sys), st));
  }
  return m;
}

static jyEval *model_eval(lua_State *L, LModel *m) {
  if (!m->eval) {
    m->eval = jy_eval_create(m->model);
    if (!m->eval) luaL_error(L, "out of memory creating an evaluator");
  }
  return m->eval;
}

static int model_coords(lua_State *L) {
  LModel *m = jyl_check_model(L, 1);
  return jyl_push_names(L, m->model, jy_model_num_coords(m->model), jy_model_coord_name);
}

static int model_channels(lua_State *L) {
  LModel *m = jyl_check_model(L, 1);
  return jyl_push_names(L, m->model, jy_model_num_channels(m->model), jy_model_channel_name);
}

static int model_inputs(lua_State *L) {
  LModel *m = jyl_check_model(L, 1);
  return jyl_push_names(L, m->model, jy_model_num_inputs(m->model), jy_model_input_name);
}

static int model_rows(lua_State *L) {
  LModel *m = jyl_check_model(L, 1);
  return jyl_push_names(L, m->model, jy_model_num_rows(m->model), jy_model_row_name);
}

static int model_num_coords(lua_State *L) {
  lua_pushinteger(L, jy_model_num_coords(jyl_check_model(L, 1)->model));
  return 1;
}

static int model_num_rows(lua_State *L) {
  lua_pushinteger(L, jy_model_num_rows(jyl_check_model(L, 1)->model));
  return 1;
}

static int model_num_channels(lua_State *L) {
  lua_pushinteger(L, jy_model_num_channels(jyl_check_model(L, 1)->model));
  return 1;
}

static int model_initial(lua_State *L) {
  LModel *m = jyl_check_model(L, 1);
  int n = jy_model_num_coords(m->model);
  jyl_push_array(L, jy_model_initial_q(m->model), n);
  jyl_push_array(L, jy_model_initial_v(m->model), n);
  return 2;
}

/* model:moved() -> array of {name = "p.x" | "der(p.x)", from, to, set, follows_glue, warn}:
 * the initial values the consistent state moved beyond the assembly tolerance; warn for a
 * value the script set or one left unset that does not just follow its glue. */
static int model_moved(lua_State *L) {
  const jyModel *model = jyl_check_model(L, 1)->model;
  int count = jy_model_num_moved(model);
  lua_createtable(L, count, 0);
  for (int i = 0; i < count; i++) {
    const jyMovedValue *mv = jy_model_moved(model, i);
    const char *coord = jy_model_coord_name(model, mv->coord);
    lua_createtable(L, 0, 6);
    if (mv->velocity)
      lua_pushfstring(L, "der(%s)", coord);
    else
      lua_pushstring(L, coord);
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

/* model:check() -> table: the model doctor's analysis (jy_model_check; docs/lua-api.md). */
void jyl_push_check_items(lua_State *L, const jyCheckItem *items, int count, const char *field) {
  lua_createtable(L, count, 0);
  for (int i = 0; i < count; i++) {
    const jyCheckItem *it = &items[i];
    lua_createtable(L, 0, 5);
    lua_pushstring(L, it->name);
    lua_setfield(L, -2, "name");
    if (it->part) {
      lua_pushstring(L, it->part);
      lua_setfield(L, -2, "part");
    }
    if (it->glue) {
      lua_pushstring(L, it->glue);
      lua_setfield(L, -2, "glue");
      lua_pushstring(L, it->part_b);
      lua_setfield(L, -2, "part_b");
    }
    if (it->terminal) {
      lua_pushstring(L, it->terminal);
      lua_setfield(L, -2, "terminal");
    }
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, field);
}

static void set_bool(lua_State *L, const char *key, int value) {
  lua_pushboolean(L, value);
  lua_setfield(L, -2, key);
}

static void set_number(lua_State *L, const char *key, double value) {
  lua_pushnumber(L, value);
  lua_setfield(L, -2, key);
}

static int model_check(lua_State *L) {
  const jyModel *model = jyl_check_model(L, 1)->model;
  jyModelCheck c;
  jyStatus st = jy_model_check(model, &c);
  if (st != JY_OK) {
    jy_model_check_free(model, &c);
    return luaL_error(L, "model check: %s", jy_status_text(st));
  }
  lua_createtable(L, 0, 24);
  static const char *const ints[] = {"coords", "rows",     "position_rows", "velocity_rows", "rank",
                                     "dof",    "rank_all", "motion_dof",    "findings"};
  const int vals[] = {c.coords, c.rows,     c.position_rows, c.velocity_rows, c.rank,
                      c.dof,    c.rank_all, c.motion_dof,    c.findings};
  for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
    lua_pushinteger(L, vals[i]);
    lua_setfield(L, -2, ints[i]);
  }
  set_bool(L, "rank_from_svd", c.rank_from_svd);
  set_bool(L, "mass_known", c.mass_known);
  set_bool(L, "sound", c.findings == 0);
  jyl_push_check_items(L, c.redundant, c.nredundant, "redundant");
  jyl_push_check_items(L, c.massless, c.nmassless, "massless");
  jyl_push_check_items(L, c.unglued, c.nunglued, "unglued");
  jyl_push_check_items(L, c.isolated, c.nisolated, "isolated");
  lua_createtable(L, 0, 5); /* singular */
  if (isnan(c.sigma))
    set_bool(L, "sigma", 0);
  else
    set_number(L, "sigma", c.sigma);
  set_number(L, "tol", c.sigma_tol);
  set_bool(L, "near", c.near_singular);
  lua_createtable(L, c.nsingular_coords, 0);
  for (int i = 0; i < c.nsingular_coords; i++) {
    lua_createtable(L, 0, 2);
    lua_pushstring(L, c.singular_coords[i].name);
    lua_setfield(L, -2, "name");
    set_number(L, "weight", c.singular_coords[i].value);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "coords");
  lua_setfield(L, -2, "singular");
  lua_createtable(L, 0, 3); /* moved: counts */
  static const char *const moved[] = {"set", "unset", "follows_glue"};
  const int counts[] = {c.moved_set, c.moved_unset, c.moved_follow};
  for (int i = 0; i < 3; i++) {
    lua_pushinteger(L, counts[i]);
    lua_setfield(L, -2, moved[i]);
  }
  lua_setfield(L, -2, "moved");
  jy_model_check_free(model, &c);
  return 1;
}

static int model_report(lua_State *L) {
  const char *r = jy_model_report(jyl_check_model(L, 1)->model);
  lua_pushstring(L, r ? r : "");
  return 1;
}

/* model:acceleration(q, v[, t]) */
static int model_acceleration(lua_State *L) {
  LModel *m = jyl_check_model(L, 1);
  int n = jy_model_num_coords(m->model);
  double t = luaL_optnumber(L, 4, 0.0);
  lua_settop(L, 4);
  double *buf = jyl_scratch(L, 3 * (size_t)n);
  jyl_read_vector(L, 2, n, buf, "q");
  jyl_read_vector(L, 3, n, buf + n, "v");
  jyEval *e = model_eval(L, m);
  jyStatus st = jy_eval_acceleration(e, buf, buf + n, t, buf + 2 * n);
  if (st != JY_OK) return luaL_error(L, "%s", jyl_msg_or(jy_eval_error(e), st));
  jyl_push_array(L, buf + 2 * n, n);
  return 1;
}

/* model:evaluate(q, v[, t]) */
static int model_evaluate(lua_State *L) {
  LModel *m = jyl_check_model(L, 1);
  int n = jy_model_num_coords(m->model);
  int nch = jy_model_num_channels(m->model);
  double t = luaL_optnumber(L, 4, 0.0);
  lua_settop(L, 4);
  double *buf = jyl_scratch(L, 2 * (size_t)n + (size_t)nch);
  jyl_read_vector(L, 2, n, buf, "q");
  jyl_read_vector(L, 3, n, buf + n, "v");
  jyEval *e = model_eval(L, m);
  jyStatus st = jy_eval_channels(e, buf, buf + n, t, buf + 2 * n);
  if (st != JY_OK) return luaL_error(L, "%s", jyl_msg_or(jy_eval_error(e), st));
  jyl_push_channel_table(L, m->model, buf + 2 * n);
  return 1;
}

/* model:visuals(q, v [, t [, forces]]): what joinery animate draws at that state (part
 * protocol 7), an array of {name, kind, a, b, quat, size}; forces: the arrows' forces solved. */
static int model_visuals(lua_State *L) {
  static const char *const kinds[] = {"none",  "point",  "rod",   "spring", "damper",
                                      "frame", "ground", "arrow", "rope"};
  LModel *m = jyl_check_model(L, 1);
  int n = jy_model_num_coords(m->model), nch = jy_model_num_channels(m->model);
  int nv = jy_model_num_visuals(m->model);
  double t = luaL_optnumber(L, 4, 0.0);
  int forces = lua_toboolean(L, 5);
  lua_settop(L, 5);
  double *buf = jyl_scratch(L, 2 * (size_t)n + (size_t)nch);
  jyVisual *vis = (jyVisual *)lua_newuserdatauv(L, sizeof(jyVisual) * ((size_t)nv + 1), 0);
  jyl_read_vector(L, 2, n, buf, "q");
  jyl_read_vector(L, 3, n, buf + n, "v");
  jyEval *e = model_eval(L, m);
  jyStatus st = forces ? jy_eval_channels(e, buf, buf + n, t, buf + 2 * n) : JY_OK;
  if (st == JY_OK) st = jy_eval_visuals(e, buf, buf + n, t, forces ? buf + 2 * n : NULL, vis);
  if (st != JY_OK) return luaL_error(L, "%s", jyl_msg_or(jy_eval_error(e), st));
  lua_createtable(L, nv, 0);
  for (int i = 0; i < nv; i++) {
    lua_createtable(L, 0, 6);
    lua_pushstring(L, jy_model_visual_name(m->model, i));
    lua_setfield(L, -2, "name");
    lua_pushstring(L, kinds[vis[i].kind >= 0 && vis[i].kind <= JY_VISUAL_ROPE ? vis[i].kind : 0]);
    lua_setfield(L, -2, "kind");
    jyl_push_array(L, vis[i].a, 3);
    lua_setfield(L, -2, "a");
    jyl_push_array(L, vis[i].b, 3);
    lua_setfield(L, -2, "b");
    jyl_push_array(L, vis[i].quat, 4);
    lua_setfield(L, -2, "quat");
    lua_pushnumber(L, vis[i].size);
    lua_setfield(L, -2, "size");
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

/* model:simulate([opts]) */
static int model_simulate(lua_State *L) {
  LModel *m = jyl_check_model(L, 1);
  jySimDef d = m->def;
  const char *out = NULL;
  if (!lua_isnoneornil(L, 2)) jyl_read_settings(L, 2, &d, NULL, &out);
  lua_settop(L, 2);
  jylRunOpts opts = {out, 0, NULL, 0};
  return jyl_run_simulation(L, 1, &d, &opts);
}

/* model:sim([opts]) */
static int model_sim(lua_State *L) {
  LModel *m = jyl_check_model(L, 1);
  jySimDef d = m->def;
  if (!lua_isnoneornil(L, 2)) jyl_read_settings(L, 2, &d, NULL, NULL);
  lua_settop(L, 2);
  jyl_new_sim(L, 1, &d);
  return 1;
}

/* Raises "unknown <what> 'name'" with did-you-mean over the names fn gives. */
static int unknown_model_name(lua_State *L, const jyModel *model, const char *what,
                              const char *name, int count, jylNameFn fn) {
  if (count == 0) return luaL_error(L, "unknown %s '%s': the model has none", what, name);
  const char **names = (const char **)lua_newuserdatauv(L, sizeof(char *) * (size_t)count, 0);
  for (int i = 0; i < count; i++) names[i] = fn(model, i);
  return jyl_unknown_name(L, what, name, names, count);
}

/* Checks that the options table at idx has only the keys listed (did-you-mean otherwise). */
static void check_keys(lua_State *L, int idx, const char *call, const char *const *keys, int n) {
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    const char *key = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    int found = 0;
    for (int i = 0; key && i < n; i++) found |= strcmp(key, keys[i]) == 0;
    if (!found) {
      if (!key) luaL_error(L, "%s: options are named (a table of name = value)", call);
      lua_pushfstring(L, "%s option", call);
      jyl_unknown_name(L, lua_tostring(L, -1), key, keys, n);
    }
  }
}

/* An optional number field of the table at idx (def when absent). */
static double opt_number_field(lua_State *L, int idx, const char *field, double def) {
  int type = lua_getfield(L, idx, field);
  double x = def;
  if (type == LUA_TNUMBER)
    x = lua_tonumber(L, -1);
  else if (type != LUA_TNIL)
    luaL_error(L, "option '%s' must be a number, got %s", field, luaL_typename(L, -1));
  lua_pop(L, 1);
  return x;
}

/* An optional vector field of n numbers into out (the default copied when absent). */
static void opt_vector_field(lua_State *L, int idx, const char *field, int n, double *out,
                             const double *def) {
  if (lua_getfield(L, idx, field) == LUA_TNIL) {
    for (int i = 0; i < n; i++) out[i] = def[i];
  } else {
    if (!lua_istable(L, -1))
      luaL_error(L, "option '%s' must be an array of %d numbers (over model:coords())", field, n);
    lua_Integer len = luaL_len(L, -1);
    if (len != n) luaL_error(L, "option '%s' must have %d entries, got %d", field, n, (int)len);
    for (int i = 0; i < n; i++) {
      if (lua_geti(L, -1, i + 1) != LUA_TNUMBER)
        luaL_error(L, "option '%s'[%d] is not a number", field, i + 1);
      out[i] = lua_tonumber(L, -1);
      lua_pop(L, 1);
    }
  }
  lua_pop(L, 1);
}

/* The index of a coordinate name (did-you-mean error when none). */
static int coord_index(lua_State *L, const jyModel *model, const char *name) {
  int j = jy_model_find_coord(model, name);
  if (j < 0)
    unknown_model_name(L, model, "coordinate", name, jy_model_num_coords(model),
                       jy_model_coord_name);
  return j;
}

static int input_index(lua_State *L, const jyModel *model, const char *name) {
  int k = jy_model_find_input(model, name);
  if (k < 0)
    unknown_model_name(L, model, "input", name, jy_model_num_inputs(model), jy_model_input_name);
  return k;
}

/* Reads the table at idx ({name = value}) into values (by input index), marking set. */
static void read_input_values(lua_State *L, int idx, const jyModel *model, double *values,
                              int *set) {
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TNUMBER)
      luaL_error(L, "option 'inputs' must be a table {name = value}");
    int k = input_index(L, model, lua_tostring(L, -2));
    values[k] = lua_tonumber(L, -1);
    set[k] = 1;
    lua_pop(L, 1);
  }
}

/* Pushes the error of a failed call on a private evaluator, destroys it, raises. */
static int fail_with_eval(lua_State *L, jyEval *e, jyStatus st) {
  lua_pushstring(L, jyl_msg_or(jy_eval_error(e), st));
  jy_eval_destroy(e);
  return luaL_error(L, "%s", lua_tostring(L, -1));
}

/* Sets the held inputs on a fresh evaluator; NULL with the message pushed on failure. */
static jyEval *eval_with_inputs(lua_State *L, const jyModel *model, const double *values,
                                const int *set, int nin) {
  jyEval *e = jy_eval_create(model);
  if (!e) {
    lua_pushliteral(L, "out of memory creating an evaluator");
    return NULL;
  }
  for (int k = 0; k < nin; k++) {
    jyStatus st = set[k] ? jy_eval_set_input(e, k, values[k]) : JY_OK;
    if (st != JY_OK) {
      const char *msg = jy_eval_error(e);
      if (msg && *msg)
        lua_pushstring(L, msg);
      else
        lua_pushfstring(L, "input '%s': %s", jy_model_input_name(model, k), jy_status_text(st));
      jy_eval_destroy(e);
      return NULL;
    }
  }
  return e;
}

/* model:equilibrium{q =, hold = {names}, inputs = {name = value}, t =, tol =, max_iter =} */
static int model_equilibrium(lua_State *L) {
  static const char *const keys[] = {"q", "hold", "inputs", "t", "tol", "max_iter"};
  LModel *m = jyl_check_model(L, 1);
  const jyModel *model = m->model;
  if (lua_isnoneornil(L, 2)) lua_newtable(L);
  luaL_checktype(L, 2, LUA_TTABLE);
  lua_settop(L, 2);
  check_keys(L, 2, "model:equilibrium", keys, 6);
  int n = jy_model_num_coords(model), nin = jy_model_num_inputs(model);
  double *q = jyl_scratch(L, (size_t)n + 1), *u = jyl_scratch(L, (size_t)nin + 1); /* 3, 4 */
  int *hold = (int *)lua_newuserdatauv(L, sizeof(int) * ((size_t)n + 1), 0);
  int *set = (int *)lua_newuserdatauv(L, sizeof(int) * ((size_t)nin + 1), 0);
  for (int k = 0; k < nin; k++) set[k] = 0;
  jyEquilibriumDef def = jy_default_equilibrium_def();
  opt_vector_field(L, 2, "q", n, q, jy_model_initial_q(model));
  def.q = q;
  def.t = opt_number_field(L, 2, "t", def.t);
  def.tol = opt_number_field(L, 2, "tol", def.tol);
  double iters = opt_number_field(L, 2, "max_iter", def.max_iter);
  if (!(iters >= 0 && iters <= 1e6)) luaL_error(L, "option 'max_iter' must be >= 0");
  def.max_iter = (int)iters;
  int t = lua_getfield(L, 2, "hold");
  if (t != LUA_TNIL) {
    if (t != LUA_TTABLE) luaL_error(L, "option 'hold' must be an array of coordinate names");
    int count = (int)luaL_len(L, -1);
    if (count > n) luaL_error(L, "option 'hold' names more coordinates than the model has");
    for (int i = 0; i < count; i++) {
      if (lua_geti(L, -1, i + 1) != LUA_TSTRING)
        luaL_error(L, "option 'hold'[%d] must be a coordinate name (\"part.coord\")", i + 1);
      hold[i] = coord_index(L, model, lua_tostring(L, -1));
      for (int k = 0; k < i; k++)
        if (hold[k] == hold[i])
          luaL_error(L, "option 'hold' names '%s' twice", lua_tostring(L, -1));
      lua_pop(L, 1);
    }
    def.hold = hold;
    def.nhold = count;
  }
  lua_pop(L, 1);
  if (lua_getfield(L, 2, "inputs") != LUA_TNIL) {
    if (!lua_istable(L, -1)) luaL_error(L, "option 'inputs' must be a table {name = value}");
    read_input_values(L, lua_gettop(L), model, u, set);
  }
  lua_pop(L, 1);
  jyEval *e = eval_with_inputs(L, model, u, set, nin);
  if (!e) return luaL_error(L, "%s", lua_tostring(L, -1));
  jyEquilibriumReport rep;
  jyStatus st = jy_model_equilibrium(e, &def, q, &rep);
  if (st != JY_OK) return fail_with_eval(L, e, st);
  jy_eval_destroy(e);
  jyl_push_array(L, q, n);
  lua_createtable(L, 0, 4);
  lua_pushinteger(L, rep.iterations);
  lua_setfield(L, -2, "iterations");
  lua_pushnumber(L, rep.residual);
  lua_setfield(L, -2, "residual");
  lua_pushnumber(L, rep.rcond);
  lua_setfield(L, -2, "rcond");
  lua_pushinteger(L, rep.nfree);
  lua_setfield(L, -2, "nfree");
  return 2;
}

/* A column-major r x c matrix as an array of r rows. */
static void push_matrix(lua_State *L, const double *a, int r, int c) {
  lua_createtable(L, r, 0);
  for (int i = 0; i < r; i++) {
    lua_createtable(L, c, 0);
    for (int j = 0; j < c; j++) {
      lua_pushnumber(L, a[i + (size_t)j * r]);
      lua_rawseti(L, -2, j + 1);
    }
    lua_rawseti(L, -2, i + 1);
  }
}

/* model:linearize{q =, v =, t =, inputs = {names} | {name = value}, outputs = {names}, tol =,
 * step =} */
static int model_linearize(lua_State *L) {
  static const char *const keys[] = {"q", "v", "t", "inputs", "outputs", "tol", "step"};
  LModel *m = jyl_check_model(L, 1);
  const jyModel *model = m->model;
  if (lua_isnoneornil(L, 2)) lua_newtable(L);
  luaL_checktype(L, 2, LUA_TTABLE);
  lua_settop(L, 2);
  check_keys(L, 2, "model:linearize", keys, 7);
  int n = jy_model_num_coords(model), nin = jy_model_num_inputs(model);
  int nch = jy_model_num_channels(model);
  double *x = jyl_scratch(L, 2 * (size_t)n + (size_t)nin + 1);
  double *q = x, *v = x + n, *uval = x + 2 * n;
  int *ints = (int *)lua_newuserdatauv(L, sizeof(int) * (2 * (size_t)nin + (size_t)nch + 1), 0);
  int *inputs = ints, *outputs = ints + nin, *set = ints + nin + nch;
  jyLinearizeDef def = jy_default_linearize_def();
  opt_vector_field(L, 2, "q", n, q, jy_model_initial_q(model));
  opt_vector_field(L, 2, "v", n, v, jy_model_initial_v(model));
  def.q = q;
  def.v = v;
  def.t = opt_number_field(L, 2, "t", def.t);
  def.tol = opt_number_field(L, 2, "tol", def.tol);
  def.step = opt_number_field(L, 2, "step", def.step);
  for (int k = 0; k < nin; k++) {
    set[k] = 0;
    uval[k] = jy_model_input_initial(model, k);
  }
  int nu = 0;
  int type = lua_getfield(L, 2, "inputs");
  if (type == LUA_TNIL) {
    for (int k = 0; k < nin; k++) inputs[nu++] = k;
  } else {
    if (type != LUA_TTABLE)
      luaL_error(L, "option 'inputs' must be an array of input names or a table {name = value}");
    int len = (int)luaL_len(L, -1);
    for (int i = 0; i < len; i++) {
      if (lua_geti(L, -1, i + 1) != LUA_TSTRING)
        luaL_error(L, "option 'inputs'[%d] must be an input name", i + 1);
      int k = input_index(L, model, lua_tostring(L, -1));
      if (set[k]) luaL_error(L, "option 'inputs' names '%s' twice", lua_tostring(L, -1));
      set[k] = 1;
      inputs[nu++] = k;
      lua_pop(L, 1);
    }
    lua_pushnil(L); /* {name = value}: the value at the operating point */
    while (lua_next(L, -2)) {
      if (lua_type(L, -2) == LUA_TSTRING) {
        if (lua_type(L, -1) != LUA_TNUMBER)
          luaL_error(L, "option 'inputs': the value of '%s' must be a number", lua_tostring(L, -2));
        int k = input_index(L, model, lua_tostring(L, -2));
        if (set[k]) luaL_error(L, "option 'inputs' names '%s' twice", lua_tostring(L, -2));
        set[k] = 1;
        uval[k] = lua_tonumber(L, -1);
        inputs[nu++] = k;
      } else if (!lua_isinteger(L, -2)) {
        luaL_error(L, "option 'inputs' must be an array of input names or a table {name = value}");
      }
      lua_pop(L, 1);
    }
  }
  lua_pop(L, 1);
  double *u = jyl_scratch(L, (size_t)nu + 1);
  for (int k = 0; k < nu; k++) u[k] = uval[inputs[k]];
  def.inputs = inputs;
  def.u = u;
  def.ninputs = nu;
  int ny = 0;
  type = lua_getfield(L, 2, "outputs");
  if (type != LUA_TNIL) {
    if (type != LUA_TTABLE) luaL_error(L, "option 'outputs' must be an array of channel names");
    int len = (int)luaL_len(L, -1);
    if (len > nch) luaL_error(L, "option 'outputs' names more channels than the model has");
    for (int i = 0; i < len; i++) {
      if (lua_geti(L, -1, i + 1) != LUA_TSTRING)
        luaL_error(L, "option 'outputs'[%d] must be a channel name", i + 1);
      int c = jy_model_find_channel(model, lua_tostring(L, -1));
      if (c < 0)
        unknown_model_name(L, model, "channel", lua_tostring(L, -1), nch, jy_model_channel_name);
      outputs[ny++] = c;
      lua_pop(L, 1);
    }
  }
  lua_pop(L, 1);
  def.outputs = outputs;
  def.noutputs = ny;
  for (int k = 0; k < nin; k++) set[k] = 0; /* every input is set through def.u */
  jyEval *e = eval_with_inputs(L, model, uval, set, nin);
  if (!e) return luaL_error(L, "%s", lua_tostring(L, -1));
  jyLinearization *lin = NULL;
  jyStatus st = jy_model_linearize(e, &def, &lin);
  if (st != JY_OK) return fail_with_eval(L, e, st);
  jy_eval_destroy(e);
  /* lin is freed before anything here can raise: copy it into scratch first */
  int nx = lin->nx, npos = lin->npos;
  size_t total = (size_t)nx * nx + (size_t)nx * nu + (size_t)ny * nx + (size_t)ny * nu;
  double *mats = jyl_scratch(L, total + 6);
  int *coords = (int *)lua_newuserdatauv(L, sizeof(int) * ((size_t)nx + 1), 0);
  memcpy(mats, lin->A, sizeof(double) * total); /* A, B, C, D are consecutive */
  for (int i = 0; i < nx; i++) coords[i] = lin->state_coord[i];
  double error = lin->error, errors[4];
  memcpy(errors, lin->error_abs, sizeof errors);
  jy_linearization_destroy(lin);
  lua_createtable(L, 0, 9);
  push_matrix(L, mats, nx, nx);
  lua_setfield(L, -2, "A");
  push_matrix(L, mats + (size_t)nx * nx, nx, nu);
  lua_setfield(L, -2, "B");
  push_matrix(L, mats + (size_t)nx * (nx + nu), ny, nx);
  lua_setfield(L, -2, "C");
  push_matrix(L, mats + (size_t)nx * (nx + nu) + (size_t)ny * nx, ny, nu);
  lua_setfield(L, -2, "D");
  lua_createtable(L, nx, 0);
  for (int i = 0; i < nx; i++) {
    const char *name = jy_model_coord_name(model, coords[i]);
    if (i < npos)
      lua_pushstring(L, name);
    else
      lua_pushfstring(L, "der(%s)", name);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "states");
  lua_createtable(L, nu, 0);
  for (int k = 0; k < nu; k++) {
    lua_pushstring(L, jy_model_input_name(model, inputs[k]));
    lua_rawseti(L, -2, k + 1);
  }
  lua_setfield(L, -2, "inputs");
  lua_createtable(L, ny, 0);
  for (int k = 0; k < ny; k++) {
    lua_pushstring(L, jy_model_channel_name(model, outputs[k]));
    lua_rawseti(L, -2, k + 1);
  }
  lua_setfield(L, -2, "outputs");
  lua_pushnumber(L, error);
  lua_setfield(L, -2, "error");
  lua_createtable(L, 0, 4);
  static const char *const names[] = {"A", "B", "C", "D"};
  for (int k = 0; k < 4; k++) {
    lua_pushnumber(L, errors[k]);
    lua_setfield(L, -2, names[k]);
  }
  lua_setfield(L, -2, "errors");
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

static const luaL_Reg model_meta[] = {
  {"__gc", model_gc}, {"__close", model_gc}, {"__tostring", model_tostring}, {NULL, NULL}};
static const luaL_Reg model_methods[] = {{"coords", model_coords},
                                         {"channels", model_channels},
                                         {"rows", model_rows},
                                         {"inputs", model_inputs},
                                         {"num_coords", model_num_coords},
                                         {"num_rows", model_num_rows},
                                         {"num_channels", model_num_channels},
                                         {"initial", model_initial},
                                         {"report", model_report},
                                         {"moved", model_moved},
                                         {"check", model_check},
                                         {"acceleration", model_acceleration},
                                         {"evaluate", model_evaluate},
                                         {"visuals", model_visuals},
                                         {"simulate", model_simulate},
                                         {"sim", model_sim},
                                         {"equilibrium", model_equilibrium},
                                         {"linearize", model_linearize},
                                         {"close", model_gc},
                                         {NULL, NULL}};

void jyl_open_model(lua_State *L) { jyl_new_class(L, JYL_MODEL, model_meta, model_methods); }
