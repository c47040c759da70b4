/* lua/input.c — sys:input{...}: a named input of the model (jy_system_add_input,
 * docs/control.md).
 *
 *   sys:input { name = "u", value = 0, unit = "N" }                  -- held: sim:set_input
 *   sys:input { name = "road", t = {0, 1, 1.1}, u = {0, 0, 0.05}, interp = "linear" }
 *   sys:input { name = "ref", fn = function(t) return M.sin(t) end, breakpoints = {2, 4} }
 *
 * A table is piecewise "constant", "linear" (the default) or "cubic" (the natural spline);
 * every t is a breakpoint. A function of t is called with a hyper-dual t (joinery.math), so
 * that its value, rate and acceleration come from one call (a motor prescribed by it is an
 * exact rheonomic row); one that returns a plain number has rate and acceleration 0. Its
 * breakpoints are where it jumps or kinks: the integrator stops and restarts there.
 *
 * How: a function input has a context userdata (as sys:channel's) whose user value 1 is a
 * Lua thread holding the message handler and the function; the engine's callback
 * lua_pcalls on that thread, so a Lua error never unwinds through engine frames. */
#include "binding.h"
#include "lua_call.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "joinery/joinery.h"

#define JYL_INPUT "joinery.Input"

typedef struct InputCtx {
  lua_State *T; /* stack: 1 message handler, 2 the function */
  const char *name;
  int busy;
  char fn_at[160]; /* "file:line" where the function is defined */
} InputCtx;

static int input_fn(void *ud, double t, double out[3], char *error, size_t error_len) {
  InputCtx *c = (InputCtx *)ud;
  lua_State *T = c->T;
  if (c->busy) {
    snprintf(error, error_len, "its function was called again from inside itself");
    return 1;
  }
  c->busy = 1;
  lua_settop(T, 2);
  lua_pushvalue(T, 2);
  jyl_push_hyper(T, t, 1.0, 1.0, 0.0); /* t + e1 + e2: f, f' (e1), f' (e2), f'' (e12) */
  int st = lua_pcall(T, 1, 1, 1);
  c->busy = 0;
  int failed = 1;
  double h[4];
  if (st != LUA_OK) {
    const char *msg = lua_tostring(T, -1);
    snprintf(error, error_len,
             "%s (a signal's function is called with a hyper-dual t for its derivatives: "
             "compute with joinery.math's functions)",
             msg ? msg : "error in its function");
  } else if (jyl_to_hyper(T, -1, h) < 0) {
    snprintf(error, error_len, "its function (%s) returned %s, not a number", c->fn_at,
             luaL_typename(T, -1));
  } else {
    out[0] = h[0], out[1] = h[1], out[2] = h[3];
    failed = 0;
  }
  lua_settop(T, 2);
  return failed;
}

/* Array field `key` of the table at tbl as numbers into a userdata pushed on L: its length. */
static int read_numbers(lua_State *L, int tbl, const char *key, const char *name, double **out) {
  lua_getfield(L, tbl, key);
  if (!lua_istable(L, -1))
    return luaL_error(L, "input '%s': %s must be an array of numbers", name, key);
  int count = (int)lua_rawlen(L, -1);
  double *x = (double *)lua_newuserdatauv(L, sizeof *x * (size_t)(count + 1), 0);
  for (int i = 0; i < count; i++) {
    lua_rawgeti(L, -2, i + 1);
    int isnum = 0;
    x[i] = lua_tonumberx(L, -1, &isnum);
    if (!isnum)
      return luaL_error(L, "input '%s': %s[%d] is %s, not a number", name, key, i + 1,
                        luaL_typename(L, -1));
    lua_pop(L, 1);
  }
  lua_remove(L, -2);
  *out = x;
  return count;
}

static void check_keys(lua_State *L, int tbl) {
  static const char *const keys[] = {"name", "value", "unit", "t", "u", "interp", "fn",
                                     "breakpoints"};
  const int nkeys = (int)(sizeof keys / sizeof keys[0]);
  lua_pushnil(L);
  while (lua_next(L, tbl)) {
    lua_pop(L, 1);
    int known = 0;
    if (lua_type(L, -1) == LUA_TSTRING)
      for (int k = 0; k < nkeys; k++) known |= strcmp(lua_tostring(L, -1), keys[k]) == 0;
    if (!known) {
      const char *bad = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "(not a string)";
      const char *near = jy_nearest_name(bad, keys, nkeys);
      luaL_error(L,
                 "sys:input: unknown key '%s'%s%s%s (its keys: name, value, unit; t, u, interp "
                 "for a table; fn, breakpoints for a function)",
                 bad, near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
    }
  }
}

static jyInterp interp_of(lua_State *L, int tbl, const char *name) {
  lua_getfield(L, tbl, "interp");
  const char *s = lua_tostring(L, -1);
  jyInterp interp = JY_INTERP_LINEAR;
  if (lua_isnil(L, -1) || (s && strcmp(s, "linear") == 0))
    interp = JY_INTERP_LINEAR;
  else if (s && strcmp(s, "constant") == 0)
    interp = JY_INTERP_CONSTANT;
  else if (s && strcmp(s, "cubic") == 0)
    interp = JY_INTERP_CUBIC;
  else
    luaL_error(L, "input '%s': interp must be \"constant\", \"linear\" or \"cubic\", got %s", name,
               s ? s : luaL_typename(L, -1));
  lua_pop(L, 1);
  return interp;
}

/* The function input's context, anchored in the system's user value 2 like a channel's. */
static InputCtx *new_context(lua_State *L, int fn_idx, const char *name) {
  InputCtx *c = (InputCtx *)lua_newuserdatauv(L, sizeof *c, 2);
  int ctx = lua_gettop(L);
  memset(c, 0, sizeof *c);
  luaL_setmetatable(L, JYL_INPUT);
  lua_pushstring(L, name);
  c->name = lua_tostring(L, -1);
  lua_setiuservalue(L, ctx, 2);
  lua_Debug ar;
  lua_pushvalue(L, fn_idx);
  lua_getinfo(L, ">S", &ar);
  snprintf(c->fn_at, sizeof c->fn_at, "%s:%d", ar.short_src, ar.linedefined);
  c->T = lua_newthread(L);
  lua_setiuservalue(L, ctx, 1);
  jyl_push_msgh(c->T, JYL_MSGH_LOCATE);
  lua_pushvalue(L, fn_idx);
  lua_xmove(L, c->T, 1);
  lua_getiuservalue(L, 1, 2);
  if (lua_getfield(L, -1, "inputs") != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, "inputs");
  }
  lua_pushvalue(L, ctx);
  lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
  lua_pop(L, 2);
  return c;
}

