-- Markers and joints as channels, against the kinematics: a marker's "<marker>.x" ... are
-- its point's world pose and velocity (not the body's centre, which stays "<body>.x"), a
-- hinge3d's angle and rate are the bodies' relative rotation about the axis, a prismatic3d's
-- displacement and speed the joint points' gap along the axis. Each at two tolerances and
-- both signs of the offsets. The closed forms read the bodies' own channels of the same row,
-- so they hold to rounding whatever the tolerance; what rests on the rows holding (a pinned
-- point on its pivot, the relative rotation being about the hinge's axis) is bounded by the
-- run's atol, to which the projection keeps them (measured: below 1e-14 at both).
local here = arg[0]:match("^(.*[/\\])") or ""
local tap = dofile(here .. "tap.lua")
local joinery = require "joinery"

local tols = { { rtol = 1e-8, atol = 1e-10 }, { rtol = 1e-11, atol = 1e-13 } }
local signs = { 1, -1 }
tap.plan(#tols * #signs * 4 + 2 + #tols * #signs * 3 + #tols * #signs * 3 + #tols * #signs * 2)

local function has(list, x)
  for _, y in ipairs(list) do if y == x then return true end end
  return false
end

-- quaternions, scalar first
local function qmul(a, b)
  return { a[1] * b[1] - a[2] * b[2] - a[3] * b[3] - a[4] * b[4],
           a[1] * b[2] + a[2] * b[1] + a[3] * b[4] - a[4] * b[3],
           a[1] * b[3] + a[3] * b[1] + a[4] * b[2] - a[2] * b[4],
           a[1] * b[4] + a[4] * b[1] + a[2] * b[3] - a[3] * b[2] }
end
local function conj(q) return { q[1], -q[2], -q[3], -q[4] } end
local function unit(q)
  local n = math.sqrt(q[1] ^ 2 + q[2] ^ 2 + q[3] ^ 2 + q[4] ^ 2)
  return { q[1] / n, q[2] / n, q[3] / n, q[4] / n }
end
local function rotate(q, r)
  local p = qmul(qmul(q, { 0, r[1], r[2], r[3] }), conj(q))
  return { p[2], p[3], p[4] }
end
local function axis_angle(ax, ay, az, angle)
  local n = math.sqrt(ax * ax + ay * ay + az * az)
  local s = math.sin(angle / 2) / n
  return { math.cos(angle / 2), ax * s, ay * s, az * s }
end
local function cross(a, b)
  return { a[2] * b[3] - a[3] * b[2], a[3] * b[1] - a[1] * b[3], a[1] * b[2] - a[2] * b[1] }
end
local function dot(a, b) return a[1] * b[1] + a[2] * b[2] + a[3] * b[3] end
local function frame(r, body, i)
  local q = { r[body .. ".q0"][i], r[body .. ".q1"][i], r[body .. ".q2"][i], r[body .. ".q3"][i] }
  local x = { r[body .. ".x"][i], r[body .. ".y"][i], r[body .. ".z"][i] }
  local qd = { r["der(" .. body .. ".q0)"][i], r["der(" .. body .. ".q1)"][i],
               r["der(" .. body .. ".q2)"][i], r["der(" .. body .. ".q3)"][i] }
  local v = { r["der(" .. body .. ".x)"][i], r["der(" .. body .. ".y)"][i], r["der(" .. body .. ".z)"][i] }
  return x, q, v, qd
end

-- 1. A planar body swinging on a pin at its marker "top" (offset s (-0.5, 0.1) from the
-- centre), with a marker "tip" at s (0.4, -0.2), angle 0.3: tip = centre + R(theta) r,
-- its velocity centre' + theta' k x R r, its angle theta + 0.3; top stays on the pivot (0, 0)
-- with zero velocity; |tip - top| is the body's |r_tip - r_top|.
for _, tol in ipairs(tols) do
  for _, s in ipairs(signs) do
    local sys = joinery.system { gravity = { 0, -9.81 } }
    local pivot = sys:add("ground", "pivot", { dim = 2, x = 0, y = 0 })
    local rtop, rtip = { -0.5 * s, 0.1 * s }, { 0.4 * s, -0.2 * s }
    local rod = sys:add("body2d", "rod", { m = 1.3, J = 0.2,
      init = { x = -rtop[1], y = -rtop[2], theta = 0 }, vel = { theta = 2 } })
    sys:pin(rod:point("top", rtop), pivot.pos, "hinge")
    rod:marker("tip", rtip, 0.3)
    local r = sys:simulate { t_end = 2, dt_out = 0.01, rtol = tol.rtol, atol = tol.atol }
    local form, pin, len, apart, swing = 0, 0, 0, 0, 0
    local L = math.sqrt((rtip[1] - rtop[1]) ^ 2 + (rtip[2] - rtop[2]) ^ 2)
    for i = 1, r.rows do
      local x, y, th = r["rod.x"][i], r["rod.y"][i], r["rod.theta"][i]
      local vx, vy, w = r["der(rod.x)"][i], r["der(rod.y)"][i], r["der(rod.theta)"][i]
      local c, sn = math.cos(th), math.sin(th)
      local ax, ay = c * rtip[1] - sn * rtip[2], sn * rtip[1] + c * rtip[2]
      for _, d in ipairs {
        r["rod_tip.x"][i] - (x + ax), r["rod_tip.y"][i] - (y + ay), r["rod_tip.angle"][i] - (th + 0.3),
        r["rod_tip.vx"][i] - (vx - w * ay), r["rod_tip.vy"][i] - (vy + w * ax), r["rod_tip.omega"][i] - w,
      } do form = math.max(form, math.abs(d)) end
      for _, d in ipairs { r["rod_top.x"][i], r["rod_top.y"][i], r["rod_top.vx"][i], r["rod_top.vy"][i] } do
        pin = math.max(pin, math.abs(d))
      end
      apart = math.max(apart, math.abs(r["rod_tip.x"][i] - r["rod.x"][i]))
      swing = math.max(swing, math.abs(r["rod.theta"][i]))
      len = math.max(len, math.abs(math.sqrt((r["rod_tip.x"][i] - r["rod_top.x"][i]) ^ 2
        + (r["rod_tip.y"][i] - r["rod_top.y"][i]) ^ 2) - L))
    end
    local what = string.format("2-D, rtol %g, offset sign %+d", tol.rtol, s)
    tap.ok(form < 1e-12, string.format("%s: rod_tip.x/y/angle/vx/vy/omega = centre + R r, its rates (%.2g)", what, form))
    tap.ok(pin < 10 * tol.atol, string.format("%s: rod_top stays on the pivot, at rest (%.2g)", what, pin))
    tap.ok(len < 1e-12, string.format("%s: |tip - top| is the body's (%.2g m)", what, len))
    -- the body turned: the point and the centre are apart, so reading one for the other fails
    tap.ok(apart > 0.3 and swing > 0.5,
      string.format("%s: the body swung %.2f rad, the point %.2f m from its centre", what, swing, apart))
  end
end

-- The default output: the marker's point under its name, its copy of the body's frame
-- (eliminated) and the eliminated glue's force left out, one glob away.
do
  local sys = joinery.system { gravity = { 0, -9.81 } }
  local pivot = sys:add("ground", "pivot", { dim = 2 })
  local rod = sys:add("body2d", "rod", { init = { x = 0.5 } })
  sys:pin(rod:point("top", { -0.5, 0 }), pivot.pos, "hinge")
  local r = sys:simulate { t_end = 0.1 }
  tap.ok(has(r.channels, "rod_top.x") and has(r.channels, "rod_top.vy") and has(r.channels, "rod.x")
    and has(r.channels, "force.hinge.x") and not has(r.channels, "rod_top.body_x")
    and not has(r.channels, "force.rod_top.body.x"),
    "default: rod_top.x/vy (the point), rod.x (the centre), force.hinge.x; not rod_top.body_x nor force.rod_top.body.x")
  local all = sys:simulate { t_end = 0.1, columns = "rod_top.*,force.*" }
  tap.ok(has(all.channels, "rod_top.body_x") and has(all.channels, "force.rod_top.body.x")
    and math.abs(all["rod_top.body_x"][all.rows] - r["rod.x"][r.rows]) < 1e-15,
    "a glob brings back the copy (the body's centre) and the eliminated glue's force")
end

-- 2. A spatial body tumbling freely with a marker at s (0.3, -0.2, 0.5): x + R(q) r, the
-- body's quaternion, v + w x R r (w in space axes, from q'), and the body's angular velocity.
for _, tol in ipairs(tols) do
  for _, s in ipairs(signs) do
    local sys = joinery.system { gravity = { 0, 0, -9.81 } }
    local q0 = axis_angle(1, 2, -0.5, 0.7)
    local qd = qmul(q0, { 0, 1.5, -2, 3 }) -- body axes w: q' = 1/2 q (0, w)
    local b = sys:add("body3d", "b", { m = 2, Ixx = 0.1, Iyy = 0.2, Izz = 0.3,
      init = { x = 1, y = 2, z = 3, q0 = q0[1], q1 = q0[2], q2 = q0[3], q3 = q0[4] },
      vel = { x = 0.5, y = -1, z = 2, q0 = qd[1] / 2, q1 = qd[2] / 2, q2 = qd[3] / 2, q3 = qd[4] / 2 } })
    local rr = { 0.3 * s, -0.2 * s, 0.5 * s }
    b:point("m", rr)
    local r = sys:simulate { t_end = 2, dt_out = 0.02, rtol = tol.rtol, atol = tol.atol }
    local pos, quat, vel, om = 0, 0, 0, 0
    for i = 1, r.rows do
      local x, q, v, qdot = frame(r, "b", i)
      local arm = rotate(unit(q), rr)
      local w = qmul(qdot, conj(q)) -- space angular velocity: w = 2 q' q*
      w = { 2 * w[2], 2 * w[3], 2 * w[4] }
      local wxr = cross(w, arm)
      for k, c in ipairs { "x", "y", "z" } do
        pos = math.max(pos, math.abs(r["b_m." .. c][i] - (x[k] + arm[k])))
        vel = math.max(vel, math.abs(r["b_m.v" .. c][i] - (v[k] + wxr[k])))
        om = math.max(om, math.abs(r["b_m.omega_" .. c][i] - r["b.omega_" .. c][i]))
      end
      for k = 0, 3 do quat = math.max(quat, math.abs(r["b_m.q" .. k][i] - q[k + 1])) end
    end
    local what = string.format("3-D, rtol %g, offset sign %+d", tol.rtol, s)
    tap.ok(pos < 1e-12, string.format("%s: b_m.x/y/z = x + R(q) r (%.2g m)", what, pos))
    tap.ok(quat == 0 and om < 1e-12, string.format("%s: b_m.q0..q3 and omega_* are the body's (%.2g)", what, om))
    tap.ok(vel < 1e-12, string.format("%s: b_m.vx/vy/vz = v + w x R r (%.2g m/s)", what, vel))
  end
end

-- 3. hinge3d between two free bodies spinning about a tilted axis (u in both frames): its
-- angle is the rotation of q_a* q_b about u, 2 atan2(e . u, q0), unwrapped along the run, and
-- its rate that angle's derivative from the quaternions' rates; it turns several times.
for _, tol in ipairs(tols) do
  for _, s in ipairs(signs) do
    local sys = joinery.system { gravity = { 0, 0, 0 } }
    local u = { 0.3, -0.5, 0.8 }
    local un = math.sqrt(dot(u, u))
    u = { u[1] / un, u[2] / un, u[3] / un }
    local qa = axis_angle(0.2, 1, 0.4, 0.5)
    local A = sys:add("body3d", "A", { m = 1, Ixx = 0.1, Iyy = 0.2, Izz = 0.3,
      init = { q0 = qa[1], q1 = qa[2], q2 = qa[3], q3 = qa[4] } })
    local ra, rb = { 0.2 * s, 0.1 * s, -0.1 * s }, { -0.3 * s, 0.2 * s, 0.1 * s }
    local qb = qa -- aligned at the start: angle 0
    local pa, arm = rotate(qa, ra), rotate(qb, rb)
    -- B spins about the hinge axis relative to A: q_b' = 1/2 q_b (0, 12 u) (body axes, where
    -- u is too); the initial projection shares the motion out between the two bodies
    local qd = qmul(qb, { 0, 12 * u[1], 12 * u[2], 12 * u[3] })
    local B = sys:add("body3d", "B", { m = 0.5, Ixx = 0.05, Iyy = 0.06, Izz = 0.07,
      init = { x = pa[1] - arm[1], y = pa[2] - arm[2], z = pa[3] - arm[3],
               q0 = qb[1], q1 = qb[2], q2 = qb[3], q3 = qb[4] },
      vel = { q0 = qd[1] / 2, q1 = qd[2] / 2, q2 = qd[3] / 2, q3 = qd[4] / 2 } })
    sys:add("hinge3d", "h", { rax = ra[1], ray = ra[2], raz = ra[3], rbx = rb[1], rby = rb[2], rbz = rb[3],
      nax = u[1], nay = u[2], naz = u[3], nbx = u[1], nby = u[2], nbz = u[3], a = A.frame, b = B.frame })
    local r = sys:simulate { t_end = 3, dt_out = 0.01, rtol = tol.rtol, atol = tol.atol }
    local dang, drate, prev, turned = 0, 0, 0, 0
    for i = 1, r.rows do
      local _, q1, _, qd1 = frame(r, "A", i)
      local _, q2, _, qd2 = frame(r, "B", i)
      local rel = qmul(conj(q1), q2)
      local reld = qmul(conj(qd1), q2)
      local reld2 = qmul(conj(q1), qd2)
      for k = 1, 4 do reld[k] = reld[k] + reld2[k] end
      local sn, c = dot({ rel[2], rel[3], rel[4] }, u), rel[1]
      local snd, cd = dot({ reld[2], reld[3], reld[4] }, u), reld[1]
      local ang = 2 * math.atan(sn, c)
      ang = ang + 2 * math.pi * math.floor((prev - ang) / (2 * math.pi) + 0.5) -- unwrapped
      prev = ang
      local rate = 2 * (c * snd - sn * cd) / (sn * sn + c * c)
      dang = math.max(dang, math.abs(r["h.angle"][i] - ang))
      drate = math.max(drate, math.abs(r["h.rate"][i] - rate))
      turned = math.max(turned, math.abs(r["h.angle"][i]))
    end
    local what = string.format("hinge3d, rtol %g, offset sign %+d", tol.rtol, s)
    tap.ok(dang < 10 * tol.atol, string.format("%s: angle = the rotation of q_a* q_b about the axis (%.2g rad)", what, dang))
    tap.ok(drate < 10 * tol.atol, string.format("%s: rate = its derivative (%.2g rad/s)", what, drate))
    tap.ok(turned > 4 * math.pi, string.format("%s: continuous over %.1f turns", what, turned / (2 * math.pi)))
  end
