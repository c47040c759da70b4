-- Bad input for spatial bodies and joints: each is one clear error naming the part, the
-- parameter or coordinate, and what to do.
local tap = dofile("tests/lua/tap.lua")
local joinery = require "joinery"
tap.plan(69)

local function sys3() return joinery.system { gravity = { 0, 0, -9.81 } } end

tap.raises(function() sys3():add("body3d", "top", { Ixx = 1, Iyy = 1, Izz = 3 }) end,
  { "t_bodies3d_bad.lua:", "part 'top' (body3d)", "triangle inequality", "Izz = 3", "Ixx + Iyy = 2" },
  "a principal moment above the sum of the other two names it")
tap.raises(function() sys3():add("body3d", "b", { Ixx = 1, Iyy = 1, Izz = 1, Ixy = 2 }) end,
  { "part 'b' (body3d)", "inertia tensor", "Ixy 2", "not positive definite", "principal moments -1" },
  "an inertia tensor that is not positive definite (products of inertia) is refused")
tap.raises(function() sys3():add("body3d", "b", { Ixx = 1, Iyy = 1, Izz = 1, Ixy = 0.5, Ixz = 0.5 }) end,
  { "part 'b' (body3d)", "triangle inequality", "principal moment 1.70711" },
  "products of inertia that break the triangle inequality in principal axes are refused")
tap.raises(function() sys3():add("body3d", "b", { Ixx = 0 }) end,
  { "part 'b' (body3d)", "Ixx", "must be > 0" }, "a zero moment of inertia is refused")
tap.raises(function() sys3():add("body3d", "b", { Ixx = 1, Iyy = 2, Izz = 3.0000001 }) end,
  { "Izz = 3" }, "just above the limit is refused")
local ok = pcall(function() sys3():add("body3d", "disc", { Ixx = 1, Iyy = 2, Izz = 3 }) end)
tap.ok(ok, "a flat body (Izz = Ixx + Iyy exactly) is fine")

-- Multi-statement cases as functions, so each tap.raises below is one line (it checks the
-- error is located at the calling line).
local function zero_quaternion()
  local sys = sys3()
  sys:add("body3d", "spinner", { init = { q0 = 0, q1 = 0, q2 = 0, q3 = 0 } })
  return sys
end
local function massless(held)
  local sys = sys3()
  local g = sys:add("ground3d", "g", {})
  local b = sys:add("body3d", "ghost", { m = 0 })
  if held then sys:add("weld3d", "w", { a = g.frame, b = b.frame }) end
  return sys
end
local function hinge_on_point(sys)
  local g = sys:add("ground", "g", { dim = 3 })
  local b = sys:add("body3d", "b", {})
  return g, b
end

tap.raises(function() zero_quaternion():compile() end,
  { "part 'spinner' (body3d)", "quaternion (q0, q1, q2, q3) is zero", "q0 = 1" },
  "a zero quaternion initial value names the body and the quaternion")
tap.raises(function() massless(false):compile() end, { "not unique", "ghost.x, ghost.y, ghost.z" },
  "a body with zero mass that is free to move: the acceleration is not unique, naming its coordinates")
tap.ok(pcall(function() massless(true):compile() end), "a massless body welded to the ground is determined")

local sys = sys3()
local g, b = hinge_on_point(sys)
tap.raises(function() sys:add("hinge3d", "h", { a = g.pos, b = b.frame }) end,
  { "h.a", "7-D", "g.pos", "3-D" }, "a hinge glued to a point where a frame is needed")
tap.raises(function() sys:glue(b.frame, g.pos) end, { "7-D", "3-D" }, "a frame glued to a point")
tap.raises(function() sys3():add("hinge3d", "h", { nax = 0, nay = 0, naz = 0 }) end,
  { "part 'h' (hinge3d)", "axis (nax, nay, naz) is zero" }, "a hinge without an axis")
tap.raises(function() sys3():add("hinge3d", "h", { nbx = 0, nby = 0, nbz = 0 }) end,
  { "part 'h' (hinge3d)", "nbx, nby, nbz" }, "a hinge without an axis in frame b")
tap.raises(function() sys3():add("prismatic3d", "p", { nax = 0, nay = 0, naz = 0 }) end,
  { "part 'p' (prismatic3d)", "axis" }, "a prismatic joint without an axis")
tap.raises(function() sys3():add("weld3d", "w", { q0 = 0 }) end,
  { "part 'w' (weld3d)", "relative orientation (q0, q1, q2, q3) is zero" }, "a weld with a zero relative orientation")
tap.raises(function() sys3():add("ground3d", "g", { q0 = 0 }) end,
  { "part 'g' (ground3d)", "quaternion" }, "a fixed frame with a zero quaternion")
tap.raises(function() sys3():add("marker3d", "m", { r = 1 }) end,
  { "r" }, "an unknown marker parameter")
local b3 = sys:add("body3d", "b3", {})
tap.raises(function() b3:point("tip", { 0.1, 0.2 }) end, { "body:point 'tip'", "{rx, ry, rz}" },
  "body:point on a body3d wants three offsets")
tap.raises(function() b3:frame_at("f", { 0, 0, 1 }, 0.5) end, { "body:frame_at 'f'", "no angle" },
  "a body3d marker takes no angle")
tap.raises(function() b3:point("bad name", { 0, 0, 1 }) end, { "body:point", "letters, digits and _" },
  "a marker name must be a plain word")
tap.raises(function() sys:ball(b.frame, b3.frame) end, { "sys:ball", "7-D", "hinge3d" },
  "sys:ball joins points, not frames")
tap.done()
