-- Spatial force elements (docs/bodies3d.md): rotational_spring3d and torque3d. The
-- conformance suite on general parameters (the spring's Q against the gradient of its
-- potential), then motions known in closed form: a body on a rotational spring oscillating
-- about one axis (period, damping rate, energy), a tumbling body on the spring (energy), a
-- constant torque and force spinning up a free body, and a time-dependent torque written as a
-- Lua part.
local tap = dofile("tests/lua/tap.lua")
local joinery = require "joinery"

local function quat_axis_angle(ax, ay, az, angle)
  local n = math.sqrt(ax * ax + ay * ay + az * az)
  local s = math.sin(angle / 2) / n
  return { math.cos(angle / 2), ax * s, ay * s, az * s }
end
local function qinit(q, x)
  x = x or { 0, 0, 0 }
  return { x = x[1], y = x[2], z = x[3], q0 = q[1], q1 = q[2], q2 = q[3], q3 = q[4] }
end
local settings = { rtol = 1e-13, atol = 1e-14, method = "adams", drift = "baumgarte" }
local function set(sys, t_end, dt_out)
  local s = { t_end = t_end, dt_out = dt_out }
  for k, v in pairs(settings) do s[k] = v end
  sys:settings(s)
end

-- 1. Conformance.
local cases = {
  { "rotational_spring3d", { k = 2.5 }, true },
  { "rotational_spring3d", { k = 2.5, c = 0.7 }, false },
  { "torque3d", { fx = 1, fy = -2, fz = 0.5 }, true },
  { "torque3d", { tx = 1, ty = -2, tz = 0.5, fx = 1, fy = 2, fz = 3 }, false },
}
tap.plan(#cases + 13) -- each case, then the motions below
for _, c in ipairs(cases) do
  local r = joinery.check_part(c[1], c[2], { seed = 11, states = 8, random_params = false })
  local lag = c[3] and r.checks.lagrange.count > 0 and r.checks.lagrange.failed == 0
  tap.ok(r.passed and r.instances == 1 and (lag or not c[3]),
    string.format("%s %s conforms (%s; Lagrange %.2g, rest force %.2g)", c[1],
      c[3] and "(conservative)" or "(not conservative)", r.passed and "passed" or "FAILED",
      r.checks.lagrange.worst, r.checks.rest_force.worst))
  if not r.passed then tap.diag(r.log) end
end

-- 2. A body hanging from the ground by a rotational spring, no gravity, turned by th0 about
-- its z axis: th(t) = th0 e^(-s t) (cos wd t + s/wd sin wd t), s = c / (2 Izz),
-- wd = sqrt(k/Izz - s^2). The relative rotation is about z: the torque is exactly -k th.
local k, Ixx, Iyy, Izz, th0 = 3, 0.2, 0.3, 0.5, 0.8
local function hanging(c, t_end, dt_out)
  local sys = joinery.system { gravity = { 0, 0, 0 } }
  local ground = sys:add("ground3d", "ground", {})
  local b = sys:add("body3d", "b", { m = 2, Ixx = Ixx, Iyy = Iyy, Izz = Izz,
                                      init = qinit(quat_axis_angle(0, 0, 1, th0)) })
  sys:add("rotational_spring3d", "coil", { k = k, c = c, a = ground.frame, b = b.frame })
  set(sys, t_end, dt_out)
  return sys
end
local w = math.sqrt(k / Izz)
local T, N = 2 * math.pi / w, 10
local model = hanging(0, N * T, T / 200):compile()
tap.ok(model:num_coords() == 7 and model:num_rows() == 1,
  string.format("the spring glued to two frames is eliminated: 7 coordinates, 1 row (got %d, %d)",
    model:num_coords(), model:num_rows()))
local res = model:simulate {}
local n = #res.t
local derr, dE, dang = 0, 0, 0
for i = 1, n do
  local th = 2 * math.atan(res["b.q3"][i], res["b.q0"][i])
  derr = math.max(derr, math.abs(th - th0 * math.cos(w * res.t[i])))
  dang = math.max(dang, math.abs(res["coil.angle"][i] - math.abs(th)))
  dE = math.max(dE, math.abs(res.energy[i] - res.energy[1]))
end
local E0 = 0.5 * k * th0 * th0
-- At t = N T the angular velocity is -th0 w sin(2 pi N dT/T): its size gives the period error.
local wz = res["b.omega_z"][n]
local period_err = math.abs(wz) / (th0 * w * 2 * math.pi * N)
tap.ok(math.abs(res.t[n] - N * T) < 1e-12 and period_err < 1e-8,
  string.format("undamped: period 2 pi sqrt(Izz/k) = %.10f s to %.2g relative (omega_z at t = %d T: %.2g rad/s)",
    T, period_err, N, wz))
tap.ok(derr < 1e-8 * th0, string.format("undamped: th(t) = th0 cos(w t) to %.2g rad over %d periods", derr, N))
tap.ok(math.abs(res.energy[1] - E0) < 1e-13 * E0 and dE < 1e-9 * E0,
  string.format("undamped: energy = 1/2 k th0^2 = %.4g J at t = 0, conserved to %.2g relative", E0, dE / E0))
tap.ok(dang < 1e-12, string.format("output angle = |theta| (%.2g)", dang))
local tz = res["coil.torque_z"][1]
tap.ok(math.abs(tz + k * th0) < 1e-13 and math.abs(res["coil.torque_x"][1]) < 1e-15,
  string.format("output torque on b at t = 0: (%.3g, %.3g, %.15g) = -k th0 z", res["coil.torque_x"][1],
    res["coil.torque_y"][1], tz))

local c = 0.12
local s = c / (2 * Izz)
local wd = math.sqrt(w * w - s * s)
local Td = 2 * math.pi / wd
res = hanging(c, N * Td, Td / 200):simulate {}
n = #res.t
derr = 0
for i = 1, n do
  local t = res.t[i]
  local th = 2 * math.atan(res["b.q3"][i], res["b.q0"][i])
  local want = th0 * math.exp(-s * t) * (math.cos(wd * t) + s / wd * math.sin(wd * t))
  derr = math.max(derr, math.abs(th - want))
end
local thN = 2 * math.atan(res["b.q3"][n], res["b.q0"][n])
local s_meas = -math.log(thN / th0) / (N * Td)
tap.ok(math.abs(s_meas - s) < 1e-8 * s and derr < 1e-8 * th0,
  string.format("damped: decay rate c/(2 Izz) = %.6g 1/s measured %.12g (%.2g relative); th(t) to %.2g rad",
    s, s_meas, math.abs(s_meas - s) / s, derr))
tap.ok(res.energy[n] < res.energy[1] * math.exp(-2 * s * N * Td) * 1.01,
  string.format("damped: energy decays (%.4g J to %.4g J)", res.energy[1], res.energy[n]))

-- 3. A tumbling body on the spring (asymmetric inertia, a general initial rotation and
-- angular velocity, the spring to a tilted ground frame): energy conserved.
do
  local sys = joinery.system { gravity = { 0, 0, 0 } }
  local qg = quat_axis_angle(1, 1, 0, 0.4)
  local ground = sys:add("ground3d", "ground", { q0 = qg[1], q1 = qg[2], q2 = qg[3], q3 = qg[4] })
  local q = quat_axis_angle(1, -2, 0.5, 1.3)
  local wb = { 1.5, -2, 3 } -- body axes: q' = 1/2 G(q)^T w
  local G = { { -q[2], q[1], q[4], -q[3] }, { -q[3], -q[4], q[1], q[2] }, { -q[4], q[3], -q[2], q[1] } }
  local qd = {}
  for j = 1, 4 do qd[j] = 0.5 * (G[1][j] * wb[1] + G[2][j] * wb[2] + G[3][j] * wb[3]) end
  local b = sys:add("body3d", "b", { m = 1, Ixx = 0.2, Iyy = 0.3, Izz = 0.4, init = qinit(q),
                                      vel = { q0 = qd[1], q1 = qd[2], q2 = qd[3], q3 = qd[4] } })
  sys:add("rotational_spring3d", "coil", { k = 2, a = ground.frame, b = b.frame })
  set(sys, 10, 0.01)
  res = sys:simulate {}
  local E0, dE, amax = res.energy[1], 0, 0
  for i = 1, #res.t do
    dE = math.max(dE, math.abs(res.energy[i] - E0))
    amax = math.max(amax, res["coil.angle"][i])
  end
  tap.ok(dE < 1e-9 * E0, string.format(
    "tumbling on the spring for 10 s (angle up to %.3g rad): energy %.6g J conserved to %.2g relative",
    amax, E0, dE / E0))
end

-- 4. torque3d spinning up a free body from rest: the torque along a principal axis (body x,
-- turned to point along n in space) gives w(t) = tau t / Ixx about it; the force moves the
-- centre of mass by f t^2 / (2 m).
do
  local sys = joinery.system { gravity = { 0, 0, 0 } }
  local q = quat_axis_angle(1, 2, 3, 0.9)
  local function rot(r)
    local e = { q[2], q[3], q[4] }
    local ee, er = e[1] ^ 2 + e[2] ^ 2 + e[3] ^ 2, e[1] * r[1] + e[2] * r[2] + e[3] * r[3]
    local x = { e[2] * r[3] - e[3] * r[2], e[3] * r[1] - e[1] * r[3], e[1] * r[2] - e[2] * r[1] }
    local o = {}
    for i = 1, 3 do o[i] = (q[1] ^ 2 - ee) * r[i] + 2 * er * e[i] + 2 * q[1] * x[i] end
    return o
  end
  local nx = rot { 1, 0, 0 }
  local tau, m, f = 0.7, 2, { 0.3, -0.1, 0.2 }
  local b = sys:add("body3d", "b", { m = m, Ixx = 0.25, Iyy = 0.4, Izz = 0.5, init = qinit(q) })
  sys:add("torque3d", "drive", { tx = tau * nx[1], ty = tau * nx[2], tz = tau * nx[3],
                                 fx = f[1], fy = f[2], fz = f[3], frame = b.frame })
  set(sys, 5, 0.05)
  local model3 = sys:compile()
  tap.ok(model3:num_coords() == 7, string.format("torque3d glued to a body frame is eliminated (%d coordinates)",
    model3:num_coords()))
  res = model3:simulate {}
  local werr, xerr, perr = 0, 0, 0
  for i = 2, #res.t do
    local t = res.t[i]
    local want = tau * t / 0.25
    werr = math.max(werr, math.abs(res["b.omega_x"][i] - want) / want,
      math.abs(res["b.omega_y"][i]) / want, math.abs(res["b.omega_z"][i]) / want)
    for k2, cc in ipairs { "x", "y", "z" } do
      xerr = math.max(xerr, math.abs(res["b." .. cc][i] - f[k2] * t * t / (2 * m)))
    end
    local P = tau * want + (f[1] ^ 2 + f[2] ^ 2 + f[3] ^ 2) * t / m
    perr = math.max(perr, math.abs(res["drive.power"][i] - P) / P)
  end
  tap.ok(werr < 1e-9, string.format("constant torque: w(t) = tau t / Ixx about the principal axis to %.2g relative (w(5) = %.12g rad/s)",
    werr, res["b.omega_x"][#res.t]))
  tap.ok(xerr < 1e-10 and perr < 1e-9,
    string.format("constant force: x(t) = f t^2 / 2m to %.2g m; power = tau w + f.v to %.2g relative", xerr, perr))
end

-- 5. A torque of time as a Lua part: tau0 cos(W t) about space z on a body at rest turned
-- about z: w_z(t) = tau0 sin(W t) / (Izz W). Q on the quaternion is 2 E(q)^T tau / |q|^2.
joinery.part_type {
  name = "test_torque3d_cos", doc = "torque tau0 cos(W t) about space z on a spatial frame (test part)",
  params = {
    { name = "tau0", default = 1, unit = "N m", doc = "amplitude" },
    { name = "W", default = 1, unit = "rad/s", doc = "angular frequency", domain = "positive" },
  },
  coords = { "x", "y", "z", "q0", "q1", "q2", "q3" },
  terminals = { { name = "frame", coords = { "x", "y", "z", "q0", "q1", "q2", "q3" } } },
  force = function(q, v, t, p)
    local tz = p.tau0 * math.cos(p.W * t)
    local n2 = q.q0 * q.q0 + q.q1 * q.q1 + q.q2 * q.q2 + q.q3 * q.q3
    -- the third row of E(q) = [-e, [e]x + q0 I] is (-q3, -q2, q1, q0)
    return { q0 = -2 * tz * q.q3 / n2, q1 = -2 * tz * q.q2 / n2, q2 = 2 * tz * q.q1 / n2,
             q3 = 2 * tz * q.q0 / n2 }
  end,
}
do
  local sys = joinery.system { gravity = { 0, 0, 0 } }
  local tau0, W = 0.4, 3
  local b = sys:add("body3d", "b", { m = 1, Ixx = 0.2, Iyy = 0.3, Izz = 0.45,
                                      init = qinit(quat_axis_angle(0, 0, 1, 0.3)) })
  sys:add("test_torque3d_cos", "drive", { tau0 = tau0, W = W, frame = b.frame })
  set(sys, 4, 0.02)
  res = sys:simulate {}
  local err, wmax = 0, tau0 / (0.45 * W)
  for i = 1, #res.t do
    err = math.max(err, math.abs(res["b.omega_z"][i] - wmax * math.sin(W * res.t[i])),
      math.abs(res["b.omega_x"][i]), math.abs(res["b.omega_y"][i]))
  end
  tap.ok(err < 1e-9 * wmax, string.format(
    "Lua torque tau0 cos(W t): w_z = tau0 sin(W t) / (Izz W) to %.2g relative", err / wmax))
end
tap.done()