static int fail(lua_State *L, jySystem *sys, jyStatus st) {
  const char *msg = jy_system_error(sys);
  return luaL_error(L, "%s", msg && *msg ? msg : jy_status_text(st));
}

/* sys:input{...} -> the input's name */
static int sys_input(lua_State *L) {
  jySystem *sys = jyl_system_of(L, 1);
  if (lua_type(L, 2) != LUA_TTABLE)
    return luaL_error(L, "sys:input takes a table: sys:input { name = \"u\", value = 0, unit = "
                         "\"N\" } (or t =, u = for a table, fn = for a function of t)");
  lua_settop(L, 2);
  check_keys(L, 2);
  if (lua_getfield(L, 2, "name") != LUA_TSTRING)
    return luaL_error(L, "sys:input needs name = \"...\" (a string), got %s", luaL_typename(L, -1));
  const char *name = lua_tostring(L, 3);
  int has_table = lua_getfield(L, 2, "t") != LUA_TNIL;
  int has_fn = lua_getfield(L, 2, "fn") != LUA_TNIL;
  int has_value = lua_getfield(L, 2, "value") != LUA_TNIL;
  lua_pop(L, 3);
  if (has_table + has_fn + has_value > 1)
    return luaL_error(L, "input '%s': give one of value (held), t and u (a time table), fn (a "
                         "function of t)", name);
  double value = 0;
  if (has_value) {
    lua_getfield(L, 2, "value");
    int isnum = 0;
    value = lua_tonumberx(L, -1, &isnum);
    if (!isnum) return luaL_error(L, "input '%s': value must be a number", name);
    lua_pop(L, 1);
  }
  lua_getfield(L, 2, "unit");
  const char *unit = lua_isnil(L, -1) ? NULL : lua_tostring(L, -1);
  if (!lua_isnil(L, -1) && lua_type(L, -1) != LUA_TSTRING)
    return luaL_error(L, "input '%s': unit must be a string", name);
  if (jy_system_add_input(sys, name, value, unit) < 0) return fail(L, sys, JY_ERR_INVALID);
  jyStatus st = JY_OK;
  if (has_table) {
    jyInterp interp = interp_of(L, 2, name);
    double *t = NULL, *u = NULL;
    int nt = read_numbers(L, 2, "t", name, &t), nu = read_numbers(L, 2, "u", name, &u);
    if (nt != nu)
      return luaL_error(L, "input '%s': t has %d values and u %d: one u for each t", name, nt, nu);
    st = jy_system_input_table(sys, name, interp, nt, t, u);
  } else if (has_fn) {
    lua_getfield(L, 2, "fn");
    if (!lua_isfunction(L, -1))
      return luaL_error(L, "input '%s': fn must be a function(t), got %s", name,
                        luaL_typename(L, -1));
    int fn_idx = lua_gettop(L);
    double *breaks = NULL;
    int nbreaks = 0;
    if (lua_getfield(L, 2, "breakpoints") != LUA_TNIL) nbreaks = read_numbers(L, 2, "breakpoints", name, &breaks);
    InputCtx *c = new_context(L, fn_idx, name);
    st = jy_system_input_function(sys, name, input_fn, c, nbreaks, breaks);
  } else {
    lua_getfield(L, 2, "interp");
    lua_getfield(L, 2, "breakpoints");
    if (!lua_isnil(L, -1) || !lua_isnil(L, -2))
      return luaL_error(L, "input '%s': interp and breakpoints are for a time table or a function",
                        name);
  }
  if (st != JY_OK) return fail(L, sys, st);
  lua_pushstring(L, name);
  return 1;
}

void jyl_open_input(lua_State *L) {
  int top = lua_gettop(L);
  luaL_newmetatable(L, JYL_INPUT);
  lua_pop(L, 1);
  luaL_getmetatable(L, JYL_SYSTEM);
  lua_getfield(L, -1, "__index");
  lua_pushcfunction(L, sys_input);
  lua_setfield(L, -2, "input");
  lua_settop(L, top);
}
