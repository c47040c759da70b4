-- lua/prelude/bodies3d.lua — the script side of spatial bodies (docs/bodies3d.md):
--
--   body:marker(name, {rx, ry, rz}) -> the marker3d Part "<body>_<name>", fixed on the body3d
--                                  at (rx, ry, rz) (body axes, from the centre of mass); its
--                                  terminals pos (3-D) and frame (7-D: pos and the body's
--                                  quaternion)
--   body:point(name, {rx, ry, rz})  -> that marker's pos terminal
--   body:frame_at(name, {rx, ry, rz}) -> that marker's frame terminal
--   sys:ball(a, b[, name])         a ball (spherical) joint: the glue of two 3-D points;
--                                  force channels force.<name>.x/.y/.z
--
-- The body methods exist on parts of type body3d (the same names on body2d parts are
-- bodies2d.lua's; this wraps whatever Part __index runs before it). A marker's terminal
-- `body` is glued to the body's frame (glue "<marker>.body"), which glue elimination
-- substitutes away. Errors are raised at the script line of the call.
local common, host = ...
local owner = host.owner

local function make(body, name, r, extra, what)
  local sys = owner(body)
  if type(name) ~= 'string' or not name:match('^[%w_]+$') then
    error(string.format('%s: the name must be letters, digits and _ (the marker is the '
      .. 'part "<body>_<name>"), got %s', what, tostring(name)), 3)
  end
  if type(r) ~= 'table' or #r ~= 3 or type(r[1]) ~= 'number' or type(r[2]) ~= 'number'
      or type(r[3]) ~= 'number' then
    error(string.format("%s '%s': the offset must be {rx, ry, rz}, the point in body axes "
      .. 'from the centre of mass (m), got %s', what, name, type(r)), 3)
  end
  if extra ~= nil then
    error(string.format("%s '%s': a body3d marker has the body's orientation: no angle "
      .. '(joints take their axes and relative orientation as parameters)', what, name), 3)
  end
  local marker = common.add_marker(sys, 'marker3d', body, name,
    { rx = r[1], ry = r[2], rz = r[3] })
  return marker -- not a tail call: add_marker's error level counts this frame
end

host.part_index = common.part_methods(host.part_index, 'body3d', common.marker_methods(make))

host.system_methods.ball = common.joint('ball', 3, 'a ball joint joins two spatial points '
  .. '(3-D terminals such as body:point(...) or a 3-D ground pos); frames are joined by '
  .. 'hinge3d, prismatic3d or weld3d parts')
