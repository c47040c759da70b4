-- Spatial bodies and joints (docs/bodies3d.md): the conformance suite on general parameter
-- sets (asymmetric inertia with products, tilted axes, offsets, relative orientations), then
-- each joint in a mechanism whose motion or forces are known in closed form.
local tap = dofile("tests/lua/tap.lua")
local joinery = require "joinery"

local function quat_axis_angle(ax, ay, az, angle)
  local n = math.sqrt(ax * ax + ay * ay + az * az)
  local s = math.sin(angle / 2) / n
  return { math.cos(angle / 2), ax * s, ay * s, az * s }
end
local function qmul(a, b)
  return { a[1] * b[1] - a[2] * b[2] - a[3] * b[3] - a[4] * b[4],
           a[1] * b[2] + a[2] * b[1] + a[3] * b[4] - a[4] * b[3],
           a[1] * b[3] + a[3] * b[1] + a[4] * b[2] - a[2] * b[4],
           a[1] * b[4] + a[4] * b[1] + a[2] * b[3] - a[3] * b[2] }
end
local function rotate(q, r)
  local p = qmul(qmul(q, { 0, r[1], r[2], r[3] }), { q[1], -q[2], -q[3], -q[4] })
  return { p[2], p[3], p[4] }
end
local function qinit(q, x)
  x = x or { 0, 0, 0 }
  return { x = x[1], y = x[2], z = x[3], q0 = q[1], q1 = q[2], q2 = q[3], q3 = q[4] }
end

-- 1. Conformance: derivatives against finite differences, Q against Lagrange's equations.
local qr = quat_axis_angle(1, 2, -0.5, 0.7)
local cases = {
  { "body3d", { m = 2, Ixx = 1, Iyy = 2, Izz = 2.5, Ixy = 0.1, Ixz = -0.2, Iyz = 0.15 } },
  { "marker3d", { rx = 0.3, ry = -0.2, rz = 0.5 } },
  { "ground3d", { x = 1, y = 2, z = 3, q0 = qr[1], q1 = qr[2], q2 = qr[3], q3 = qr[4] } },
  { "hinge3d", { rax = 0.1, ray = 0.2, raz = -0.3, rbx = -0.4, rby = 0.1, rbz = 0.2,
                 nax = 1, nay = 1, naz = 0.2, nbx = -0.3, nby = 1, nbz = 0.5 } },
  { "prismatic3d", { rax = 0.1, ray = 0.2, raz = -0.3, rbx = -0.4, rby = 0.1, rbz = 0.2,
                     nax = 0.3, nay = -1, naz = 0.6, q0 = qr[1], q1 = qr[2], q2 = qr[3], q3 = qr[4] } },
  { "weld3d", { rax = 0.1, ray = 0.2, raz = -0.3, rbx = -0.4, rby = 0.1, rbz = 0.2,
                q0 = qr[1], q1 = qr[2], q2 = qr[3], q3 = qr[4] } },
}
tap.plan(#cases + 16) -- each case, then the mechanisms below
for _, c in ipairs(cases) do
  local r = joinery.check_part(c[1], c[2], { seed = 11, states = 8, random_params = false })
  tap.ok(r.passed and r.instances == 1 and r.checks.lagrange.failed == 0
    and (c[1] ~= "body3d" or r.checks.lagrange.count > 0),
    string.format("%s conforms with general parameters (worst: J %.2g, gamma %.2g, A %.2g, b %.2g, Lagrange %.2g)",
      c[1], r.checks.terminal_jacobian.worst, r.checks.terminal_acc_bias.worst,
      r.checks.constraint_A.worst, r.checks.constraint_b.worst, r.checks.lagrange.worst))
  if not r.passed then tap.diag(r.log) end
end

-- 2. hinge3d: a compound pendulum about a horizontal axis (space y). The CoM hangs d below
-- the hinge point; I_p theta'' = -m g d sin(theta), I_p = Iyy + m d^2. The same pendulum
-- through a marker's frame (the hinge's glue then stays as rows) must give the same motion.
local m, d, g, th0 = 1.5, 0.4, 9.81, 1.2
local Ixx, Iyy, Izz = 0.05, 0.04, 0.03
local function hinge_pendulum(via_marker)
  local sys = joinery.system { gravity = { 0, 0, -g } }
  local ground = sys:add("ground3d", "ground", {})
  local q = quat_axis_angle(0, 1, 0, th0)
  local x = rotate(q, { 0, 0, -d })
  local b = sys:add("body3d", "b", { m = m, Ixx = Ixx, Iyy = Iyy, Izz = Izz, init = qinit(q, x) })
  local frame_b, rb = b.frame, d
  if via_marker then
    frame_b = sys:add("marker3d", "top", { rz = d, body = b.frame }).frame
    rb = 0
  end
  sys:add("hinge3d", "h", { rbz = rb, nax = 0, nay = 1, naz = 0, nbx = 0, nby = 1, nbz = 0,
                            a = ground.frame, b = frame_b })
  sys:settings { t_end = 2, dt_out = 0.01, rtol = 1e-12, atol = 1e-13 }
  return sys
