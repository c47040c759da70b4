-- Models at the edges of what the solver is told: nothing to integrate (an empty system, a
-- ground alone) is said in the model's terms; a part 1e18 times lighter than another is
-- light, not massless; a free massless coordinate next to them is the only one named.
local tap = dofile("tests/lua/tap.lua")
local joinery = require "joinery"
tap.plan(13)

-- ---- nothing to integrate --------------------------------------------------------------
tap.raises(function() joinery.system { gravity = { 0, -9.81 } }:compile() end,
  { "the system is empty", "add parts" }, "an empty system: said so")
do
  local sys = joinery.system { gravity = { 0, -9.81 } }
  sys:add("ground", "g", { dim = 2 })
  tap.raises(function() sys:compile() end,
    { "no coordinates to integrate", "'g' (ground)", "add a part that moves" },
    "a ground alone: no coordinates to integrate, naming the part")
end

-- ---- a light bob on a heavy pendulum ---------------------------------------------------
local m1, l1, m2, l2, g = 1e9, 1, 1e-9, 0.7, 9.81
local function heavy_light(extra)
  local sys = joinery.system { gravity = { 0, -g } }
  local ground = sys:add("ground", "ground", { dim = 2 })
  local p1 = sys:add("pendulum", "p1", { m = m1, l = l1, init = { theta = 2.0 }, pivot = ground.pos })
  sys:add("pendulum", "p2", { m = m2, l = l2, init = { theta = -1.0 }, pivot = p1.bob })
  if extra then extra(sys) end
  return sys
end
local ok, res = pcall(function()
  return heavy_light():simulate { method = "adams", rtol = 1e-11, atol = 1e-12, t_end = 3, dt_out = 0.01 }
end)
tap.ok(ok, "pendulums of 1e9 kg and 1e-9 kg (ratio 1e-18) compile and run: " .. (ok and "" or tostring(res)))

-- Minimal coordinates and classical Runge-Kutta (tests/lua/double_pendulum_reference.lua).
local integrate = dofile("tests/lua/double_pendulum_reference.lua")
local pendulums = { m1 = m1, l1 = l1, m2 = m2, l2 = l2, g = g, th1 = 2.0, th2 = -1.0 }
local function reference(t_end, h) return integrate(pendulums, t_end, h) end
local ref, coarse = reference(3, 1e-4), reference(3, 2e-4)
local ref_err = math.max(math.abs(ref[1] - coarse[1]), math.abs(ref[2] - coarse[2]))
tap.diag(string.format("reference h vs 2h: %.3g rad", ref_err))
if ok then
  local i3 = 301 -- t = 3 s at dt_out = 0.01
  -- 1e-7 rad: as t_double_pendulum.lua at the same tolerances (its error is ~1e-9 there),
  -- and the reference's own h-vs-2h difference is below 1e-9.
  tap.is_near(res["p1.theta"][i3], ref[1], 1e-7, "the heavy pendulum's angle at t = 3 s matches the reference")
  tap.is_near(res["p2.theta"][i3], ref[2], 1e-7, "the light bob's angle at t = 3 s matches the reference")
else
  tap.ok(false, "the heavy pendulum's angle (no run)")
  tap.ok(false, "the light bob's angle (no run)")
end

-- A massless mass-free coordinate beside them: only it is named, not the light bob.
do
  local sys = heavy_light(function(s) s:add("rod", "loose", { dim = 2 }) end)
  local cok, err = pcall(sys.compile, sys)
  err = tostring(err)
  tap.ok(not cok and err:find("not unique", 1, true), "a rod glued to nothing: not unique")
  tap.ok(err:find("loose.", 1, true) ~= nil, "... naming the rod's coordinates")
  tap.ok(not err:find("p2.theta", 1, true) and not err:find("p1.theta", 1, true),
    "... and not the light bob or the heavy pendulum")
  tap.diag(err)
end
tap.done()
