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

-- Minimal coordinates: absolute angles from the downward vertical (as the parts use).
--   (m1+m2) l1 a1 + m2 l2 cos(d) a2 = -m2 l2 w2^2 sin(d) - (m1+m2) g sin(th1)
--   l1 cos(d) a1 + l2 a2 = l1 w1^2 sin(d) - g sin(th2),   d = th1 - th2
local function deriv(s)
  local th1, th2, w1, w2 = s[1], s[2], s[3], s[4]
  local d = th1 - th2
  local a11, a12 = (m1 + m2) * l1, m2 * l2 * math.cos(d)
  local a21, a22 = l1 * math.cos(d), l2
  local r1 = -m2 * l2 * w2 * w2 * math.sin(d) - (m1 + m2) * g * math.sin(th1)
  local r2 = l1 * w1 * w1 * math.sin(d) - g * math.sin(th2)
  local det = a11 * a22 - a12 * a21
  return { w1, w2, (r1 * a22 - a12 * r2) / det, (a11 * r2 - a21 * r1) / det }
end
-- Classical Runge-Kutta, the test's own reference: global error ~ h^4.
local function reference(t_end, h)
  local s = { 2.0, -1.0, 0, 0 }
  for _ = 1, math.floor(t_end / h + 0.5) do
    local k1 = deriv(s)
    local s2, s3, s4 = {}, {}, {}
    for i = 1, 4 do s2[i] = s[i] + h / 2 * k1[i] end
    local k2 = deriv(s2)
    for i = 1, 4 do s3[i] = s[i] + h / 2 * k2[i] end
    local k3 = deriv(s3)
    for i = 1, 4 do s4[i] = s[i] + h * k3[i] end
    local k4 = deriv(s4)
    for i = 1, 4 do s[i] = s[i] + h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]) end
  end
  return s
end
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
