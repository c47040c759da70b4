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
 */
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

/* model:simulate([opts]) */
static int model_simulate(lua_State *L) {
  LModel *m = jyl_check_model(L, 1);
  jySimDef d = m->def;
  const char *out = NULL;
  if (!lua_isnoneornil(L, 2)) jyl_read_settings(L, 2, &d, NULL, &out);
  lua_settop(L, 2);
  jylRunOpts opts = {out, 0, NULL};
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
                                         {"acceleration", model_acceleration},
                                         {"evaluate", model_evaluate},
                                         {"simulate", model_simulate},
                                         {"sim", model_sim},
                                         {"close", model_gc},
                                         {NULL, NULL}};

void jyl_open_model(lua_State *L) { jyl_new_class(L, JYL_MODEL, model_meta, model_methods); }
