/* lua/helpers.c — what the files of the binding share, at the bottom of lua/: messages and
 * "did you mean", arrays in and out, the classes' metatables, and the checks of the userdata
 * one file hands another (the environment, a System, a Model, with what a Model and its
 * Sims both do: release it, push its names and channel values). lua/module.c, at the top,
 * opens the module. */
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "binding.h"
#include "binding_private.h"
#include "joinery/joinery.h"

const char *jyl_msg_or(const char *msg, jyStatus status) {
  return msg && *msg ? msg : jy_status_text(status);
}

void jyl_push_list(lua_State *L, const char *const *names, int n) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (int i = 0; i < n; i++) {
    if (i) luaL_addstring(&b, ", ");
    luaL_addstring(&b, names[i]);
  }
  luaL_pushresult(&b);
}

int jyl_unknown_name(lua_State *L, const char *what, const char *name, const char *const *names,
                     int n) {
  const char *near = jy_nearest_name(name, names, n);
  jyl_push_list(L, names, n);
  if (near)
    return luaL_error(L, "unknown %s '%s'; did you mean '%s'? (valid: %s)", what, name, near,
                      lua_tostring(L, -1));
  return luaL_error(L, "unknown %s '%s' (valid: %s)", what, name, lua_tostring(L, -1));
}

void jyl_push_array(lua_State *L, const double *x, int n) {
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    lua_pushnumber(L, x[i]);
    lua_rawseti(L, -2, i + 1);
  }
}

void jyl_read_vector(lua_State *L, int idx, int n, double *out, const char *what) {
  luaL_checktype(L, idx, LUA_TTABLE);
  lua_Integer len = luaL_len(L, idx);
  if (len != n)
    luaL_argerror(L, idx, lua_pushfstring(L, "%s must have %d entries, got %d", what, n, (int)len));
  for (int i = 0; i < n; i++) {
    if (lua_geti(L, idx, i + 1) != LUA_TNUMBER)
      luaL_argerror(L, idx, lua_pushfstring(L, "%s[%d] is not a number", what, i + 1));
    out[i] = lua_tonumber(L, -1);
    lua_pop(L, 1);
  }
}

double *jyl_scratch(lua_State *L, size_t n) {
  return (double *)lua_newuserdatauv(L, n * sizeof(double), 0);
}

void jyl_new_class(lua_State *L, const char *name, const luaL_Reg *meta, const luaL_Reg *methods) {
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

jyEnv *jyl_upvalue_env(lua_State *L) {
  LEnv *e = (LEnv *)lua_touserdata(L, lua_upvalueindex(1));
  return e->env;
}

/* The jyEnv of the environment userdata at idx (upvalue 1 of the module's functions, a
 * system's user value 1), for the other files of the binding. */
jyEnv *jyl_env_of(lua_State *L, int idx) {
  LEnv *e = (LEnv *)luaL_testudata(L, idx, JYL_ENV);
  return e ? e->env : NULL;
}

/* ---- the userdata the files hand each other -------------------------------------------- */

LSystem *jyl_check_system(lua_State *L, int idx) {
  LSystem *s = (LSystem *)luaL_checkudata(L, idx, JYL_SYSTEM);
  if (!s->sys) luaL_error(L, "the system is closed");
  return s;
}

jySystem *jyl_system_of(lua_State *L, int idx) { return jyl_check_system(L, idx)->sys; }

void jyl_model_release(LModel *m) {
  jy_eval_destroy(m->eval);
  m->eval = NULL;
  jy_model_destroy(m->model);
  m->model = NULL;
}

LModel *jyl_check_model(lua_State *L, int idx) {
  LModel *m = (LModel *)luaL_checkudata(L, idx, JYL_MODEL);
  if (!m->model || m->closed) luaL_error(L, "the model is closed");
  return m;
}

int jyl_push_names(lua_State *L, const jyModel *model, int n, jylNameFn fn) {
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    lua_pushstring(L, fn(model, i));
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

void jyl_push_channel_table(lua_State *L, const jyModel *model, const double *x) {
  int nch = jy_model_num_channels(model);
  lua_createtable(L, 0, nch);
  for (int i = 0; i < nch; i++) {
    lua_pushnumber(L, x[i]);
    lua_setfield(L, -2, jy_model_channel_name(model, i));
  }
}
