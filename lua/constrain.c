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
 * How: the constraint is a Lua part type (joinery.part_type, in its `flat` form: functions
 * get arrays and no p) with one massless coordinate per entry of x, one coordinate-block
 * terminal per `on` item, the rows "r1" .. "rk" and the law; sys:constrain registers it,
 * adds it as part `name` and glues each terminal to its `on` item (glue "<name>.t<i>", its
 * force channel is the generalized force the constraint applies to that item). Glue
 * elimination then substitutes the massless coordinates away: the constraint costs its rows
 * only. The rows' multipliers are the channels force.<name>.r1, ...; phi and psi get their
 * derivatives by the Jets of lua/jet.c, with t a Jet too (rheonomic constraints).
 *
 * The checking and the building are Lua code (below, run once per module instance); the C
 * part checks the `on` list (terminals of this system) and binds joinery.part_type to the
 * system's environment. Errors in a spec are raised at the script line of the call.
 */
#include "binding.h"

#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "joinery/part.h"

/* The implementation: called as impl(sys, spec, on, dims, part_type) from sys_constrain, so
 * an error raised at level 3 points at the script's call of sys:constrain (level 1 is impl,
 * 2 the C method). Errors of the functions it calls are located in this chunk: they are
 * caught and raised again at the script's line. */
static const char constrain_lua[] =
  "local count = 0\n"
  "local fields = { name = true, on = true, phi = true, psi = true, accel = true,\n"
  "                 rows = true, kind = true, nonideal = true }\n"
  "local valid = 'name, on, phi, psi, accel, rows, kind, nonideal'\n"
  "local kind_of = { phi = 'position', psi = 'velocity', accel = 'acceleration' }\n"
  "local signature = { phi = 'phi = function(x, t)', psi = 'psi = function(x, xd, t)',\n"
  "                    accel = 'accel = function(x, xd, t) returning A, b' }\n"
  "local function strip(msg)\n"
  "  return (tostring(msg):gsub('^joinery%.constrain:%d+: ', ''))\n"
  "end\n"
  "return function(sys, spec, on, dims, part_type)\n"
  "  local name = spec.name\n"
  "  if type(name) ~= 'string' or not name:match('^[%a_][%w_]*$') then\n"
  "    error('sys:constrain needs name = an identifier (it names the part and the rows: '\n"
  "      .. 'force.<name>.r1, ...), got ' .. (type(name) == 'string' and (\"'\" .. name .. \"'\")\n"
  "      or type(name)), 3)\n"
  "  end\n"
  "  local function bad(fmt, ...)\n"
  "    error(string.format(\"constraint '%s': \" .. fmt, name, ...), 4)\n"
  "  end\n"
  "  for k in pairs(spec) do\n"
  "    if not fields[k] then bad(\"unknown field '%s' (valid: %s)\", tostring(k), valid) end\n"
  "  end\n"
  "  local field\n"
  "  for _, f in ipairs { 'phi', 'psi', 'accel' } do\n"
  "    if spec[f] ~= nil then\n"
  "      if field then\n"
  "        bad('give one of phi, psi and accel, not both %s and %s', field, f)\n"
  "      end\n"
  "      field = f\n"
  "    end\n"
  "  end\n"
  "  if not field then\n"
  "    bad('needs phi = function(x, t) (position), psi = function(x, xd, t) (velocity) or '\n"
  "      .. 'accel = function(x, xd, t) returning A, b (acceleration level)')\n"
  "  end\n"
  "  local fn = spec[field]\n"
  "  if type(fn) ~= 'function' then bad('%s must be a function, got %s', field, type(fn)) end\n"
  "  local kind = spec.kind\n"
  "  if kind ~= nil then\n"
  "    if kind ~= 'position' and kind ~= 'velocity' and kind ~= 'acceleration' then\n"
  "      bad(\"kind must be 'position', 'velocity' or 'acceleration', got %s\", tostring(kind))\n"
  "    end\n"
  "    if kind ~= kind_of[field] then\n"
  "      bad(\"kind = '%s' needs %s, but %s gives a %s constraint%s\", kind,\n"
  "        kind == 'position' and 'phi = function(x, t)' or signature[kind == 'velocity' and\n"
  "        'psi' or 'accel'], field, kind_of[field], kind == 'position' and\n"
  "        ': a velocity-level constraint cannot stand where a position constraint is '\n"
  "        .. 'required (a position constraint depends on x and t only)' or '')\n"
  "    end\n"
  "  end\n"
  "  local rows = spec.rows\n"
  "  if rows == nil then rows = 1 end\n"
  "  if math.type(rows) ~= 'integer' or rows < 1 or rows > 64 then\n"
  "    bad('rows must be a whole number from 1 to 64, got %s', tostring(rows))\n"
  "  end\n"
  "  if spec.nonideal ~= nil and type(spec.nonideal) ~= 'function' then\n"
  "    bad('nonideal must be a function(x, xd, t, lambda, xdd) returning C, got %s',\n"
  "      type(spec.nonideal))\n"
  "  end\n"
  "  local okp, existing = pcall(sys.part, sys, name)\n"
  "  if not okp then bad('%s', strip(existing)) end\n"
  "  if existing then bad('a part named %s already exists', name) end\n"
  "  local coords, terminals, n = {}, {}, 0\n"
  "  for i, d in ipairs(dims) do\n"
  "    local block = {}\n"
  "    for c = 1, d do\n"
  "      n = n + 1\n"
  "      coords[n] = 'x' .. n\n"
  "      block[c] = coords[n]\n"
  "    end\n"
  "    terminals[i] = { name = 't' .. i, coords = block }\n"
  "  end\n"
  "  local entry = { name = 'r', rows = rows, kind = kind_of[field], [field] = fn }\n"
  "  local def = { flat = true, doc = 'constraint ' .. name .. ' (sys:constrain)',\n"
  "    coords = coords, terminals = terminals, constraints = { entry },\n"
  "    nonideal_law = spec.nonideal }\n"
  "  local ok, err, tname\n"
  "  repeat -- a fresh type name (another module instance may have used this one)\n"
  "    count = count + 1\n"
  "    tname = string.format('constrain_%s_%d', name, count)\n"
  "    def.name = tname\n"
  "    ok, err = pcall(part_type, def)\n"
  "  until ok or not tostring(err):find('is already registered', 1, true)\n"
  "  if not ok then bad('%s', strip(err)) end\n"
  "  local part\n"
  "  ok, part = pcall(sys.add, sys, tname, name)\n"
  "  if not ok then bad('%s', strip(part)) end\n"
  "  for i = 1, #on do\n"
  "    ok, err = pcall(sys.glue, sys, on[i], part['t' .. i], name .. '.t' .. i)\n"
  "    if not ok then bad('%s', strip(err)) end\n"
  "  end\n"
  "  return part\n"
  "end\n";

