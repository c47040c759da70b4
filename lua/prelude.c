/* lua/prelude.c — runs the Lua halves of the module (lua/prelude/, embedded by
 * lua/prelude/embed.py and syntax-checked with luac at build time) once per module
 * instance, with the C functions they need.
 *
 * Each chunk runs as chunk(common, host): common is what common.lua (the first chunk)
 * returns; host is one table of
 *   module            the joinery module table
 *   system_methods    the joinery.System methods (chunks add theirs)
 *   part_index        the __index of Parts; a chunk may replace it (installed at the end)
 *   owner(x)          the System of a Part or Terminal, or nil
 *   held(sys)         the list a system and its models keep alive (user value 2, "held")
 *   part_type_of(sys) sys's environment userdata and joinery.part_type bound to it
 *   function_site(f)  f's source and the line it is defined at (what labels show)
 *   read_only(what)   a __newindex raising "<what> is read-only inside a part function"
 *   quaternion_maps   lua/loads.c
 *   part_param(part, name)  a parameter's value (nil: none), lua/system.c
 *   glued_to(terminal[, k]) the other side of the terminal's k-th glue (nil: none)
 *   last_glue(sys)          the name of the system's latest glue (nil: none)
 *   find_input(sys, name)   the index of an input (nil: none)
 *   constrain_impl    set by constrain.lua; installed as sys:constrain's Lua half
 *   max_part_rows, part_limit_why   JY_PART_MAX_ROWS and why (luapart.h), for messages
 */
#include "prelude.h"

#include <lauxlib.h>
#include <lua.h>

#include "binding.h"
#include "binding_private.h"
#include "parts/luapart.h"
#include "prelude_chunks.h"

static int owner(lua_State *L) {
  if (!luaL_testudata(L, 1, JYL_PART) && !luaL_testudata(L, 1, JYL_TERMINAL)) {
    lua_pushnil(L);
    return 1;
  }
  lua_getiuservalue(L, 1, 1);
  return 1;
}

/* The system's user value 2 is shared by every model compiled from it (lua/model.c). */
static int held(lua_State *L) {
  luaL_checkudata(L, 1, JYL_SYSTEM);
  lua_getiuservalue(L, 1, 2);
  if (lua_getfield(L, -1, "held") != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, "held");
  }
  return 1;
}

static int part_type_of(lua_State *L) {
  luaL_checkudata(L, 1, JYL_SYSTEM);
  lua_getiuservalue(L, 1, 1);
  jyl_push_part_type(L, -1);
  return 2;
}

static int function_site(lua_State *L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  lua_Debug ar;
  lua_pushvalue(L, 1);
  lua_getinfo(L, ">S", &ar);
  lua_pushstring(L, ar.source);
  lua_pushinteger(L, ar.linedefined);
  return 2;
}

/* read_only(what): the __newindex of a read-only view named what. */
static int read_only(lua_State *L) {
  luaL_checkstring(L, 1);
  lua_settop(L, 1);
  lua_pushcclosure(L, jyl_read_only_error, 1);
  return 1;
}

static void push_host(lua_State *L, int module_idx) {
  static const luaL_Reg functions[] = {{"owner", owner},
                                       {"held", held},
                                       {"part_type_of", part_type_of},
                                       {"function_site", function_site},
                                       {"read_only", read_only},
                                       {"quaternion_maps", jyl_quaternion_maps},
                                       {"part_param", jyl_host_part_param},
                                       {"glued_to", jyl_host_glued_to},
                                       {"last_glue", jyl_host_last_glue},
                                       {"find_input", jyl_host_find_input},
                                       {NULL, NULL}};
  luaL_newlib(L, functions);
  lua_pushvalue(L, module_idx);
  lua_setfield(L, -2, "module");
  lua_pushinteger(L, JY_PART_MAX_ROWS);
  lua_setfield(L, -2, "max_part_rows");
  lua_pushstring(L, JYL_PART_LIMIT_WHY);
  lua_setfield(L, -2, "part_limit_why");
  luaL_getmetatable(L, JYL_SYSTEM);
  lua_getfield(L, -1, "__index");
  lua_setfield(L, -3, "system_methods");
  lua_pop(L, 1);
  luaL_getmetatable(L, JYL_PART);
  lua_getfield(L, -1, "__index");
  lua_setfield(L, -3, "part_index");
  lua_pop(L, 1);
}

void jyl_open_prelude(lua_State *L, int module_idx) {
  int top = lua_gettop(L);
  module_idx = lua_absindex(L, module_idx);
  push_host(L, module_idx);
  int host = lua_gettop(L);
  lua_pushnil(L); /* common, until common.lua has run */
  int common = lua_gettop(L);
  for (int i = 0; i < JYL_PRELUDE_CHUNKS; i++) {
    const JylChunk *c = &jyl_prelude_chunks[i];
    if (luaL_loadbuffer(L, c->text, c->len, c->name) != LUA_OK) lua_error(L);
    if (i == 0) {
      lua_pushvalue(L, host);
      lua_call(L, 1, 1);
      lua_replace(L, common);
    } else {
      lua_pushvalue(L, common);
      lua_pushvalue(L, host);
      lua_call(L, 2, 0);
    }
  }
  luaL_getmetatable(L, JYL_PART);
  lua_getfield(L, host, "part_index");
  lua_setfield(L, -2, "__index");
  lua_getfield(L, host, "constrain_impl");
  jyl_install_constrain(L, -1);
  lua_settop(L, top);
}
