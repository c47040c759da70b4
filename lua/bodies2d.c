/* lua/bodies2d.c — the script side of planar bodies (docs/bodies2d.md):
 *
 *   body:marker(name, {rx, ry}[, angle]) -> the marker2d Part "<body>_<name>", fixed on the
 *                                  body at (rx, ry) (body axes, from the centre of mass),
 *                                  its frame turned by angle; its terminals pos and frame
 *   body:point(name, {rx, ry})     -> that marker's pos terminal (2-D)
 *   body:frame_at(name, {rx, ry}[, angle]) -> that marker's frame terminal (x, y, theta)
 *   sys:pin(a, b[, name])          a revolute joint: the glue of two points (2-D terminals);
 *                                  force channels force.<name>.x/.y
 *   sys:weld(a, b[, name])         a weld: the glue of two planar frames (3-D terminals);
 *                                  force.<name>.x/.y and the torque force.<name>.z
 *
 * The methods exist on parts of type body2d only (other parts keep their own indexing); a
 * marker's terminal `body` is glued to the body's frame (glue "<marker>.body"), which glue
 * elimination substitutes away. Errors are raised at the script line of the call.
 */
#include "binding.h"

#include <lauxlib.h>
#include <lua.h>

/* Run once per module instance as chunk(original_part_index, owner, system_methods). */
static const char bodies2d_lua[] =
  "local original_index, owner, sys_methods = ...\n"
  "local function strip(msg)\n"
  "  return (tostring(msg):gsub('^joinery%.bodies2d:%d+: ', ''))\n"
  "end\n"
  "local function describe(x)\n"
  "  if type(x) == 'string' then return \"'\" .. x .. \"'\" end\n"
  "  if type(x) == 'table' then\n"
  "    local items = {}\n"
  "    for i = 1, math.min(#x, 4) do items[i] = tostring(x[i]) end\n"
  "    return '{' .. table.concat(items, ', ') .. (#x > 4 and ', ...}' or '}')\n"
  "  end\n"
  "  if type(x) == 'userdata' then return tostring(x) end\n"
  "  return type(x)\n"
  "end\n"
  "-- make(body, name, r, angle, what): error level 3 is the script's call of the method.\n"
  "local function make(body, name, r, angle, what)\n"
  "  local sys = owner(body)\n"
  "  if sys == nil then\n"
  "    error(string.format('%s: call it on a body2d part as body:%s(...)', what,\n"
  "      what:match('[%w_]+$')), 3)\n"
  "  end\n"
  "  if type(name) ~= 'string' or not name:match('^[%w_]+$') then\n"
  "    error(string.format('%s: the name must be letters, digits and _ (the marker is the '\n"
  "      .. 'part \"<body>_<name>\"), got %s', what, describe(name)), 3)\n"
  "  end\n"
  "  if type(r) ~= 'table' or #r ~= 2 or type(r[1]) ~= 'number' or type(r[2]) ~= 'number' then\n"
  "    error(string.format(\"%s '%s': the offset must be {rx, ry}, the point in body axes \"\n"
  "      .. 'from the centre of mass (m), got %s', what, name, describe(r)), 3)\n"
  "  end\n"
  "  if angle ~= nil and type(angle) ~= 'number' then\n"
  "    error(string.format(\"%s '%s': the angle must be a number (rad), got %s\", what, name,\n"
  "      type(angle)), 3)\n"
  "  end\n"
  "  if sys:part(body.name .. '_' .. name) then\n"
  "    error(string.format(\"%s '%s': part '%s_%s' exists already (one marker per name: \"\n"
  "      .. 'body:marker(name, {rx, ry}, angle) gives a marker with both .pos and .frame)',\n"
  "      what, name, body.name, name), 3)\n"
  "  end\n"
  "  local ok, res = pcall(sys.add, sys, 'marker2d', body.name .. '_' .. name,\n"
  "    { rx = r[1], ry = r[2], angle = angle or 0, body = body.frame })\n"
  "  if not ok then error(strip(res), 3) end\n"
  "  return res\n"
  "end\n"
  "local methods = {\n"
  "  marker = function(body, name, r, angle) return make(body, name, r, angle, 'body:marker') end,\n"
  "  point = function(body, name, r, extra)\n"
  "    if extra ~= nil then\n"
  "      error(\"body:point(name, {rx, ry}) takes no angle: use body:frame_at for a frame\", 2)\n"
  "    end\n"
  "    return make(body, name, r, nil, 'body:point').pos\n"
  "  end,\n"
  "  frame_at = function(body, name, r, angle)\n"
  "    return make(body, name, r, angle, 'body:frame_at').frame\n"
  "  end,\n"
  "}\n"
  "local function part_index(part, key)\n"
  "  local m = methods[key]\n"
  "  if m and original_index(part, 'type') == 'body2d' then return m end\n"
  "  -- the original raises at its caller's line: call it so that the line is the script's\n"
  "  local ok, res = pcall(original_index, part, key)\n"
  "  if not ok then error(strip(res), 2) end\n"
  "  return res\n"
  "end\n"
  "local function joint(kind, dim, hint)\n"
  "  return function(sys, a, b, name)\n"
  "    for i, t in ipairs { a, b } do\n"
  "      if owner(t) == nil or type(t.dim) ~= 'number' then\n"
  "        error(string.format('sys:%s: argument %d must be a terminal, got %s', kind, i,\n"
  "          describe(t)), 2)\n"
  "      end\n"
  "    end\n"
  "    if a.dim ~= dim or b.dim ~= dim then\n"
  "      error(string.format('sys:%s: terminals %s (%d-D) and %s (%d-D): %s', kind, a.name,\n"
  "        a.dim, b.name, b.dim, hint), 2)\n"
  "    end\n"
  "    local ok, err = pcall(sys.glue, sys, a, b, name)\n"
  "    if not ok then error(strip(err), 2) end\n"
  "  end\n"
  "end\n"
  "sys_methods.pin = joint('pin', 2, 'a pin joins two points (2-D terminals such as '\n"
  "  .. 'body:point(...) or a 2-D ground pos); frames are welded (sys:weld) or joined by a '\n"
  "  .. 'slider2d')\n"
  "sys_methods.weld = joint('weld', 3, 'a weld joins two planar frames (3-D terminals such as '\n"
  "  .. 'body.frame or body:frame_at(...)); points are pinned (sys:pin)')\n"
  "return part_index\n";

