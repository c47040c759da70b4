/* lua/loads.c — sys:load(name, frame, fn): a force and torque on a frame, given as a Lua
 * function of time and the frame's state (docs/bodies2d.md, docs/bodies3d.md).
 *
 *   planar frame (x, y, theta):   fn(t, q, v) -> { fx =, fy =, tau = }   (space axes, N, N m)
 *   spatial frame (x, y, z, q0..q3): fn(t, q, v) -> { fx =, fy =, fz =, tx =, ty =, tz = }
 *     v also carries the space angular velocity wx, wy, wz = 2 E(q) q' / |q|^2; the torque
 *     enters as Q_q = 2 E(q)^T tau / |q|^2 (as in torque3d), the force at the frame origin.
 *
 * Each call defines a Lua part type (joinery.part_type) owning a massless copy of the frame
 * as a coordinate-block terminal, so glue elimination substitutes it away like torque2d and
 * torque3d: a load costs no coordinates and no rows. Omitted components are zero.
 */
#include "binding.h"

#include <lauxlib.h>
#include <lua.h>

/* Run once per module instance as chunk(module, system_methods). */
static const char loads_lua[] =
  "local joinery, sys_methods = ...\n"
  "local defined = 0 -- part types this module instance made: load_1, load_2, ...\n"
  "local function strip(msg)\n"
  "  return (tostring(msg):gsub('^joinery%.loads:%d+: ', ''))\n"
  "end\n"
  "local planar = { fx = 'x', fy = 'y', tau = 'theta' }\n"
  "local spatial = { fx = true, fy = true, fz = true, tx = true, ty = true, tz = true }\n"
  "local function components(name, r, allowed, list)\n"
  "  if type(r) ~= 'table' then\n"
  "    error(string.format(\"sys:load '%s': the function must return a table such as \"\n"
  "      .. '{ %s }, got %s', name, list, type(r)), 0)\n"
  "  end\n"
  "  for k in pairs(r) do\n"
  "    if not allowed[k] then\n"
  "      error(string.format(\"sys:load '%s': unknown component '%s' (this frame takes %s)\",\n"
  "        name, tostring(k), list), 0)\n"
  "    end\n"
  "  end\n"
  "  return r\n"
  "end\n"
  "local function planar_force(name, fn)\n"
  "  return function(q, v, t)\n"
  "    local r = components(name, fn(t, q, v), planar, 'fx, fy, tau')\n"
  "    return { x = r.fx or 0, y = r.fy or 0, theta = r.tau or 0 }\n"
  "  end\n"
  "end\n"
  "local function spatial_force(name, fn)\n"
  "  return function(q, v, t)\n"
  "    local q0, q1, q2, q3 = q.q0, q.q1, q.q2, q.q3\n"
  "    local d0, d1, d2, d3 = v.q0, v.q1, v.q2, v.q3\n"
  "    local s = 2 / (q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3)\n"
  "    local state_v = { x = v.x, y = v.y, z = v.z, q0 = d0, q1 = d1, q2 = d2, q3 = d3,\n"
  "      wx = s * (-q1 * d0 + q0 * d1 - q3 * d2 + q2 * d3),\n"
  "      wy = s * (-q2 * d0 + q3 * d1 + q0 * d2 - q1 * d3),\n"
  "      wz = s * (-q3 * d0 - q2 * d1 + q1 * d2 + q0 * d3) }\n"
  "    local r = components(name, fn(t, q, state_v), spatial, 'fx, fy, fz, tx, ty, tz')\n"
  "    local tx, ty, tz = r.tx or 0, r.ty or 0, r.tz or 0\n"
  "    return { x = r.fx or 0, y = r.fy or 0, z = r.fz or 0,\n"
  "      q0 = s * (-q1 * tx - q2 * ty - q3 * tz), q1 = s * (q0 * tx + q3 * ty - q2 * tz),\n"
  "      q2 = s * (-q3 * tx + q0 * ty + q1 * tz), q3 = s * (q2 * tx - q1 * ty + q0 * tz) }\n"
  "  end\n"
  "end\n"
  "sys_methods.load = function(sys, name, frame, fn)\n"
  "  if type(name) ~= 'string' or not name:match('^[%a_][%w_]*$') then\n"
  "    error(string.format('sys:load: the name must be an identifier (letters, digits, _), '\n"
  "      .. 'got %s', type(name) == 'string' and \"'\" .. name .. \"'\" or type(name)), 2)\n"
  "  end\n"
  "  local ok, dim = pcall(function() return frame.dim end)\n"
  "  if not ok or type(dim) ~= 'number' then\n"
  "    error(string.format(\"sys:load '%s': the frame must be a frame terminal (body.frame, \"\n"
  "      .. 'body:frame_at(...)), got %s', name, type(frame)), 2)\n"
  "  end\n"
  "  if dim ~= 3 and dim ~= 7 then\n"
  "    error(string.format(\"sys:load '%s': %s is a %d-D terminal, a point where a frame is \"\n"
  "      .. 'needed (a planar frame is 3-D: x, y, theta; a spatial one 7-D: x, y, z, q0..q3); '\n"
  "      .. 'body:frame_at(...) gives the frame at a body point', name, frame.name, dim), 2)\n"
  "  end\n"
  "  if type(fn) ~= 'function' then\n"
  "    error(string.format(\"sys:load '%s': the load must be a function (t, q, v) returning \"\n"
  "      .. 'its components, got %s', name, type(fn)), 2)\n"
  "  end\n"
  "  local coords = dim == 3 and { 'x', 'y', 'theta' }\n"
  "    or { 'x', 'y', 'z', 'q0', 'q1', 'q2', 'q3' }\n"
  "  local taken, type_name = {}, nil\n"
  "  for _, t in ipairs(joinery.types()) do taken[t] = true end\n"
  "  repeat\n"
  "    defined = defined + 1\n"
  "    type_name = 'load_' .. defined\n"
  "  until not taken[type_name]\n"
  "  joinery.part_type {\n"
  "    name = type_name,\n"
  "    doc = string.format(\"the load '%s' on a %s frame (sys:load)\", name,\n"
  "      dim == 3 and 'planar' or 'spatial'),\n"
  "    coords = coords,\n"
  "    terminals = { { name = 'frame', coords = coords } },\n"
  "    force = dim == 3 and planar_force(name, fn) or spatial_force(name, fn),\n"
  "  }\n"
  "  local added, res = pcall(sys.add, sys, type_name, name, { frame = frame })\n"
  "  if not added then error(strip(res), 2) end\n"
  "  return res\n"
  "end\n";

void jyl_open_loads(lua_State *L, int module_idx) {
  int top = lua_gettop(L);
  module_idx = lua_absindex(L, module_idx);
  if (luaL_loadbuffer(L, loads_lua, sizeof loads_lua - 1, "=joinery.loads") != LUA_OK)
    lua_error(L); /* a bug in the chunk above: t_loads would fail at once */
  lua_pushvalue(L, module_idx); /* arg 1: the module (part_type, types) */
  luaL_getmetatable(L, JYL_SYSTEM);
  lua_getfield(L, -1, "__index"); /* arg 2: the System methods */
  lua_remove(L, -2);
  lua_call(L, 2, 0);
  lua_settop(L, top);
}
