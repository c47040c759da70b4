/* lua/plugin.c — part types from C plugins, and the conformance suite, for Lua scripts.
 *
 *   joinery.load_plugin(path)        loads a shared library built against joinery/plugin.h
 *                                    and runs its jy_plugin_init, which registers part
 *                                    types; returns the array of the type names it added.
 *                                    Loading the same library again returns the same
 *                                    names and registers nothing.
 *                                    Errors (missing file, no entry point, a type built for
 *                                    another protocol version, a failing init) are Lua
 *                                    errors at the script line. A path without '/' is
 *                                    searched like dlopen does; write "./x.so" for the
 *                                    current directory.
 *   joinery.check_part(type[, params[, opts]])
 *                                    runs the conformance suite (joinery/conformance.h)
 *                                    over a registered type. params: {name = value} fixes
 *                                    parameters; opts: {seed =, states =, random_params =
 *                                    bool, conservative = bool}. Returns {passed = bool,
 *                                    type =, instances =, rejected =, states =, log =,
 *                                    failed = {names of failed checks}, checks = {[name] =
 *                                    {count =, failed =, worst =, tol =, advisory = bool,
 *                                    passed = bool, what =, where =}}}.
 *
 * Lifetime: a plugin's code must stay mapped while its part types may be used, i.e. until
 * the environment is destroyed. The handles live in a holder userdata that is kept alive
 * exactly as long as the environment userdata (a weak-keyed registry table maps the
 * environment to it, and the functions that use it hold both). Both therefore become
 * garbage in the same collection, and Lua runs finalizers in the reverse order of their
 * creation: the holder (created after the environment) goes first, so its finalizer
 * destroys the environment itself (the environment's own finalizer then finds nothing to
 * do) and only then closes the libraries.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "binding.h"
#include "sandbox.h"
#include "joinery/conformance.h"
#include "joinery/joinery.h"
#include "joinery/plugin.h"

#define JYL_PLUGINS "joinery.Plugins"
#define JYL_PLUGIN_HOLDERS "joinery.plugin_holders"

typedef struct LPlugin {
  void *handle;     /* from dlopen */
  int first, count; /* the environment's types first .. first + count - 1 came from it */
} LPlugin;

typedef struct LPlugins {
  jyEnv **env_slot; /* inside the environment userdata */
  LPlugin *plugins; /* in load order (malloc'ed) */
  int n, cap;
} LPlugins;

static int plugins_gc(lua_State *L) {
  LPlugins *p = (LPlugins *)luaL_checkudata(L, 1, JYL_PLUGINS);
  if (p->n > 0 && p->env_slot && *p->env_slot) {
    /* The environment is garbage too and its finalizer has not run yet (see the top):
     * release the plugins' types while their code is still there. */
    jy_env_destroy(*p->env_slot);
    *p->env_slot = NULL;
  }
  for (int i = p->n - 1; i >= 0; i--) dlclose(p->plugins[i].handle);
  free(p->plugins);
  p->plugins = NULL;
  p->n = p->cap = 0;
  return 0;
}

static LPlugins *holder(lua_State *L) { return (LPlugins *)lua_touserdata(L, lua_upvalueindex(2)); }

static jyEnv *holder_env(lua_State *L) {
  LPlugins *p = holder(L);
  if (!p->env_slot || !*p->env_slot) luaL_error(L, "joinery: the environment is closed");
  return *p->env_slot;
}