end
local model = hinge_pendulum(false):compile()
tap.ok(model:num_coords() == 7 and model:num_rows() == 6,
  string.format("hinge3d glued to frames is eliminated: 7 coordinates, 6 rows (norm + 5); got %d, %d",
    model:num_coords(), model:num_rows()))
local res = model:simulate {}
local res2 = hinge_pendulum(true):simulate {}
local Ip = Iyy + m * d * d
local function f(s) return { s[2], -m * g * d / Ip * math.sin(s[1]) } end
local function rk4(t_end, h)
  local s = { th0, 0 }
  for _ = 1, math.floor(t_end / h + 0.5) do
    local k1 = f(s)
    local k2 = f { s[1] + h / 2 * k1[1], s[2] + h / 2 * k1[2] }
    local k3 = f { s[1] + h / 2 * k2[1], s[2] + h / 2 * k2[2] }
    local k4 = f { s[1] + h * k3[1], s[2] + h * k3[2] }
    s = { s[1] + h / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1]),
          s[2] + h / 6 * (k1[2] + 2 * k2[2] + 2 * k3[2] + k4[2]) }
  end
  return s
end
local ref = rk4(2, 1e-4)
local n = #res.t
tap.is_near(res["h.angle"][n], ref[1], 1e-8, "hinge3d angle at t = 2 s matches the compound pendulum")
local dmark, de, dtorque = 0, 0, 0
for i = 1, n do
  dmark = math.max(dmark, math.abs(res["h.angle"][i] - res2["h.angle"][i]))
  de = math.max(de, math.abs(res.energy[i] - res.energy[1]))
  dtorque = math.max(dtorque, math.abs(res["h.ty"][i]))
end
tap.ok(dmark < 1e-9, string.format("the same pendulum through marker3d's frame agrees (%.3g rad)", dmark))
tap.ok(de < 1e-9 * m * g * d, string.format("energy conserved (%.3g J)", de))
tap.ok(dtorque < 1e-9, string.format("an ideal hinge transmits no torque about its axis (%.3g N m)", dtorque))

