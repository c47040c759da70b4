/* lua/module.c — the Lua 5.4 module "joinery": a thin binding of joinery/joinery.h. This file
 * opens the module (its environment, the module functions, every other file's part of the
 * API), on top of the others; the helpers they share are in lua/helpers.c, the objects in
 * lua/system.c (System, Part, Terminal), lua/model.c (Model), lua/simulation.c (Sim, runs)
 * and their settings in lua/settings.c.
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
 *   joinery.system{gravity = {gx[, gy[, gz]]}}     -> System (lua/system.c; table and
 *                                   gravity optional; missing components are 0)
 *
 * Errors in the use of the API are Lua errors located at the calling script line
 * ("model.lua:12: ..."), with the engine's message. Closed objects raise "... is closed".
 * No Lua error is raised while an engine function is on the C stack.
 */
#include "binding.h"
#include "prelude.h"

#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "binding_private.h"
#include "joinery/joinery.h"

/* ---- environment ----------------------------------------------------------------------- */

static int env_gc(lua_State *L) {
  LEnv *e = (LEnv *)luaL_checkudata(L, 1, JYL_ENV);
  jy_env_destroy(e->env);
  e->env = NULL;
  return 0;
}

/* ---- joinery.types and joinery.describe ------------------------------------------------ */

/* joinery.types() */
static int l_types(lua_State *L) {
  jyEnv *env = jyl_upvalue_env(L);
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
  case JY_PARAM_POSITIVE:
    return "positive";
  case JY_PARAM_NONNEGATIVE:
    return "nonnegative";
  case JY_PARAM_DIMENSION:
    return "dimension";
  case JY_PARAM_BOUND:
    return "bound";
  default:
    return "real";
  }
}

static void push_string_list(lua_State *L, const char *const *names, int n) {
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    lua_pushstring(L, names[i]);
    lua_rawseti(L, -2, i + 1);
  }
}

/* Pushes the array of the type's parameter records and fills defaults[] with their defaults. */
static void push_params(lua_State *L, const jyPartType *type, double *defaults) {
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
}

/* Sets terminals, coords, rows and outputs of a shape in the table at res. */
static void set_shape_fields(lua_State *L, int res, const jyPartShape *shape) {
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
}

/* Raises "unknown part type" with the registered names. */
static int unknown_type(lua_State *L, jyEnv *env, const char *name) {
  int n = jy_env_num_types(env);
  const char **names = (const char **)lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof *names, 0);
  for (int i = 0; i < n; i++) names[i] = jy_env_type(env, i)->name;
  return jyl_unknown_name(L, "part type", name, names, n);
}

/* joinery.describe(type) */
static int l_describe(lua_State *L) {
  jyEnv *env = jyl_upvalue_env(L);
  const char *name = luaL_checkstring(L, 1);
  const jyPartType *type = jy_env_find_type(env, name);
  if (!type) return unknown_type(L, env, name);
  lua_createtable(L, 0, 8);
  int res = lua_gettop(L);
  lua_pushstring(L, type->name);
  lua_setfield(L, res, "name");
  lua_pushstring(L, type->doc ? type->doc : "");
  lua_setfield(L, res, "doc");
  double *defaults = jyl_scratch(L, (size_t)(type->nparams > 0 ? type->nparams : 1));
  push_params(L, type, defaults);
  lua_setfield(L, res, "params");

  jyPartShape *shape = (jyPartShape *)lua_newuserdatauv(L, sizeof *shape, 0);
  memset(shape, 0, sizeof *shape);
  char error[256] = "";
  if (type->shape && type->shape(type, defaults, shape, error, sizeof error) == 0) {
    set_shape_fields(L, res, shape);
  } else {
    lua_pushstring(L, error[0] ? error : "the default parameters make no part");
    lua_setfield(L, res, "shape_error");
  }
  lua_settop(L, res);
  return 1;
}

/* ---- opening the module ---------------------------------------------------------------- */

static const luaL_Reg env_meta[] = {{"__gc", env_gc}, {NULL, NULL}};

/* Module functions; upvalue 1 = the env userdata. */
static const luaL_Reg module_funcs[] = {
  {"system", jyl_system_new}, {"types", l_types}, {"describe", l_describe}, {NULL, NULL}};

int luaopen_joinery(lua_State *L) {
  luaL_checkversion(L);
  jyl_new_class(L, JYL_ENV, env_meta, NULL);
  jyl_open_system(L);     /* lua/system.c: System, Part, Terminal */
  jyl_open_model(L);      /* lua/model.c */
  jyl_open_simulation(L); /* lua/simulation.c: Sim */

  LEnv *e = (LEnv *)lua_newuserdatauv(L, sizeof *e, 0);
  e->env = NULL;
  luaL_setmetatable(L, JYL_ENV);
  e->env = jy_env_create(NULL);
  if (!e->env) return luaL_error(L, "joinery: out of memory creating the environment");
  jyStatus st = jy_components_register(e->env);
  if (st != JY_OK)
    return luaL_error(L, "joinery: registering the built-in parts failed: %s",
                      jyl_msg_or(jy_env_error(e->env), st));

  luaL_newlibtable(L, module_funcs);
  lua_pushvalue(L, -2);
  luaL_setfuncs(L, module_funcs, 1);
  lua_pushstring(L, jy_version());
  lua_setfield(L, -2, "version");
  jyl_open_math(L);
  jyl_open_plugin(L, -2, &e->env); /* lua/plugin.c: load_plugin, check_part */
  jyl_open_parts(L, -2);           /* lua/parts/part_type.c, eval_part.c, jet.c */
  jyl_open_channel(L);             /* lua/channel.c: sys:channel */
  jyl_open_event(L);               /* lua/event.c: sys:event */
  jyl_open_input(L);               /* lua/input.c: sys:input */
  jyl_open_control(L, -1);         /* lua/control.c: joinery.lqr */
  jyl_open_result_file(L);         /* lua/result_file.c: joinery.read_h5 */
  jyl_open_prelude(L, -1); /* lua/prelude.c: sys:constrain, sys:load, body:point, sys:pin ... */
  return 1;
}

void jyl_open_libs(lua_State *L) {
  luaL_openlibs(L);
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_pushcfunction(L, luaopen_joinery);
  lua_setfield(L, -2, "joinery");
  lua_pop(L, 1);
}