end

-- 4. prismatic3d: a body sliding on a tilted axis of a rotated ground frame, joint points
-- offset both ways: displacement (P_b - P_a) . R_a u, speed its rate.
for _, tol in ipairs(tols) do
  for _, s in ipairs(signs) do
    local g = 9.81
    local qa = axis_angle(1, 0.5, 0, 0.3)
    local ra, rb = { 0.1 * s, -0.2 * s, 0.3 * s }, { -0.2 * s, 0.1 * s, 0.2 * s }
    local sys = joinery.system { gravity = { 0, 0, -g } }
    local ground = sys:add("ground3d", "ground", { q0 = qa[1], q1 = qa[2], q2 = qa[3], q3 = qa[4] })
    local pa, arm = rotate(qa, ra), rotate(qa, rb)
    local b = sys:add("body3d", "b", { m = 1, Ixx = 0.1, Iyy = 0.1, Izz = 0.1,
      init = { x = pa[1] - arm[1], y = pa[2] - arm[2], z = pa[3] - arm[3],
               q0 = qa[1], q1 = qa[2], q2 = qa[3], q3 = qa[4] } })
    sys:add("prismatic3d", "p", { rax = ra[1], ray = ra[2], raz = ra[3], rbx = rb[1], rby = rb[2], rbz = rb[3],
      nax = 0, nay = 1, naz = -1, a = ground.frame, b = b.frame })
    local r = sys:simulate { t_end = 1, dt_out = 0.01, rtol = tol.rtol, atol = tol.atol }
    local n = { 0, 1 / math.sqrt(2), -1 / math.sqrt(2) }
    local un = rotate(qa, n)
    local dd, ds = 0, 0
    for i = 1, r.rows do
      local x, q, v, qdot = frame(r, "b", i)
      local armb = rotate(unit(q), rb)
      local w = qmul(qdot, conj(q))
      local vp = cross({ 2 * w[2], 2 * w[3], 2 * w[4] }, armb)
      local gap = { x[1] + armb[1] - pa[1], x[2] + armb[2] - pa[2], x[3] + armb[3] - pa[3] }
      dd = math.max(dd, math.abs(r["p.displacement"][i] - dot(gap, un)))
      ds = math.max(ds, math.abs(r["p.speed"][i] - dot({ v[1] + vp[1], v[2] + vp[2], v[3] + vp[3] }, un)))
    end
    local k = r.rows
    local what = string.format("prismatic3d, rtol %g, offset sign %+d", tol.rtol, s)
    tap.ok(dd < 1e-12 and math.abs(r["p.displacement"][k] - 0.5 * g * un[3] * -1) < 1e-6,
      string.format("%s: displacement = (P_b - P_a) . u (%.2g m), 1/2 (g . u) t^2 at 1 s", what, dd))
    tap.ok(ds < 1e-12, string.format("%s: speed = (P_b' - P_a') . u (%.2g m/s)", what, ds))
  end
end
