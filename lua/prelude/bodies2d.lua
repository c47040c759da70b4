-- lua/prelude/bodies2d.lua — the script side of planar bodies (docs/bodies2d.md):
--
--   body:marker(name, {rx, ry}[, angle]) -> the marker2d Part "<body>_<name>", fixed on the
--                                  body at (rx, ry) (body axes, from the centre of mass),
--                                  its frame turned by angle; its terminals pos and frame
--   body:point(name, {rx, ry})     -> that marker's pos terminal (2-D)
--   body:frame_at(name, {rx, ry}[, angle]) -> that marker's frame terminal (x, y, theta)
--   sys:pin(a, b[, name])          a revolute joint: the glue of two points (2-D terminals);
--                                  force channels force.<name>.x/.y; between frames that
--                                  turn (bodies, markers, grounds) also the part <name> of
--                                  type pin_angle2d: channels <name>.angle and <name>.rate
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

local pin_glue = common.joint('pin', 2, 'a pin joins two points (2-D terminals such '
  .. 'as body:point(...) or a 2-D ground pos); frames are welded (sys:weld) or joined by a '
  .. 'slider2d')

-- The frame a pin's side turns with: a marker's body's or ground2d's frame, a body's or
-- ground2d's own; 'world' for a ground point; nil for a point with no orientation (a mass,
-- a pendulum's bob) or a marker on anything else (gluing to a marker's computed frame would
-- keep the copies as coordinates and rows: elimination is one level deep).
local function side_frame(t)
  local part = t.part
  local kind = part.type
  if t.terminal ~= 'pos' then return nil end
  if kind == 'ground' then return 'world' end
  if kind == 'body2d' or kind == 'ground2d' then return part.frame end
  if kind ~= 'marker2d' then return nil end
  local frame = host.glued_to(part.body, 1)
  if frame == nil or host.glued_to(part.body, 2) ~= nil or frame.terminal ~= 'frame' then
    return nil
  end
  local on = frame.part.type
  if on == 'body2d' or on == 'ground2d' then return frame end
  return nil
end

-- sys:pin glues the points, then adds the pin_angle2d part named after the glue (its
-- channels <pin>.angle and <pin>.rate) when both sides turn with a frame and the name is
-- free for a part (docs/bodies2d.md): its copies are eliminated, so it costs nothing to
-- integrate.
host.system_methods.pin = function(sys, a, b, name)
  local ok, err = pcall(pin_glue, sys, a, b, name)
  if not ok then error(common.strip(err), 2) end
  local fa, fb = side_frame(a), side_frame(b)
  if fa == nil or fb == nil or (fa == 'world' and fb == 'world') then return end
  local pin = host.last_glue(sys)
  if pin:find('[.,]') or sys:part(pin) then return end
  local params = { world = fa == 'world' and 1 or fb == 'world' and 2 or 0 }
  if fa ~= 'world' then params.a = fa end
  if fb ~= 'world' then params.b = fb end
  ok, err = pcall(sys.add, sys, 'pin_angle2d', pin, params)
  if not ok then error(common.strip(err), 2) end
end
host.system_methods.weld = common.joint('weld', 3, 'a weld joins two planar frames (3-D '
  .. 'terminals such as body.frame or body:frame_at(...)); points are pinned (sys:pin)')
