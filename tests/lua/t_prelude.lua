-- The Lua halves of sys:load and sys:constrain (lua/prelude/): a part type per kind, not per
-- call; each call's own functions reach its own part, live as long as the system or a model
-- of it, and are collected after.
local tap = dofile("tests/lua/tap.lua")
local joinery = require "joinery"
tap.plan(20)

local function registered(name) return (pcall(joinery.describe, name)) end
local types_before = #joinery.types()

-- 1. 100 loads on planar and spatial frames, 100 constraints from each of two places in the
-- script: two load types and two constraint types, registered by the first calls.
local types_after_first
do
  local sys = joinery.system { gravity = { 0, 0 } }
  for i = 1, 50 do
    if i == 2 then types_after_first = #joinery.types() end
    local b = sys:add("body2d", "p" .. i, { m = 1, J = 1 })
    sys:load("lp" .. i, b.frame, function() return { tau = i } end)
    local c = sys:add("body3d", "s" .. i, { m = 1, Ixx = 1, Iyy = 1, Izz = 1 })
    sys:load("ls" .. i, c.frame, function() return { tz = i } end)
    local m = sys:add("mass", "m" .. i, { dim = 1, m = 1 })
    sys:constrain { name = "c" .. i, on = { m.pos }, phi = function(x, t) return x[1] - i * t end }
    local n = sys:add("mass", "n" .. i, { dim = 1, m = 1 })
    sys:constrain { name = "d" .. i, on = { n.pos }, phi = function(x, t) return x[1] + i * t end }
  end
  tap.is(types_after_first, types_before + 4, "the first loads and constraints register 4 types")
  tap.is(#joinery.types(), types_after_first, "196 more sys:load and sys:constrain calls register none")
  tap.ok(registered("load_planar") and registered("load_spatial") and not registered("load_planar_2"),
    "one load type per frame kind is registered (load_planar, load_spatial)")
  tap.ok(registered("constrain_1") and registered("constrain_2") and not registered("constrain_3"),
    "one constraint type per line the 100 constraints' functions are defined at")
end

-- 2. Each call's function drives its own part: bodies under tau = i (J = 1) from rest turn
-- theta_i = i t^2 / 2; masses held by x_i = c_i t move with their own c_i. A type shared by
-- every call must not mix them up.
do
  local sys = joinery.system { gravity = { 0, 0 } }
  local speeds = { 0.5, -1, 2 }
  for i = 1, 3 do
    local b = sys:add("body2d", "b" .. i, { m = 1, J = 1 })
    sys:load("drive" .. i, b.frame, function() return { tau = i } end)
    local m = sys:add("mass", "m" .. i, { dim = 1, m = 1, vel = { x = speeds[i] } })
    sys:constrain { name = "track" .. i, on = { m.pos }, phi = function(x, t) return x[1] - speeds[i] * t end }
  end
  sys:settings { t_end = 1, dt_out = 0.5, rtol = 1e-10, atol = 1e-12 }
  local res = sys:simulate {}
  local last = #res.t
  local worst = 0
  for i = 1, 3 do
    worst = math.max(worst, math.abs(res["b" .. i .. ".theta"][last] - i / 2),
      math.abs(res["m" .. i .. ".x"][last] - speeds[i]))
  end
  -- bound: integration error at rtol 1e-10 on values of order 1 (constant accelerations:
  -- the methods are exact up to rounding and the tolerance's error control)
  tap.ok(worst < 1e-8, string.format("each load and constraint acts on its own part (worst error %.2g)", worst))
end

-- 3. Lifetime: a model keeps its system's functions alive; once the system and the model
-- are gone the functions are collected (weak-keyed probes).
local probe = setmetatable({}, { __mode = "k" })
local model
do
  local sys = joinery.system { gravity = { 0, 0 } }
  local b = sys:add("body2d", "b", { m = 1, J = 0.5 })
  local tau = function() return { tau = 1 } end
  local phi = function(x, t) return x[1] - t end
  probe[tau], probe[phi] = true, true
  sys:load("drive", b.frame, tau)
  local m = sys:add("mass", "m", { dim = 1, m = 1, vel = { x = 1 } })
  sys:constrain { name = "hold", on = { m.pos }, phi = phi }
  sys:settings { t_end = 2, dt_out = 1, rtol = 1e-10, atol = 1e-12 }
  model = sys:compile()
end
collectgarbage()
collectgarbage()
local alive = 0
for _ in pairs(probe) do alive = alive + 1 end
tap.is(alive, 2, "the system is gone but its model keeps the load's and the constraint's functions")
do
  local res = model:simulate {}
  local last = #res.t
  -- theta = tau t^2 / (2 J) = 4 at t = 2; x = t = 2. Bound: rtol 1e-10 on values of order 1.
  tap.is_near(res["b.theta"][last], 4, 1e-8, "the model still runs the load: theta = t^2/(2 J)")
  tap.is_near(res["m.x"][last], 2, 1e-8, "and the constraint: x = t")
end
model = nil
collectgarbage()
collectgarbage()
tap.is(next(probe), nil, "with the system and the model gone, the functions are collected")

-- 4. The internal types are not for sys:add: with no live part of its type (every system and
-- model above is collected), a load_planar part has no function to call.
do
  local sys = joinery.system {}
  local b = sys:add("body2d", "b", { m = 1, J = 1 })
  sys:add("load_planar", "stray", { frame = b.frame })
  local ok, err = pcall(sys.compile, sys)
  tap.ok(not ok, "a load_planar part added by sys:add does not compile")
  tap.has(err, "added by sys:load or sys:constrain, not by sys:add", "and says what to use")
end

-- 5. A constraint's x arrays stay read-only, as the flat arrays of joinery.part_type were.
do
  local sys = joinery.system {}
  local m = sys:add("mass", "m", { dim = 1, m = 1 })
  local writes = function(x, t) x[1] = 0 return 0 end
  sys:constrain { name = "w", on = { m.pos }, phi = writes }
  local ok, err = pcall(sys.compile, sys)
  tap.ok(not ok, "writing into x stops the compile")
  tap.has(err, "q is read-only inside a part function", "naming the read-only argument")
  tap.has(err, "phi (" .. debug.getinfo(writes, "S").short_src .. ":" .. debug.getinfo(writes, "S").linedefined .. ")",
    "and the function with the line it is defined at")
end

-- 6. body:marker's errors are at the script line, like body:point's and body:frame_at's.
do
  local sys = joinery.system {}
  local b = sys:add("body2d", "b", { m = 1, J = 1 })
  tap.raises(function() b:marker("x y", { 1, 0 }) end, { "body:marker", "letters, digits and _" }, "body:marker with a bad name")
  local c = sys:add("body3d", "c", { m = 1, Ixx = 1, Iyy = 1, Izz = 1 })
  tap.raises(function() c:marker("m", { 1, 0 }) end, { "body:marker 'm'", "{rx, ry, rz}" }, "body3d marker with a 2-D offset")
end

tap.done()
