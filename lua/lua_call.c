/* lua/lua_call.c — the message handler of every protected call into Lua: the Lua parts'
 * trampolines (lua/parts/part_calls.c), the channel functions (lua/channel.c) and the joinery
 * command's script (lua/main.c). One handler, so that an error reads the same wherever it
 * was raised: "file:line: message", with a traceback only when asked for (joinery
 * --traceback). */
#include "lua_call.h"

#include <string.h>

#include <lauxlib.h>

/* The error object at 1 as a string (pushed unless it already is one); *from_meta says it
 * came from __tostring. */
static const char *error_text(lua_State *L, int *from_meta) {
  const char *msg = lua_tostring(L, 1);
  *from_meta = 0;
  if (msg) return msg;
  if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) {
    *from_meta = 1;
    return lua_tostring(L, -1);
  }
  return lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
}

/* Pushes msg prefixed with the innermost script line when it lacks it: errors raised by C
 * functions (joinery.math.sin, a Jet's metamethods) carry no position of their own. */
static void push_located(lua_State *L, const char *msg) {
  lua_Debug ar;
  for (int level = 1; lua_getstack(L, level, &ar); level++) {
    if (!lua_getinfo(L, "Sl", &ar) || ar.currentline <= 0) continue;
    const char *where = lua_pushfstring(L, "%s:%d:", ar.short_src, ar.currentline);
    if (!strstr(msg, where)) {
      lua_pushfstring(L, "%s %s", where, msg);
      return;
    }
    break;
  }
  lua_pushstring(L, msg);
}

/* upvalue 1: the jylMsghKind. */
static int message_handler(lua_State *L) {
  int from_meta;
  const char *msg = error_text(L, &from_meta);
  if (lua_tointeger(L, lua_upvalueindex(1)) == JYL_MSGH_LOCATE) {
    push_located(L, msg);
  } else if (!from_meta) { /* lua.c leaves an object's own __tostring text alone */
    luaL_traceback(L, L, msg, 1);
  }
  return 1;
}

void jyl_push_msgh(lua_State *L, jylMsghKind kind) {
  lua_pushinteger(L, (lua_Integer)kind);
  lua_pushcclosure(L, message_handler, 1);
}