/* owner(x): the system userdata of a Part or Terminal, or nil. */
static int owner(lua_State *L) {
  if (!luaL_testudata(L, 1, JYL_PART) && !luaL_testudata(L, 1, JYL_TERMINAL)) {
    lua_pushnil(L);
    return 1;
  }
  lua_getiuservalue(L, 1, 1);
  return 1;
}

void jyl_extend_parts(lua_State *L, const char *chunk, size_t len, const char *chunk_name) {
  int top = lua_gettop(L);
  if (luaL_loadbuffer(L, chunk, len, chunk_name) != LUA_OK) lua_error(L);
  luaL_getmetatable(L, JYL_PART);
  int part_mt = lua_gettop(L);
  lua_getfield(L, part_mt, "__index"); /* arg 1: the __index installed so far */
  lua_pushcfunction(L, owner);         /* arg 2 */
  luaL_getmetatable(L, JYL_SYSTEM);
  lua_getfield(L, -1, "__index"); /* arg 3: the System methods */
  lua_remove(L, -2);
  lua_remove(L, part_mt); /* the chunk and its three arguments are on top now */
  lua_call(L, 3, 1);
  luaL_getmetatable(L, JYL_PART);
  lua_pushvalue(L, -2);
  lua_setfield(L, -2, "__index");
  lua_settop(L, top);
}

void jyl_open_bodies2d(lua_State *L) {
  /* a bug in the chunk above makes t_bodies2d fail at once */
  jyl_extend_parts(L, bodies2d_lua, sizeof bodies2d_lua - 1, "=joinery.bodies2d");
}