/* The names of types first .. first + count - 1, as an array. */
static int push_names(lua_State *L, const jyEnv *env, int first, int count) {
  lua_createtable(L, count, 0);
  for (int i = 0; i < count; i++) {
    lua_pushstring(L, jy_env_type(env, first + i)->name);
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

/* joinery.load_plugin(path); upvalues: env userdata, holder */
static int l_load_plugin(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  jyl_sandbox_refuse(L, "joinery.load_plugin"); /* a library's constructors run on dlopen */
  LPlugins *p = holder(L);
  jyEnv *env = holder_env(L);
  if (p->n == p->cap) { /* room first, so a loaded library is never lost */
    int cap = p->cap ? 2 * p->cap : 4;
    LPlugin *plugins = (LPlugin *)realloc(p->plugins, sizeof *plugins * (size_t)cap);
    if (!plugins) return luaL_error(L, "load_plugin: out of memory");
    p->plugins = plugins;
    p->cap = cap;
  }
  dlerror();
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *why = dlerror();
    return luaL_error(L, "load_plugin: cannot load plugin '%s': %s", path,
                      why ? why : "dlopen failed");
  }
  for (int i = 0; i < p->n; i++)
    if (p->plugins[i].handle == h) { /* loaded before: the same types again */
      dlclose(h);                    /* drops the reference this dlopen added */
      return push_names(L, env, p->plugins[i].first, p->plugins[i].count);
    }
  void *sym = dlsym(h, JY_PLUGIN_INIT_SYMBOL);
  if (!sym) {
    dlclose(h);
    return luaL_error(L,
                      "load_plugin: '%s' is not a joinery plugin: it has no entry point %s "
                      "(define one with JY_PLUGIN_ENTRY from joinery/plugin.h)",
                      path, JY_PLUGIN_INIT_SYMBOL);
  }
  jyPluginInit init;
  memcpy(&init, &sym, sizeof init); /* POSIX: dlsym's object pointer is the function */
  int before = jy_env_num_types(env);
  char error[512] = "";
  /* a version 1 plugin exports no version and accepts only a host that says 1 */
  unsigned speaks = jy_plugin_host_version(dlsym(h, JY_PLUGIN_VERSION_SYMBOL));
  int rc = init(env, speaks, error, sizeof error);
  int after = jy_env_num_types(env);
  if (after > before || rc == 0) /* its types are registered: keep its code until the end */
    p->plugins[p->n++] = (LPlugin){h, before, after - before};
  else
    dlclose(h);
  if (rc != 0)
    return luaL_error(L, "load_plugin: plugin '%s' failed to register its part types: %s", path,
                      error[0] ? error : "its entry point failed without a message");
  return push_names(L, env, before, after - before);
}

/* ---- check_part ------------------------------------------------------------------------- */

static const jyPartType *check_type(lua_State *L, jyEnv *env, const char *name) {
  const jyPartType *type = jy_env_find_type(env, name);
  if (type) return type;
  int n = jy_env_num_types(env);
  const char **names = (const char **)lua_newuserdatauv(L, sizeof *names * (size_t)(n + 1), 0);
  for (int i = 0; i < n; i++) names[i] = jy_env_type(env, i)->name;
  const char *near = jy_nearest_name(name, names, n);
  if (near) luaL_error(L, "check_part: unknown part type '%s'; did you mean '%s'?", name, near);
  luaL_error(L, "check_part: unknown part type '%s' (joinery.types() lists them)", name);
  return NULL;
}

/* The settings of the params table (at idx) into a scratch array left on the stack; the
 * conformance suite resolves their names through the engine's parameter door. */
static int read_settings(lua_State *L, int idx, const jyPartType *type, jyParamSetting **out) {
  int n = 0;
  if (lua_isnoneornil(L, idx)) {
    *out = NULL;
    return 0;
  }
  luaL_checktype(L, idx, LUA_TTABLE);
  for (lua_pushnil(L); lua_next(L, idx); lua_pop(L, 1)) n++;
  jyParamSetting *s = (jyParamSetting *)lua_newuserdatauv(L, sizeof *s * (size_t)(n + 1), 0);
  int k = 0;
  for (lua_pushnil(L); lua_next(L, idx); lua_pop(L, 1)) {
    if (lua_type(L, -2) != LUA_TSTRING)
      luaL_error(L, "check_part: parameter names must be strings");
    const char *name = lua_tostring(L, -2); /* the key stays in the table: pointer valid */
    if (lua_type(L, -1) != LUA_TNUMBER)
      luaL_error(L, "check_part: %s: parameter '%s' must be a number, got %s", type->name, name,
                 luaL_typename(L, -1));
    s[k].name = name;
    s[k].value = lua_tonumber(L, -1);
    k++;
  }
  *out = s;
  return k;
}

static void read_def(lua_State *L, int idx, jyConformanceDef *def) {
  if (lua_isnoneornil(L, idx)) return;
  luaL_checktype(L, idx, LUA_TTABLE);
  if (lua_getfield(L, idx, "seed") != LUA_TNIL) {
    lua_Integer seed = luaL_checkinteger(L, -1);
    def->seed = (unsigned)seed;
  }
  if (lua_getfield(L, idx, "states") != LUA_TNIL) {
    lua_Integer n = luaL_checkinteger(L, -1);
    if (n < 1 || n > 1000) luaL_error(L, "check_part: states must be 1..1000, got %d", (int)n);
    def->nstates = (int)n;
  }
  if (lua_getfield(L, idx, "random_params") != LUA_TNIL) def->random_params = lua_toboolean(L, -1);
  if (lua_getfield(L, idx, "conservative") != LUA_TNIL) def->conservative = lua_toboolean(L, -1);
  lua_pop(L, 4);
}

static void push_report(lua_State *L, const jyPartType *type, const jyConformanceReport *r) {
  lua_createtable(L, 0, 8);
  lua_pushboolean(L, r->passed);
  lua_setfield(L, -2, "passed");
  lua_pushstring(L, type->name);
  lua_setfield(L, -2, "type");
  lua_pushinteger(L, r->instances);
  lua_setfield(L, -2, "instances");
  lua_pushinteger(L, r->rejected);
  lua_setfield(L, -2, "rejected");
  lua_pushinteger(L, r->states);
  lua_setfield(L, -2, "states");
  lua_pushstring(L, r->log);
  lua_setfield(L, -2, "log");
  lua_newtable(L);                       /* failed */
  lua_createtable(L, 0, JY_CHECK_COUNT); /* checks */
  int nfailed = 0;
  for (int i = 0; i < JY_CHECK_COUNT; i++) {
    const jyCheckResult *c = &r->checks[i];
    int passed = c->failed == 0;
    lua_createtable(L, 0, 8);
    lua_pushinteger(L, c->count);
    lua_setfield(L, -2, "count");
    lua_pushinteger(L, c->failed);
    lua_setfield(L, -2, "failed");
    lua_pushnumber(L, c->worst);
    lua_setfield(L, -2, "worst");
    lua_pushnumber(L, c->tol);
    lua_setfield(L, -2, "tol");
    lua_pushboolean(L, c->advisory);
    lua_setfield(L, -2, "advisory");
    lua_pushboolean(L, passed);
    lua_setfield(L, -2, "passed");
    lua_pushstring(L, c->what);
    lua_setfield(L, -2, "what");
    lua_pushstring(L, c->where);
    lua_setfield(L, -2, "where");
    lua_setfield(L, -2, c->name);
    if (!passed && !c->advisory) {
      lua_pushstring(L, c->name);
      lua_rawseti(L, -3, ++nfailed);
    }
  }
  lua_setfield(L, -3, "checks");
  lua_setfield(L, -2, "failed");
}

/* joinery.check_part(type[, params[, opts]]); upvalues: env userdata, holder */
static int l_check_part(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  jyEnv *env = holder_env(L);
  const jyPartType *type = check_type(L, env, name);
  jyConformanceDef def = jy_default_conformance_def();
  read_def(L, 3, &def);
  jyParamSetting *settings;
  int n = read_settings(L, 2, type, &settings);
  jyConformanceReport *report = (jyConformanceReport *)lua_newuserdatauv(L, sizeof *report, 0);
  jyStatus status = jy_check_part_type_def(env, type, settings, n, &def, report);
  if (status != JY_OK) {
    lua_pushlstring(L, report->log, strcspn(report->log, "\n")); /* its first line */
    if (lua_rawlen(L, -1) > 0) return luaL_error(L, "check_part: %s", lua_tostring(L, -1));
    return luaL_error(L, "check_part: %s: %s", type->name, jy_status_text(status));
  }
  push_report(L, type, report);
  return 1;
}

/* ---- registration ----------------------------------------------------------------------- */

void jyl_open_plugin(lua_State *L, int env_index, struct jyEnv **env_slot) {
  env_index = lua_absindex(L, env_index);
  int module = lua_gettop(L);
  if (luaL_newmetatable(L, JYL_PLUGINS)) {
    lua_pushcfunction(L, plugins_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_pop(L, 1);
  LPlugins *p = (LPlugins *)lua_newuserdatauv(L, sizeof *p, 0);
  memset(p, 0, sizeof *p);
  luaL_setmetatable(L, JYL_PLUGINS); /* marked for finalization after the environment */
  p->env_slot = env_slot;
  int holder_index = lua_gettop(L);

  /* registry[JYL_PLUGIN_HOLDERS][env] = holder, with weak keys: the holder lives exactly as
   * long as the environment. */
  if (luaL_getsubtable(L, LUA_REGISTRYINDEX, JYL_PLUGIN_HOLDERS) == 0) {
    lua_createtable(L, 0, 1);
    lua_pushliteral(L, "k");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
  }
  lua_pushvalue(L, env_index);
  lua_pushvalue(L, holder_index);
  lua_rawset(L, -3);
  lua_pop(L, 1);

  static const luaL_Reg funcs[] = {
    {"load_plugin", l_load_plugin}, {"check_part", l_check_part}, {NULL, NULL}};
  for (const luaL_Reg *f = funcs; f->name; f++) {
    lua_pushvalue(L, env_index);
    lua_pushvalue(L, holder_index);
    lua_pushcclosure(L, f->func, 2);
    lua_setfield(L, module, f->name);
  }
  lua_settop(L, module);
}
