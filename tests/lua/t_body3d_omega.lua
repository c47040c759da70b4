-- A body3d's initial angular velocity as vel = { omega = {wx, wy, wz} } (space axes) or
-- vel = { omega_body = {wx, wy, wz} } (body axes): the compile turns it into quaternion
-- rates at the assembled orientation (docs/bodies3d.md, "Initial velocities"). Checked: the
-- body reports the angular velocity it was given, kept exactly; a spinning free body keeps
-- its angular momentum and kinetic energy across the tolerance ladder; a heavy top started
-- with omega_body is the top started with quaternion rates computed by hand; bad input.
local here = arg[0]:match("^(.*[/\\])") or ""
local tap = dofile(here .. "tap.lua")
local L = dofile(here .. "ladder.lua")
local joinery = require "joinery"
tap.plan(16 + 2 * #L.methods * #L.ladder + 3 + 36 + 2)

-- R(q) v for a unit quaternion (scalar first): body axes to space axes.
local function rotate(q, v)
  local q0, e = q[1], { q[2], q[3], q[4] }
  local ev = e[1] * v[1] + e[2] * v[2] + e[3] * v[3]
  local c = { e[2] * v[3] - e[3] * v[2], e[3] * v[1] - e[1] * v[3], e[1] * v[2] - e[2] * v[1] }
  local ee = e[1] ^ 2 + e[2] ^ 2 + e[3] ^ 2
  local r = {}
  for i = 1, 3 do r[i] = (q0 * q0 - ee) * v[i] + 2 * ev * e[i] + 2 * q0 * c[i] end
  return r
end

-- A unit quaternion far from the identity: 2.1 rad about (1, -2, 0.5).
local function orientation()
  local axis, angle = { 1, -2, 0.5 }, 2.1
  local n = math.sqrt(axis[1] ^ 2 + axis[2] ^ 2 + axis[3] ^ 2)
  local s = math.sin(angle / 2) / n
  return { math.cos(angle / 2), s * axis[1], s * axis[2], s * axis[3] }
end
local q = orientation()
local INERTIA = { Ixx = 1, Iyy = 2, Izz = 2.5 } -- asymmetric: the motion tumbles

local function free_body(vel)
  local sys = joinery.system { gravity = { 0, 0, 0 } }
  sys:add("body3d", "b", { m = 2, Ixx = INERTIA.Ixx, Iyy = INERTIA.Iyy, Izz = INERTIA.Izz,
    init = { q0 = q[1], q1 = q[2], q2 = q[3], q3 = q[4] }, vel = vel })
  return sys
end

-- The body's reported angular velocity at the initial state, body and space axes.
local function reported(model)
  local qi, vi = model:initial()
  local ch = model:evaluate(qi, vi)
  local wb = { ch["b.omega_x"], ch["b.omega_y"], ch["b.omega_z"] }
  return wb, rotate({ qi[4], qi[5], qi[6], qi[7] }, wb), ch
end

local w = { 0.7, -1.3, 4.2 }
for _, axes in ipairs { "omega", "omega_body" } do
  local model = free_body({ [axes] = w, x = 0.5 }):compile()
  local wb, ws = reported(model)
  local got = axes == "omega" and ws or wb
  local other = axes == "omega" and wb or ws
  local want_other = axes == "omega" and rotate({ q[1], -q[2], -q[3], -q[4] }, w) or rotate(q, w)
  for i = 1, 3 do
    tap.is_near(got[i], w[i], 1e-12, string.format("%s: component %d reported as given", axes, i))
  end
  local off = 0
  for i = 1, 3 do off = math.max(off, math.abs(other[i] - want_other[i])) end
  tap.ok(off <= 1e-12, string.format("%s: the other axes' components agree (%.2g)", axes, off))
  -- Consistent with the norm row, so nothing moves: the given angular velocity is kept.
  tap.is(#model:moved(), 0, axes .. ": the compile moves no initial value")
  local _, vi = model:initial()
  tap.is(vi[1], 0.5, axes .. ": the other velocities are the script's")
  local qv = 0
  for k = 0, 3 do qv = qv + q[1 + k] * vi[4 + k] end
  tap.ok(math.abs(qv) <= 1e-15, string.format("%s: q . q' = %.2g (the norm row's rate)", axes, qv))
  tap.ok(model:report() == "", axes .. ": the compile has nothing to report")
end

-- A spinning free body: angular momentum (space axes, about the centre of mass) and kinetic
-- energy are conserved. Both are checked over 5 s within 200 rtol (relative to |L| and T;
-- measured: at most 31 rtol except BDF at the default rtol, 1e-11, with 132 and 166).
local spinning = free_body { omega_body = { 0.3, 6, 0.4 } } -- near the unstable middle axis
local function conserved(res)
  local n = res.rows
  local L0 = { res["b.Lx"][1], res["b.Ly"][1], res["b.Lz"][1] }
  local Lnorm = math.sqrt(L0[1] ^ 2 + L0[2] ^ 2 + L0[3] ^ 2)
  local dL, dT = 0, 0
  for k = 1, n do
    for i, c in ipairs { "b.Lx", "b.Ly", "b.Lz" } do
      dL = math.max(dL, math.abs(res[c][k] - L0[i]) / Lnorm)
    end
    dT = math.max(dT, math.abs(res.kinetic[k] - res.kinetic[1]) / res.kinetic[1])
  end
  return dL, dT
end
for _, method in ipairs(L.methods) do
  for _, tol in ipairs(L.ladder) do
    local res = spinning:compile():simulate { method = method, t_end = 5, dt_out = 0.05,
      rtol = tol[1], atol = tol[2] }
    local rtol = tol[1] or L.DEFAULT_RTOL
    local dL, dT = conserved(res)
    tap.ok(dL <= 200 * rtol, string.format("free body, %s, rtol %s: |L(t) - L(0)| / |L| <= %.2g "
      .. "(%.1f rtol)", method, L.name(tol), dL, dL / rtol))
    tap.ok(dT <= 200 * rtol, string.format("free body, %s, rtol %s: |T(t) - T(0)| / T <= %.2g "
      .. "(%.1f rtol)", method, L.name(tol), dT, dT / rtol))
  end
end

-- The heavy top of examples/heavy_top.lua, tilted by theta0 about the space x axis and
-- started spinning about its symmetry axis only: omega_body = {0, 0, spin}, against the
-- quaternion rates by hand, q' = 1/2 q (x) (0, 0, 0, spin) = 1/2 (0, 0, -sin(h) spin,
-- cos(h) spin) for q = (cos h, sin h, 0, 0).
local TOP = { m = 1, A_cm = 0.006, C = 0.01, l = 0.1, g = 9.81, theta0 = math.pi / 6, spin = 50 }
local function top(vel)
  local h = TOP.theta0 / 2
  local sys = joinery.system { gravity = { 0, 0, -TOP.g } }
  local pivot = sys:add("ground", "pivot", { dim = 3 })
  local body = sys:add("body3d", "top", {
    m = TOP.m, Ixx = TOP.A_cm, Iyy = TOP.A_cm, Izz = TOP.C,
    init = { x = 0, y = -TOP.l * math.sin(TOP.theta0), z = TOP.l * math.cos(TOP.theta0),
      q0 = math.cos(h), q1 = math.sin(h), q2 = 0, q3 = 0 },
    vel = vel(h),
  })
  sys:ball(body:point("tip", { 0, 0, -TOP.l }), pivot.pos, "ball")
  sys:settings { t_end = 2, dt_out = 0.01, rtol = 1e-10, atol = 1e-11, method = "erk" }
  return sys
end
local by_omega = top(function() return { omega_body = { 0, 0, TOP.spin } } end):simulate()
local by_hand = top(function(h)
  return { q0 = 0, q1 = 0, q2 = -0.5 * math.sin(h) * TOP.spin, q3 = 0.5 * math.cos(h) * TOP.spin }
end):simulate()
local function max_diff(a, b, channels)
  local d = 0
  for _, c in ipairs(channels) do
    for k = 1, a.rows do d = math.max(d, math.abs(a[c][k] - b[c][k])) end
  end
  return d
end
tap.is(by_omega.rows, by_hand.rows, "heavy top: both runs give the same rows")
local state = {}
for _, c in ipairs(by_omega.model:coords()) do
  state[#state + 1] = c
  state[#state + 1] = "der(" .. c .. ")"
end
local d = max_diff(by_omega, by_hand, state)
tap.ok(d <= 1e-14, string.format("heavy top: omega_body = {0, 0, %g} and the rates by hand "
  .. "agree over 2 s to %.2g (coordinates and velocities; 0 is bit for bit)", TOP.spin, d))
local spin = 0
for k = 1, by_omega.rows do spin = math.max(spin, math.abs(by_omega["top.omega_z"][k] - TOP.spin)) end
tap.ok(spin <= 1e-7, string.format("heavy top: the spin stays %g rad/s (to %.2g)", TOP.spin, spin))

-- Bad input: each a clear error naming the part, at the script line of the sys:add.
local function sys() return joinery.system { gravity = { 0, 0, 0 } } end
tap.raises(function() sys():add("body3d", "b", { vel = { omega_z = 10 } }) end, { "part 'b' (body3d)", "'omega_z'", "did you mean 'omega'", "omega_body = {wx, wy, wz}" }, "omega_z")
tap.raises(function() sys():add("body3d", "b", { vel = { omega = { 1, 2, 3 }, omega_body = { 1, 2, 3 } } }) end, { "part 'b' (body3d)", "both omega", "omega_body" }, "omega and omega_body together")
tap.raises(function() sys():add("body3d", "b", { vel = { omega = { 1, 2, 3 }, q1 = 0.5 } }) end, { "part 'b' (body3d)", "'q1' (a quaternion rate)", "omega (space axes)", "give one of them" }, "omega with a quaternion rate")
tap.raises(function() sys():add("body3d", "b", { vel = { omega_body = { 1, 2, 3 }, q0 = 0 } }) end, { "part 'b' (body3d)", "'q0' (a quaternion rate)", "omega_body (body axes)" }, "omega_body with a quaternion rate")
tap.raises(function() sys():add("body3d", "b", { vel = { omega = { 1, 0 / 0, 3 } } }) end, { "part 'b' (body3d)", "omega (space axes)", "must be finite", "component 2 is nan" }, "a NaN component")
tap.raises(function() sys():add("body3d", "b", { vel = { omega_body = { math.huge, 0, 0 } } }) end, { "part 'b' (body3d)", "omega_body", "must be finite", "component 1 is inf" }, "an infinite component")
tap.raises(function() sys():add("body3d", "b", { vel = { omega = { 1, 2 } } }) end, { "part 'b' (body3d)", "vel.omega must be {wx, wy, wz}", "2 values" }, "two components")
tap.raises(function() sys():add("mass", "puck", { dim = 3, vel = { omega = { 1, 2, 3 } } }) end, { "part 'puck' (mass)", "no orientation", "body3d" }, "omega on a mass")
tap.ok(pcall(function() free_body { omega = { 0, 0, 1 }, x = 1, y = 2, z = 3 } end),
  "omega with the translation velocities is fine")
tap.ok(pcall(function() free_body(nil):compile() end), "no vel at all is fine")