-- The hinge angle is an atan2 (known modulo 2 pi) but is reported continuous: a body
-- spinning freely on a hinge through its centre at w = 5 rad/s turns 3.2 times in 4 s,
-- reported every 0.05 s (0.25 rad apart); angle = w t throughout, no jumps of 2 pi. The
-- bound is the integration's phase error at rtol 1e-12 (measured 1.8e-9 rad after 20 rad);
-- a wrapped angle would be off by multiples of 2 pi.
do
  local w = 5
  local sys = joinery.system { gravity = { 0, 0, 0 } }
  local ground = sys:add("ground3d", "ground", {})
  local b = sys:add("body3d", "b", { m = 1, Ixx = 0.02, Iyy = 0.03, Izz = 0.04,
    init = qinit({ 1, 0, 0, 0 }), vel = { q2 = w / 2 } }) -- q' = E(q)^T w / 2 at q = 1
  sys:add("hinge3d", "h", { nax = 0, nay = 1, naz = 0, nbx = 0, nby = 1, nbz = 0,
                            a = ground.frame, b = b.frame })
  sys:settings { t_end = 4, dt_out = 0.05, rtol = 1e-12, atol = 1e-13 }
  local spin = sys:simulate {}
  local worst = 0
  for i = 1, #spin.t do worst = math.max(worst, math.abs(spin["h.angle"][i] - w * spin.t[i])) end
  tap.ok(worst < 1e-8, string.format("hinge3d angle continuous over 3.2 turns: w t to %.2g rad (%.6f at 4 s)",
    worst, spin["h.angle"][#spin.t]))
end

-- 3. prismatic3d: a body sliding without turning along a tilted axis of a rotated ground
-- frame: s = 1/2 (g . u) t^2, and the joint force on the body is m (g . u) u - m g.
do
  local qa = quat_axis_angle(1, 0, 0, 0.3)
  local sys = joinery.system { gravity = { 0, 0, -g } }
  local ground = sys:add("ground3d", "ground", { q0 = qa[1], q1 = qa[2], q2 = qa[3], q3 = qa[4] })
  local b = sys:add("body3d", "b", { m = m, Ixx = Ixx, Iyy = Iyy, Izz = Izz, init = qinit(qa) })
  sys:add("prismatic3d", "p", { nax = 0, nay = 1, naz = 1, a = ground.frame, b = b.frame })
  local r = sys:simulate { t_end = 1, dt_out = 0.1, rtol = 1e-12, atol = 1e-13 }
  local u = rotate(qa, { 0, 1 / math.sqrt(2), 1 / math.sqrt(2) })
  local gu = -g * u[3]
  local k = #r.t
  tap.is_near(r["p.displacement"][k], 0.5 * gu * 1, 1e-10, "prismatic3d: displacement 1/2 (g . u) t^2 at t = 1 s")
  tap.is_near(r["p.speed"][k], gu * 1, 1e-10, "prismatic3d: speed (g . u) t")
  local want = { m * gu * u[1], m * gu * u[2], m * gu * u[3] + m * g }
  local df, dw = 0, 0
  for i = 1, k do
    for j, c in ipairs { "x", "y", "z" } do
      df = math.max(df, math.abs(r["p.f" .. c][i] - want[j]))
      dw = math.max(dw, math.abs(r["b.omega_" .. c][i]))
    end
  end
  tap.ok(df < 1e-9 and dw < 1e-12, string.format(
    "prismatic3d: the joint force is m (g . u) u - m g (%.3g N) and the body does not turn (%.3g rad/s)", df, dw))
end

-- 4. weld3d, at rest: a body welded to a rotated ground frame at a point off its centre of
-- mass stays put; the weld holds the weight, F = m g up, and the torque about the joint
-- point is (CoM - P) x F.
do
  local qa, qrel = quat_axis_angle(0, 0, 1, 0.4), quat_axis_angle(1, -1, 0.5, 0.9)
  local ra, rb = { 0.2, -0.1, 0.3 }, { 0.3, 0, 0.1 }
  local qb = qmul(qa, qrel)
  local p = rotate(qa, ra)
  local arm = rotate(qb, rb)
  local x = { p[1] - arm[1], p[2] - arm[2], p[3] - arm[3] }
  local sys = joinery.system { gravity = { 0, 0, -g } }
  local ground = sys:add("ground3d", "ground", { q0 = qa[1], q1 = qa[2], q2 = qa[3], q3 = qa[4] })
  local b = sys:add("body3d", "b", { m = m, Ixx = Ixx, Iyy = Iyy, Izz = Izz, init = qinit(qb, x) })
  sys:add("weld3d", "w", { rax = ra[1], ray = ra[2], raz = ra[3], rbx = rb[1], rby = rb[2], rbz = rb[3],
    q0 = qrel[1], q1 = qrel[2], q2 = qrel[3], q3 = qrel[4], a = ground.frame, b = b.frame })
  local r = sys:simulate { t_end = 1, dt_out = 0.1, rtol = 1e-10, atol = 1e-12 }
  local k = #r.t
  local moved = 0
  for j, c in ipairs { "x", "y", "z" } do moved = math.max(moved, math.abs(r["b." .. c][k] - x[j])) end
  local F = { 0, 0, m * g }
  local T = { -arm[2] * F[3] + arm[3] * F[2], -arm[3] * F[1] + arm[1] * F[3], -arm[1] * F[2] + arm[2] * F[1] }
  local dF, dT = 0, 0
  for j, c in ipairs { "x", "y", "z" } do
    dF = math.max(dF, math.abs(r["w.f" .. c][k] - F[j]))
    dT = math.max(dT, math.abs(r["w.t" .. c][k] - T[j]))
  end
  tap.ok(moved < 1e-12, string.format("weld3d holds the body in place (%.3g m)", moved))
  tap.ok(dF < 1e-10 and dT < 1e-10, string.format("weld3d force m g up (%.3g N) and torque (CoM - P) x F (%.3g N m)", dF, dT))
end

-- 5. weld3d in motion: two bodies welded off-centre, tumbling freely. Only one of them is
-- given a velocity: the initial projection moves the other's. The pair is one rigid body:
-- energy and angular momentum (about the origin) are conserved, the weld holds.
do
  local sys = joinery.system { gravity = { 0, 0, 0 } }
  local w = { 0.3, 1.0, 0.5 }
  local A = sys:add("body3d", "A", { m = 1, Ixx = 0.1, Iyy = 0.2, Izz = 0.25,
    init = qinit { 1, 0, 0, 0 },
    vel = { x = 0, y = 0, z = 0, q0 = 0, q1 = w[1] / 2, q2 = w[2] / 2, q3 = w[3] / 2 } })
  local B = sys:add("body3d", "B", { m = 0.5, Ixx = 0.05, Iyy = 0.05, Izz = 0.05,
    init = qinit({ 1, 0, 0, 0 }, { 0.4, 0, 0 }) })
  sys:add("weld3d", "w", { rax = 0.4, a = A.frame, b = B.frame })
  local r = sys:simulate { t_end = 5, dt_out = 0.01, rtol = 1e-13, atol = 1e-14, drift = "baumgarte" }
  local function L(i)
    local t = { 0, 0, 0 }
    for _, b in ipairs { { "A", 1 }, { "B", 0.5 } } do
      local p, mb = b[1], b[2]
      local x = { r[p .. ".x"][i], r[p .. ".y"][i], r[p .. ".z"][i] }
      local v = { r["der(" .. p .. ".x)"][i], r["der(" .. p .. ".y)"][i], r["der(" .. p .. ".z)"][i] }
      t[1] = t[1] + r[p .. ".Lx"][i] + mb * (x[2] * v[3] - x[3] * v[2])
      t[2] = t[2] + r[p .. ".Ly"][i] + mb * (x[3] * v[1] - x[1] * v[3])
      t[3] = t[3] + r[p .. ".Lz"][i] + mb * (x[1] * v[2] - x[2] * v[1])
    end
    return t
  end
  local L0, dL, dE, res_pos, rel = L(1), 0, 0, 0, 0
  local nL = math.sqrt(L0[1] ^ 2 + L0[2] ^ 2 + L0[3] ^ 2)
  for i = 1, #r.t do
    local Li = L(i)
    dL = math.max(dL, math.sqrt((Li[1] - L0[1]) ^ 2 + (Li[2] - L0[2]) ^ 2 + (Li[3] - L0[3]) ^ 2) / nL)
    dE = math.max(dE, math.abs(r.energy[i] - r.energy[1]) / r.energy[1])
    res_pos = math.max(res_pos, r["residual.pos"][i])
    -- both bodies turn together: the same angular velocity in their (aligned) axes
    for _, c in ipairs { "x", "y", "z" } do
      rel = math.max(rel, math.abs(r["A.omega_" .. c][i] - r["B.omega_" .. c][i]))
    end
  end
  tap.ok(math.abs(r["der(B.y)"][1] - w[3] * 0.4) < 1e-12 and math.abs(r["der(B.z)"][1] + w[2] * 0.4) < 1e-12,
    "the initial projection gives the welded body its rigid-body velocity w x r")
  tap.ok(dL < 1e-9 and dE < 1e-9, string.format(
    "two welded bodies tumble as one: angular momentum (%.3g) and energy (%.3g) conserved", dL, dE))
  tap.ok(res_pos < 1e-9 and rel < 1e-9, string.format(
    "the weld holds (position residual %.3g, angular velocity mismatch %.3g rad/s)", res_pos, rel))
end

-- 6. The script helpers: body:point / body:frame_at / body:marker on a body3d, sys:ball.
do
  local sys = joinery.system { gravity = { 0, 0, -9.81 } }
  local b = sys:add("body3d", "b", {})
  local p = b:point("tip", { 0, 0, -0.5 })
  local f = b:frame_at("side", { 0.2, 0, 0 })
  local mk = b:marker("knob", { 0, 0.1, 0 })
  tap.ok(p.dim == 3 and p.name == "b_tip.pos" and f.dim == 7 and f.name == "b_side.frame"
    and mk.type == "marker3d" and mk.name == "b_knob",
    "body:point, body:frame_at and body:marker add marker3d parts <body>_<name> and return pos (3-D), frame (7-D), the part")
  local g = sys:add("ground", "g", { dim = 3 })
  sys:ball(p, g.pos, "ball")
  local model = sys:compile()
  local c = model:evaluate(model:initial())
  tap.ok(model:num_coords() == 7 and math.abs(c["b.z"] - 0.5) < 1e-12 and c["force.ball.z"] ~= nil,
    "sys:ball glues two points: the body hangs its tip at the ground point, force.ball.x/.y/.z")
end
tap.done()