/* sys:constrain(spec); upvalue 1 = the implementation above. */
static int sys_constrain(lua_State *L) {
  luaL_checkudata(L, 1, JYL_SYSTEM);
  luaL_checktype(L, 2, LUA_TTABLE);
  lua_settop(L, 2);
  if (lua_getfield(L, 2, "on") != LUA_TTABLE) { /* 3 */
    if (luaL_testudata(L, 3, JYL_TERMINAL))
      return luaL_error(L, "sys:constrain: on must be a list, e.g. on = { %s }",
                        luaL_tolstring(L, 3, NULL));
    return luaL_error(L, "sys:constrain needs on = { terminal, ... } (terminals or coordinates "
                         "such as disk.x), got %s", luaL_typename(L, 3));
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
      return luaL_error(L, "sys:constrain: on[%d] must be a terminal or a coordinate of a part "
                           "(e.g. disk.x, pend.pivot), got %s", i,
                        lua_type(L, -1) == LUA_TUSERDATA ? luaL_tolstring(L, -1, NULL)
                                                         : luaL_typename(L, -1));
    lua_getiuservalue(L, -1, 1);
    int same = lua_rawequal(L, -1, 1);
    lua_pop(L, 1);
    if (!same)
      return luaL_error(L, "sys:constrain: on[%d] belongs to another system", i);
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
    return luaL_error(L, "sys:constrain: the terminals in on have %d components (at most %d)",
                      total, JY_PART_MAX_COORDS);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_pushvalue(L, 1);
  lua_pushvalue(L, 2);
  lua_pushvalue(L, 4);
  lua_pushvalue(L, 5);
  lua_getiuservalue(L, 1, 1); /* the environment the system registers its types in */
  jyl_push_part_type(L, -1);
  lua_remove(L, -2);
  lua_call(L, 5, 1);
  return 1;
}

void jyl_open_constrain(lua_State *L) {
  int top = lua_gettop(L);
  if (luaL_loadbuffer(L, constrain_lua, sizeof constrain_lua - 1, "=joinery.constrain") !=
      LUA_OK)
    lua_error(L); /* a bug in the chunk above: t_constrain would fail at once */
  lua_call(L, 0, 1);
  luaL_getmetatable(L, JYL_SYSTEM);
  lua_getfield(L, -1, "__index");
  lua_pushvalue(L, -3);
  lua_pushcclosure(L, sys_constrain, 1);
  lua_setfield(L, -2, "constrain");
  lua_settop(L, top);
}
