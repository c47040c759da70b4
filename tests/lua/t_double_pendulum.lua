-- examples/double_pendulum.lua: energy conservation with a singular mass matrix, and the
-- angles against an independent minimal-coordinate integration of the same pendulum.
local tap = dofile("tests/lua/tap.lua")
tap.plan(4)
local m1, l1, m2, l2, g = 1, 1, 0.5, 0.7, 9.81

-- Adams: not dissipative, so the energy shows the formulation's error, not BDF's damping
-- (BDF at these tolerances loses 6e-8 of E0 in 10 s).
local res = dofile("examples/double_pendulum.lua"):simulate {
  method = "adams", rtol = 1e-11, atol = 1e-12, t_end = 10, dt_out = 0.01 }
local e0, drift = res.energy[1], 0
for i = 1, #res.t do drift = math.max(drift, math.abs(res.energy[i] - e0) / math.abs(e0)) end
tap.ok(drift < 1e-8, "energy drifts less than 1e-8 relative over 10 s")
tap.diag(string.format("energy drift %.3g relative (E0 = %.6f J), %d steps, %.3f s", drift, e0,
  res.stats.steps, res.seconds or -1))

-- Minimal coordinates and classical Runge-Kutta (tests/lua/double_pendulum_reference.lua).
local integrate = dofile("tests/lua/double_pendulum_reference.lua")
local pendulums = { m1 = m1, l1 = l1, m2 = m2, l2 = l2, g = g, th1 = 2.0, th2 = -1.0 }
local function reference(t_end, h) return integrate(pendulums, t_end, h) end
local ref, coarse = reference(3, 1e-4), reference(3, 2e-4)
-- The reference itself must be far better than the 1e-7 rad being tested.
local ref_err = math.max(math.abs(ref[1] - coarse[1]), math.abs(ref[2] - coarse[2]))
tap.ok(ref_err < 1e-9, "the reference integration has converged (h vs 2h differ < 1e-9 rad)")
tap.diag(string.format("reference h vs 2h: %.3g rad", ref_err))

local i3 = 301 -- t = 3 s at dt_out = 0.01
assert(math.abs(res.t[i3] - 3) < 1e-12)
tap.is_near(res["p1.theta"][i3], ref[1], 1e-7, "p1.theta at t = 3 s matches the reference")
tap.is_near(res["p2.theta"][i3], ref[2], 1e-7, "p2.theta at t = 3 s matches the reference")
tap.done()
