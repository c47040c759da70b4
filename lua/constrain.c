/* lua/constrain.c — sys:constrain{...}: a constraint written in Lua between any terminals
 * and coordinates of a system (docs/constraints.md is the user's guide).
 *
 *   sys:constrain{ name = "roll", on = { disk.x, disk.y, disk.phi, disk.theta },
 *                  phi = function(x, t) ... end          -- position: phi(x, t) = 0
 *                | psi = function(x, xd, t) ... end      -- velocity: psi(x, xd, t) = 0
 *                | accel = function(x, xd, t) return A, b end,  -- A xdd = b
 *                  rows = k,                             -- default 1
 *                  kind = "position" | "velocity" | "acceleration",  -- optional, must agree
 *                  nonideal = function(x, xd, t, lambda, xdd) return C end }  -- optional
 *   -> the Part it made
 *
 * x is the flat array of the `on` terminals' values in order (a 2-D terminal gives two
 * entries), xd their velocities, xdd their accelerations (of the previous fixed-point
 * iterate), lambda the rows' multipliers. phi and psi return one value, or a table of k
 * values when rows = k; accel returns A (one row of #x numbers, or a list of k rows) and b
 * (a number or a list of k).
 *
 * How: the constraint is a part of a Lua part type (joinery.part_type) with one massless
 * coordinate per entry of x, one coordinate-block terminal per `on` item, the rows "r1" ..
 * "rk" and the law, registered once per shape and reused (lua/prelude/constrain.lua says
 * how); sys:constrain adds it as part `name` and glues each terminal to its `on` item
 * (glue "<name>.t<i>", its force channel is the generalized force the constraint applies
 * to that item). Glue elimination then substitutes the massless coordinates away: the
 * constraint costs its rows only. The rows' multipliers are the channels force.<name>.r1,
 * ...; phi and psi get their derivatives by the Jets of lua/parts/jet.c, with t a Jet too
 * (rheonomic constraints).
 *
 * The checking and the building are Lua code (lua/prelude/constrain.lua, run once per module
 * instance); this C half checks the `on` list (terminals of this system) and binds
 * joinery.part_type to the system's environment. Errors in a spec are raised at the script
 * line of the call.
 */
#include "binding.h"
#include "prelude.h"

#include <lauxlib.h>
#include <lua.h>

#include "joinery/part.h"
#include "parts/luapart.h"

/* sys:constrain(spec); upvalue 1 = the Lua half, impl(sys, spec, on, dims, part_type, env). */
static int sys_constrain(lua_State *L) {
  luaL_checkudata(L, 1, JYL_SYSTEM);
  luaL_checktype(L, 2, LUA_TTABLE);
  lua_settop(L, 2);
  if (lua_getfield(L, 2, "on") != LUA_TTABLE) { /* 3 */
    if (luaL_testudata(L, 3, JYL_TERMINAL))
      return luaL_error(L, "sys:constrain: on must be a list, e.g. on = { %s }",
                        luaL_tolstring(L, 3, NULL));
    return luaL_error(L,
                      "sys:constrain needs on = { terminal, ... } (terminals or coordinates "
                      "such as disk.x), got %s",
                      luaL_typename(L, 3));
  }
  int count = (int)lua_rawlen(L, 3), total = 0;
  if (count < 1 || count > JY_PART_MAX_TERMINALS)
    return luaL_error(L, "sys:constrain: on must list 1 to %d terminals, got %d",
                      JY_PART_MAX_TERMINALS, count);
  lua_createtable(L, count, 0); /* 4: on, checked */
  lua_createtable(L, count, 0); /* 5: their dimensions */
  for (int i = 1; i <= count; i++) {
    lua_rawgeti(L, 3, i);
    if (!luaL_testudata(L, -1, JYL_TERMINAL))
      return luaL_error(
        L,
        "sys:constrain: on[%d] must be a terminal or a coordinate of a part "
        "(e.g. disk.x, pend.pivot), got %s",
        i, lua_type(L, -1) == LUA_TUSERDATA ? luaL_tolstring(L, -1, NULL) : luaL_typename(L, -1));
    lua_getiuservalue(L, -1, 1);
    int same = lua_rawequal(L, -1, 1);
    lua_pop(L, 1);
    if (!same) return luaL_error(L, "sys:constrain: on[%d] belongs to another system", i);
    lua_getfield(L, -1, "dim");
    int dim = (int)lua_tointeger(L, -1);
    lua_rawseti(L, 5, i);
    total += dim;
    lua_rawseti(L, 4, i);
  }
  {
    lua_Integer keys = 0;
    lua_pushnil(L);
    while (lua_next(L, 3)) {
      keys++;
      lua_pop(L, 1);
    }
    if (keys != count)
      return luaL_error(L, "sys:constrain: on must be a list of terminals (no other keys)");
  }
  if (total > JY_PART_MAX_COORDS)
    return luaL_error(
      L,
      "sys:constrain: the terminals in on have %d components (at most %d: the "
      "constraint is a part whose coordinates are their components, and " JYL_PART_LIMIT_WHY
      "; split it into constraints on fewer terminals)",
      total, JY_PART_MAX_COORDS);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_pushvalue(L, 1);
  lua_pushvalue(L, 2);
  lua_pushvalue(L, 4);
  lua_pushvalue(L, 5);
  lua_getiuservalue(L, 1, 1); /* the environment the system registers its types in */
  jyl_push_part_type(L, -1);
  lua_insert(L, -2);
  lua_call(L, 6, 1);
  return 1;
}

void jyl_install_constrain(lua_State *L, int impl_idx) {
  impl_idx = lua_absindex(L, impl_idx);
  luaL_getmetatable(L, JYL_SYSTEM);
  lua_getfield(L, -1, "__index");
  lua_pushvalue(L, impl_idx);
  lua_pushcclosure(L, sys_constrain, 1);
  lua_setfield(L, -2, "constrain");
  lua_pop(L, 2);
}
