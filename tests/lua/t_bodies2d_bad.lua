-- Bad input for planar bodies, joints and user channels: each a Lua error at the script line
-- with a message that names the part, terminal, parameter or channel involved.
local tap = dofile("tests/lua/tap.lua")
local joinery = require "joinery"
tap.plan(78)

local sys = joinery.system { gravity = { 0, -9.81 } }
local b = sys:add("body2d", "b", { m = 1, J = 0.1 })
local c = sys:add("body2d", "c", { m = 1, J = 0.1, init = { x = 1 } })
local ground = sys:add("ground", "g", { dim = 2 })

-- Inertia that is not positive.
tap.raises(function() sys:add("body2d", "neg", { m = 1, J = -0.2 }) end, { "part 'neg'", "J = -0.2", "must be > 0" }, "negative moment of inertia")
tap.raises(function() sys:add("body2d", "zero", { m = 0, J = 1 }) end, { "part 'zero'", "m = 0", "must be > 0" }, "zero mass")

-- Joints between terminals of the wrong kind: a point where a frame is needed and back.
tap.raises(function() sys:add("slider2d", "s", { a = b:point("p", { 0.1, 0 }), b = c.frame }) end,
  { "s.a (3-D)", "b_p.pos (2-D)", "different dimensions" }, "a slider given a point for a frame")
tap.raises(function() sys:pin(b.frame, c:point("q", { 0, 0 }), "hinge") end,
  { "sys:pin", "b.frame (3-D)", "c_q.pos (2-D)", "a pin joins two points" }, "a pin given a frame")
tap.raises(function() sys:weld(b.pos, ground.pos) end,
  { "sys:weld", "b.pos (2-D)", "g.pos (2-D)", "a weld joins two planar frames" }, "a weld given points")
tap.raises(function() sys:glue(b.frame, ground.pos, "w") end,
  { "b.frame (3-D)", "g.pos (2-D)", "different dimensions" }, "a frame glued to a point")
tap.raises(function() sys:add("rotational_spring2d", "r", { dim = 3, a = b.theta, b = c.frame }) end,
  { "r.a (3-D)", "b.theta (1-D)" }, "a rotational spring between frames given an angle")
tap.raises(function() sys:add("rotational_spring2d", "r2", { dim = 2 }) end,
  { "part 'r2'", "dim = 2 is no planar rotation" }, "a rotational spring in dim 2")

-- Markers: the offset, the name, and the receiver.
tap.raises(function() b:point("tip", { 1 }) end, { "body:point 'tip'", "{rx, ry}" }, "an offset of one number")
tap.raises(function() b:point("a.b", { 1, 0 }) end, { "body:point", "letters, digits and _" }, "a marker name with a dot")
tap.raises(function() b:frame_at("f", { 1, 0 }, "up") end, { "body:frame_at 'f'", "angle must be a number" }, "an angle that is no number")
tap.raises(function() b:point("p", { 0.2, 0 }) end, { "body:point 'p'", "part 'b_p' exists already", "body:marker" }, "the same point name twice")
tap.raises(function() local _ = ground.point end, { "part 'g' (ground) has no terminal or coordinate 'point'" }, "point on a part that is no body2d")

-- A marker glued to nothing is massless and free: the acceleration is not unique, and the
-- message names its coordinates.
do
  local s2 = joinery.system { gravity = { 0, -9.81 } }
  s2:add("body2d", "body", { m = 1, J = 0.1 })
  s2:add("marker2d", "lost", { rx = 0.1 })
  local ok, err = pcall(s2.compile, s2)
  tap.ok(not ok, "an unglued marker does not compile")
  tap.has(tostring(err), "not unique", "the message says the acceleration is not unique")
  tap.has(tostring(err), "lost.body_x", "and names the free coordinates")
end

-- User channels: a bad definition, and failures while simulating.
tap.raises(function() sys:channel("bad", 3) end, { "bad argument #2", "function expected" }, "a channel that is no function")
tap.raises(function() sys:channel("a,b", function() return 0 end) end, { "channel 'a,b'", "without ','" }, "a channel name with a comma")
sys:channel("ok1", function(s) return s.t end)
tap.raises(function() sys:channel("ok1", function() return 0 end) end, { "a channel named 'ok1' exists already" }, "a channel defined twice")

local function run(define)
  local s = joinery.system { gravity = { 0, -9.81 } }
  local rod = s:add("body2d", "rod", { m = 1, J = 1 / 12, init = { x = 0.5 } })
  s:pin(rod:point("top", { -0.5, 0 }), s:add("ground", "o", { dim = 2 }).pos)
  define(s)
  return s:compile()
end
local model = run(function(s) s:channel("boom", function(r) if r.t > 0.05 then error("too late") end return 1 end) end)
tap.raises(function() model:simulate { t_end = 0.1, dt_out = 0.01 } end, { "channel 'boom'", "t_bodies2d_bad.lua:", "too late", "at t = 0.06" }, "an error inside a channel function names the channel, its line and the time")
model = run(function(s) s:channel("word", function() return "one" end) end)
tap.raises(function() model:simulate { t_end = 0.1 } end, { "channel 'word'", "must return a number, got string" }, "a channel that returns no number")
model = run(function(s) s:channel("nan", function() return 0 / 0 end) end)
tap.raises(function() model:simulate { t_end = 0.1 } end, { "channel 'nan'", "not finite" }, "a channel that returns NaN")
model = run(function(s) s:channel("typo", function(r) return r["rod.thetta"] end) end)
tap.raises(function() model:evaluate(model:initial()) end, { "channel 'typo'", "no channel 'rod.thetta'", "did you mean 'rod.theta'" }, "a channel reading a misspelt name")
model = run(function(s)
  s:channel("first", function(r) return r.second end)
  s:channel("second", function() return 1 end)
end)
tap.raises(function() model:evaluate(model:initial()) end, { "channel 'first' cannot read 'second'", "comes after it" }, "a channel reading a later one")
local kept
model = run(function(s) s:channel("keep", function(r) kept = r return 1 end) end)
model:evaluate(model:initial())
tap.raises(function() return kept.t end, { "readable only while the function runs" }, "the row kept after the call")
tap.done()
