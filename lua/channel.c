/* lua/channel.c — sys:channel(name, fn): a user-defined output channel computed by a Lua
 * function of the output row (jy_system_add_channel).
 *
 *   sys:channel("tip_y", function(s) return s["arm.y"] + 0.5 * math.sin(s["arm.theta"]) end)
 *
 * s reads the row by channel name (s.t, s["p1.theta"], s["der(p1.theta)"], s.energy,
 * s["force.hinge.x"], the parts' outputs, and the user channels defined before this one);
 * it is valid only during the call. The function returns one finite number. The channel is
 * a CSV column, a field of simulate's result and of model:evaluate, like any other.
 *
 * How: each channel has a context userdata (ChanCtx) whose user value 1 is a Lua thread of
 * its own; that thread's stack holds the message handler, the function and the proxy s, so
 * the engine's callback calls the function with lua_pcall on that thread and never lets a
 * Lua error unwind through engine frames. The contexts are kept in a list in the system's
 * user value 2 (which every model compiled from the system references as its own user value
 * 2), so they live as long as the system or any of its models, with no registry
 * references. Errors carry the script line (the message handler adds the innermost one) and
 * the engine adds the channel's name and the time.
 */
#include "binding.h"
#include "lua_call.h"

#include <stdio.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "joinery/joinery.h"

#define JYL_CHANNEL "joinery.Channel"

typedef struct ChanCtx {
  lua_State *T;         /* stack: 1 message handler, 2 function, 3 proxy s */
  const char *name;     /* anchored by user value 2 */
  const jyModel *model; /* during a call */
  const double *row;    /* during a call; NULL otherwise */
  int limit;            /* channels [0, limit) are readable */
} ChanCtx;

/* s[name]; upvalue 1 = the context userdata. */
static int proxy_index(lua_State *L) {
  ChanCtx *c = (ChanCtx *)lua_touserdata(L, lua_upvalueindex(1));
  const char *key = lua_tostring(L, 2);
  if (!c->row)
    return luaL_error(L, "channel '%s': the row s is readable only while the function runs",
                      c->name);
  if (lua_type(L, 2) != LUA_TSTRING)
    return luaL_error(L, "the row is read by channel name (s[\"part.coord\"]), not by a %s",
                      luaL_typename(L, 2));
  int i = jy_model_find_channel(c->model, key);
  if (i >= 0 && i < c->limit) {
    lua_pushnumber(L, c->row[i]);
    return 1;
  }
  if (i >= c->limit)
    return luaL_error(L,
                      "channel '%s' cannot read '%s', which comes after it (a user channel "
                      "reads the built-in channels and the user channels defined before it)",
                      c->name, key);
  int n = c->limit;
  const char **names = (const char **)lua_newuserdatauv(L, sizeof *names * (size_t)(n + 1), 0);
  for (int k = 0; k < n; k++) names[k] = jy_model_channel_name(c->model, k);
  const char *near = jy_nearest_name(key, names, n);
  if (near) return luaL_error(L, "no channel '%s'; did you mean '%s'?", key, near);
  return luaL_error(L, "no channel '%s' (model:channels() lists them)", key);
}

static int proxy_newindex(lua_State *L) { return luaL_error(L, "the row s is read-only"); }

/* The engine's callback. */
static int chan_fn(void *ud, const jyModel *model, const double *row, double *value, char *error,
                   size_t error_len) {
  ChanCtx *c = (ChanCtx *)ud;
  lua_State *T = c->T;
  if (c->row) { /* the function started a simulation that reads this channel again */
    snprintf(error, error_len, "the channel function was called again from inside itself");
    return 1;
  }
  c->model = model;
  c->row = row;
  /* Readable: everything before this channel (the last one of its name: a user channel
   * named like a built-in one must not see itself). */
  c->limit = 0;
  for (int i = jy_model_num_channels(model) - 1; i >= 0; i--)
    if (strcmp(jy_model_channel_name(model, i), c->name) == 0) {
      c->limit = i;
      break;
    }
  lua_settop(T, 3);
  lua_pushvalue(T, 2);
  lua_pushvalue(T, 3);
  int st = lua_pcall(T, 1, 1, 1);
  c->row = NULL;
  c->model = NULL;
  int failed = 0;
  if (st != LUA_OK) {
    const char *msg = lua_tostring(T, -1);
    snprintf(error, error_len, "%s", msg ? msg : "error in the channel function");
    failed = 1;
  } else if (lua_type(T, -1) != LUA_TNUMBER) {
    snprintf(error, error_len, "the function must return a number, got %s", luaL_typename(T, -1));
    failed = 1;
  } else {
    *value = lua_tonumber(T, -1);
  }
  lua_settop(T, 3);
  return failed;
}

/* sys:channel(name, fn) */
static int sys_channel(lua_State *L) {
  jySystem *sys = jyl_system_of(L, 1);
  const char *name = luaL_checkstring(L, 2);
  luaL_checktype(L, 3, LUA_TFUNCTION);
  lua_settop(L, 3);
  ChanCtx *c = (ChanCtx *)lua_newuserdatauv(L, sizeof *c, 2); /* 4 */
  memset(c, 0, sizeof *c);
  luaL_setmetatable(L, JYL_CHANNEL);
  lua_pushvalue(L, 2);
  c->name = lua_tostring(L, -1);
  lua_setiuservalue(L, 4, 2);
  c->T = lua_newthread(L);
  lua_setiuservalue(L, 4, 1);
  lua_State *T = c->T;
  jyl_push_msgh(T, JYL_MSGH_LOCATE);
  lua_pushvalue(L, 3);
  lua_xmove(L, T, 1);
  lua_createtable(T, 0, 0); /* s */
  lua_createtable(T, 0, 2); /* its metatable */
  lua_pushvalue(L, 4);
  lua_xmove(L, T, 1);
  lua_pushcclosure(T, proxy_index, 1);
  lua_setfield(T, -2, "__index");
  lua_pushcfunction(T, proxy_newindex);
  lua_setfield(T, -2, "__newindex");
  lua_setmetatable(T, -2);
  /* Anchor the context in the system's user value 2 (models share it), then register. */
  lua_getiuservalue(L, 1, 2); /* 5 */
  if (lua_getfield(L, 5, "channels") != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, 5, "channels");
  }
  lua_Integer slot = (lua_Integer)lua_rawlen(L, -1) + 1;
  lua_pushvalue(L, 4);
  lua_rawseti(L, -2, slot);
  jyStatus st = jy_system_add_channel(sys, name, chan_fn, c);
  if (st != JY_OK) {
    lua_pushnil(L);
    lua_rawseti(L, -2, slot);
    const char *msg = jy_system_error(sys);
    return luaL_error(L, "%s", msg && *msg ? msg : jy_status_text(st));
  }
  return 0;
}

void jyl_open_channel(lua_State *L) {
  int top = lua_gettop(L);
  luaL_newmetatable(L, JYL_CHANNEL);
  lua_pop(L, 1);
  luaL_getmetatable(L, JYL_SYSTEM);
  lua_getfield(L, -1, "__index");
  lua_pushcfunction(L, sys_channel);
  lua_setfield(L, -2, "channel");
  lua_settop(L, top);
}
