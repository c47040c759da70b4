/* lua/bodies3d.c — the script side of spatial bodies (docs/bodies3d.md):
 *
 *   body:marker(name, {rx, ry, rz}) -> the marker3d Part "<body>_<name>", fixed on the body3d
 *                                  at (rx, ry, rz) (body axes, from the centre of mass); its
 *                                  terminals pos (3-D) and frame (7-D: pos and the body's
 *                                  quaternion)
 *   body:point(name, {rx, ry, rz})  -> that marker's pos terminal
 *   body:frame_at(name, {rx, ry, rz}) -> that marker's frame terminal
 *   sys:ball(a, b[, name])         a ball (spherical) joint: the glue of two 3-D points;
 *                                  force channels force.<name>.x/.y/.z
 *
 * The body methods exist on parts of type body3d (the same names on body2d parts are
 * lua/bodies2d.c's; this wraps whatever __index is installed before it). A marker's terminal
 * `body` is glued to the body's frame (glue "<marker>.body"), which glue elimination
 * substitutes away. Errors are raised at the script line of the call.
 */
#include "binding.h"

#include <lauxlib.h>
#include <lua.h>

/* Run once per module instance as chunk(previous_part_index, owner, system_methods). */
static const char bodies3d_lua[] =
  "local previous_index, owner, sys_methods = ...\n"
  "local function strip(msg)\n"
  "  return (tostring(msg):gsub('^joinery%.bodies[23]d:%d+: ', ''))\n"
  "end\n"
  "local function make(body, name, r, extra, what)\n"
  "  local sys = owner(body)\n"
  "  if type(name) ~= 'string' or not name:match('^[%w_]+$') then\n"
  "    error(string.format('%s: the name must be letters, digits and _ (the marker is the '\n"
  "      .. 'part \"<body>_<name>\"), got %s', what, tostring(name)), 3)\n"
  "  end\n"
  "  if type(r) ~= 'table' or #r ~= 3 or type(r[1]) ~= 'number' or type(r[2]) ~= 'number'\n"
  "      or type(r[3]) ~= 'number' then\n"
  "    error(string.format(\"%s '%s': the offset must be {rx, ry, rz}, the point in body axes \"\n"
  "      .. 'from the centre of mass (m), got %s', what, name, type(r)), 3)\n"
  "  end\n"
  "  if extra ~= nil then\n"
  "    error(string.format(\"%s '%s': a body3d marker has the body's orientation: no angle \"\n"
  "      .. '(joints take their axes and relative orientation as parameters)', what, name), 3)\n"
  "  end\n"
  "  local ok, res = pcall(sys.add, sys, 'marker3d', body.name .. '_' .. name,\n"
  "    { rx = r[1], ry = r[2], rz = r[3], body = body.frame })\n"
  "  if not ok then error(strip(res), 3) end\n"
  "  return res\n"
  "end\n"
  "local methods = {\n"
  "  marker = function(body, name, r, x) return make(body, name, r, x, 'body:marker') end,\n"
  "  point = function(body, name, r, x) return make(body, name, r, x, 'body:point').pos end,\n"
  "  frame_at = function(body, name, r, x)\n"
  "    return make(body, name, r, x, 'body:frame_at').frame\n"
  "  end,\n"
  "}\n"
  "local function part_index(part, key)\n"
  "  local m = methods[key]\n"
  "  if m then\n"
  "    local ok, kind = pcall(previous_index, part, 'type')\n"
  "    if ok and kind == 'body3d' then return m end\n"
  "  end\n"
  "  local ok, res = pcall(previous_index, part, key)\n"
  "  if not ok then error(strip(res), 2) end\n"
  "  return res\n"
  "end\n"
  "sys_methods.ball = function(sys, a, b, name)\n"
  "  for i, t in ipairs { a, b } do\n"
  "    if owner(t) == nil or type(t.dim) ~= 'number' then\n"
  "      error(string.format('sys:ball: argument %d must be a terminal, got %s', i, type(t)), 2)\n"
  "    end\n"
  "  end\n"
  "  if a.dim ~= 3 or b.dim ~= 3 then\n"
  "    error(string.format('sys:ball: terminals %s (%d-D) and %s (%d-D): a ball joint joins two '\n"
  "      .. 'spatial points (3-D terminals such as body:point(...) or a 3-D ground pos); frames '\n"
  "      .. 'are joined by hinge3d, prismatic3d or weld3d parts', a.name, a.dim, b.name,\n"
  "      b.dim), 2)\n"
  "  end\n"
  "  local ok, err = pcall(sys.glue, sys, a, b, name)\n"
  "  if not ok then error(strip(err), 2) end\n"
  "end\n"
  "return part_index\n";

void jyl_open_bodies3d(lua_State *L) {
  /* a bug in the chunk above makes t_bodies3d fail at once */
  jyl_extend_parts(L, bodies3d_lua, sizeof bodies3d_lua - 1, "=joinery.bodies3d");
}
