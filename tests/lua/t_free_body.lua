-- examples/free_body.lua: a torque-free asymmetric body spinning near its intermediate axis.
-- The angular momentum vector in space and the kinetic energy are conserved to 1e-9
-- relative, the quaternion stays unit to 1e-10, the body flips (the intermediate axis is
-- unstable), the body angular velocity follows Euler's equations integrated here
-- independently, and the centre of mass moves uniformly.
local tap = dofile("tests/lua/tap.lua")
tap.plan(8)

local sys, body = dofile("examples/free_body.lua")
local res = sys:simulate {}
local n = #res.t
tap.ok(math.abs(res.t[n] - 30) < 1e-12, "runs to t = 30 s")
tap.diag(string.format("%d steps, %.2f s (rtol 1e-14, atol 1e-15, Adams, Baumgarte)",
  res.stats.steps, res.seconds or -1))

local L0 = { res["b.Lx"][1], res["b.Ly"][1], res["b.Lz"][1] }
local nL = math.sqrt(L0[1] ^ 2 + L0[2] ^ 2 + L0[3] ^ 2)
local T0 = res.kinetic[1]
local dL, dT, dn, dx, flips = 0, 0, 0, 0, 0
for i = 1, n do
  local d = 0
  for k, c in ipairs { "x", "y", "z" } do d = d + (res["b.L" .. c][i] - L0[k]) ^ 2 end
  dL = math.max(dL, math.sqrt(d) / nL)
  dT = math.max(dT, math.abs(res.kinetic[i] - T0) / T0)
  local q0, q1, q2, q3 = res["b.q0"][i], res["b.q1"][i], res["b.q2"][i], res["b.q3"][i]
  dn = math.max(dn, math.abs(math.sqrt(q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3) - 1))
  if i > 1 and res["b.omega_y"][i] * res["b.omega_y"][i - 1] < 0 then flips = flips + 1 end
  for k, c in ipairs { "x", "y", "z" } do
    dx = math.max(dx, math.abs(res["b." .. c][i] - body.v[k] * res.t[i]))
  end
end
-- T = 1/2 sum I_k w_k^2 of the initial angular velocity.
local want_T = 0
for k = 1, 3 do want_T = want_T + 0.5 * body.I[k] * body.omega[k] ^ 2 end
want_T = want_T + 0.5 * body.m * (body.v[1] ^ 2 + body.v[2] ^ 2 + body.v[3] ^ 2)
tap.ok(math.abs(T0 - want_T) < 1e-13 * want_T, "kinetic energy at t = 0 is 1/2 (m v^2 + w^T J w)")
tap.ok(dL < 1e-9, string.format("angular momentum vector in space conserved to 1e-9 relative (%.3g, |L| = %.6g)", dL, nL))
tap.ok(dT < 1e-9, string.format("kinetic energy conserved to 1e-9 relative (%.3g, T = %.6g J)", dT, T0))
tap.ok(dn < 1e-10, string.format("quaternion norm held at 1 to 1e-10 (%.3g)", dn))
tap.ok(flips >= 2, string.format("the spin about the intermediate axis is unstable: omega_y changes sign %d times", flips))
tap.ok(dx < 1e-10, string.format("the centre of mass moves uniformly (%.3g m)", dx))

-- Euler's equations, I1 w1' = (I2 - I3) w2 w3 (and cyclic), by classical Runge-Kutta; the
-- motion is unstable (errors grow ~ e^(0.9 t)), so the comparison is at t = 6 s, before the
-- first flip, where h and h/2 agree to far better than the tolerance.
local I = body.I
local function f(w)
  return { (I[2] - I[3]) * w[2] * w[3] / I[1], (I[3] - I[1]) * w[3] * w[1] / I[2],
           (I[1] - I[2]) * w[1] * w[2] / I[3] }
end
local function euler(t_end, h)
  local w = { body.omega[1], body.omega[2], body.omega[3] }
  for _ = 1, math.floor(t_end / h + 0.5) do
    local k1 = f(w)
    local w2, w3, w4 = {}, {}, {}
    for i = 1, 3 do w2[i] = w[i] + h / 2 * k1[i] end
    local k2 = f(w2)
    for i = 1, 3 do w3[i] = w[i] + h / 2 * k2[i] end
    local k3 = f(w3)
    for i = 1, 3 do w4[i] = w[i] + h * k3[i] end
    local k4 = f(w4)
    for i = 1, 3 do w[i] = w[i] + h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]) end
  end
  return w
end
local ref, fine = euler(6, 1e-3), euler(6, 5e-4)
local i6 = 601
assert(math.abs(res.t[i6] - 6) < 1e-12)
local derr, rerr = 0, 0
for k, c in ipairs { "x", "y", "z" } do
  derr = math.max(derr, math.abs(res["b.omega_" .. c][i6] - fine[k]))
  rerr = math.max(rerr, math.abs(ref[k] - fine[k]))
end
tap.ok(derr < 1e-8 and rerr < 1e-9, string.format(
  "body angular velocity at t = 6 s matches Euler's equations (%.3g rad/s; reference h vs h/2 %.3g)",
  derr, rerr))
tap.done()
