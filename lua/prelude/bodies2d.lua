-- lua/prelude/bodies2d.lua — the script side of planar bodies (docs/bodies2d.md):
--
--   body:marker(name, {rx, ry}[, angle]) -> the marker2d Part "<body>_<name>", fixed on the
--                                  body at (rx, ry) (body axes, from the centre of mass),
--                                  its frame turned by angle; its terminals pos and frame
--   body:point(name, {rx, ry})     -> that marker's pos terminal (2-D)
--   body:frame_at(name, {rx, ry}[, angle]) -> that marker's frame terminal (x, y, theta)
--   sys:pin(a, b[, name])          a revolute joint: the glue of two points (2-D terminals);
--                                  force channels force.<name>.x/.y
--   sys:weld(a, b[, name])         a weld: the glue of two planar frames (3-D terminals);
--                                  force.<name>.x/.y and the torque force.<name>.z
--
-- The methods exist on parts of type body2d only (other parts keep their own indexing); a
-- marker's terminal `body` is glued to the body's frame (glue "<marker>.body"), which glue
-- elimination substitutes away. Errors are raised at the script line of the call.
local common, host = ...
local describe, owner = common.describe, host.owner

-- make(body, name, r, angle, what): error level 3 is the script's call of the method.
local function make(body, name, r, angle, what)
  if what == 'body:point' and angle ~= nil then
    error("body:point(name, {rx, ry}) takes no angle: use body:frame_at for a frame", 3)
  end
  local sys = owner(body)
  if sys == nil then
    error(string.format('%s: call it on a body2d part as body:%s(...)', what,
      what:match('[%w_]+$')), 3)
  end
  if type(name) ~= 'string' or not name:match('^[%w_]+$') then
    error(string.format('%s: the name must be letters, digits and _ (the marker is the '
      .. 'part "<body>_<name>"), got %s', what, describe(name)), 3)
  end
  if type(r) ~= 'table' or #r ~= 2 or type(r[1]) ~= 'number' or type(r[2]) ~= 'number' then
    error(string.format("%s '%s': the offset must be {rx, ry}, the point in body axes "
      .. 'from the centre of mass (m), got %s', what, name, describe(r)), 3)
  end
  if angle ~= nil and type(angle) ~= 'number' then
    error(string.format("%s '%s': the angle must be a number (rad), got %s", what, name,
      type(angle)), 3)
  end
  if sys:part(body.name .. '_' .. name) then
    error(string.format("%s '%s': part '%s_%s' exists already (one marker per name: "
      .. 'body:marker(name, {rx, ry}, angle) gives a marker with both .pos and .frame)',
      what, name, body.name, name), 3)
  end
  local marker = common.add_marker(sys, 'marker2d', body, name,
    { rx = r[1], ry = r[2], angle = angle or 0 })
  return marker -- not a tail call: add_marker's error level counts this frame
end

host.part_index = common.part_methods(host.part_index, 'body2d', common.marker_methods(make))

host.system_methods.pin = common.joint('pin', 2, 'a pin joins two points (2-D terminals such '
  .. 'as body:point(...) or a 2-D ground pos); frames are welded (sys:weld) or joined by a '
  .. 'slider2d')
host.system_methods.weld = common.joint('weld', 3, 'a weld joins two planar frames (3-D '
  .. 'terminals such as body.frame or body:frame_at(...)); points are pinned (sys:pin)')
