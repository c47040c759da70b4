/* lua/binding.h — the Lua 5.4 module "joinery" (see binding.c for the Lua API).
 * Shared by the loadable module (joinery.so) and the `joinery` command. */
#ifndef JOINERY_LUA_BINDING_H
#define JOINERY_LUA_BINDING_H

#include <lua.h>

/* Metatable names (luaL_checkudata / luaL_testudata). */
#define JYL_SYSTEM "joinery.System"
#define JYL_PART "joinery.Part"
#define JYL_TERMINAL "joinery.Terminal"
#define JYL_MODEL "joinery.Model"
#define JYL_SIM "joinery.Sim"
#define JYL_HYPER "joinery.Hyper"

#if defined(__GNUC__)
#define JYL_EXPORT __attribute__((visibility("default")))
#else
#define JYL_EXPORT
#endif

/* Opens the module: creates this instance's environment (every built-in part type
 * registered) and leaves the module table on the stack. */
JYL_EXPORT int luaopen_joinery(lua_State *L);

/* lua/ad.c: registers the joinery.Hyper metatable and sets field "math" (hyper-dual numbers
 * and the elementary functions on them) in the table on the top of the stack. */
void jyl_open_math(lua_State *L);

#endif
