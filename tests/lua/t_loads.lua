-- sys:load(name, frame, fn): a force and torque given by a Lua function of time and the
-- frame's state, on planar and spatial frames, against closed forms; and its bad input.
local tap = dofile("tests/lua/tap.lua")
local joinery = require "joinery"
tap.plan(20)

-- 1. Planar, of time: a free body2d (J = 0.2) under tau = tau0 cos(w t) and fx = F0:
-- theta = tau0 / (J w^2) (1 - cos w t), x = F0 t^2 / (2 m). The load is eliminated with its
-- glue: 3 coordinates, no rows.
local tau0, w, F0, m, J = 0.3, 4, 0.5, 2, 0.2
do
  local sys = joinery.system { gravity = { 0, 0 } }
  local b = sys:add("body2d", "b", { m = m, J = J })
  sys:load("drive", b.frame, function(t) return { tau = tau0 * math.cos(w * t), fx = F0 } end)
  sys:settings { t_end = 2, dt_out = 0.1, rtol = 1e-12, atol = 1e-14 }
  local model = sys:compile()
  tap.ok(model:num_coords() == 3 and model:num_rows() == 0,
    string.format("the load costs no coordinates or rows (%d, %d)", model:num_coords(), model:num_rows()))
  local res = model:simulate {}
  local th, x = 0, 0
  for i = 1, #res.t do
    local t = res.t[i]
    th = math.max(th, math.abs(res["b.theta"][i] - tau0 / (J * w * w) * (1 - math.cos(w * t))))
    x = math.max(x, math.abs(res["b.x"][i] - F0 * t * t / (2 * m)))
  end
  -- bounds: integration error at rtol 1e-12 on values of order 1
  tap.ok(th < 1e-9, string.format("torque of time: theta = tau0/(J w^2)(1 - cos w t) to %.2g rad", th))
  tap.ok(x < 1e-9, string.format("force: x = F0 t^2/(2 m) to %.2g m", x))
end

-- 2. Planar, of state: tau = -k theta - c theta' at a body point's frame (body:frame_at):
-- the damped oscillator J theta'' + c theta' + k theta = 0 from theta0, at rest.
do
  local k, c, th0 = 2, 0.1, 0.4
  local sys = joinery.system { gravity = { 0, 0 } }
  local b = sys:add("body2d", "b", { m = m, J = J, init = { theta = th0 } })
  sys:pin(b:point("axle", { 0, 0 }), sys:add("ground", "g", { dim = 2 }).pos, "axle")
  sys:load("coil", b:frame_at("hub", { 0, 0 }), function(_, q, v)
    return { tau = -k * q.theta - c * v.theta }
  end)
  sys:settings { t_end = 5, dt_out = 0.1, rtol = 1e-12, atol = 1e-14 }
  local res = sys:simulate {}
  local wn, zeta = math.sqrt(k / J), c / (2 * math.sqrt(k * J))
  local wd = wn * math.sqrt(1 - zeta * zeta)
  local worst = 0
  for i = 1, #res.t do
    local t = res.t[i]
    local exact = math.exp(-zeta * wn * t) * th0 * (math.cos(wd * t) + zeta * wn / wd * math.sin(wd * t))
    worst = math.max(worst, math.abs(res["b.theta"][i] - exact))
  end
  -- integration error at rtol 1e-12 over 5 s, about 3.5 periods (measured 1.1e-12)
  tap.ok(worst < 1e-8, string.format("torque of state: the damped oscillator's closed form to %.2g rad", worst))
end

-- 3. Spatial: a body3d spinning about its z axis at w0 under tz = -c wz (v.wz, the space
-- angular velocity the load is given) and fx = F0 t: wz = w0 exp(-c t / Izz),
-- x = F0 t^3 / (6 m). Seven coordinates: the load's copy of the frame is eliminated.
do
  local w0, c, Izz = 3, 0.02, 0.04
  local sys = joinery.system { gravity = { 0, 0, 0 } }
  local b = sys:add("body3d", "b", { m = m, Ixx = 0.02, Iyy = 0.03, Izz = Izz,
    vel = { q3 = w0 / 2 } }) -- q' = E(q)^T w / 2 at q = 1
  sys:load("brake", b.frame, function(t, _, v) return { tz = -c * v.wz, fx = F0 * t } end)
  sys:settings { t_end = 3, dt_out = 0.1, rtol = 1e-12, atol = 1e-14 }
  local model = sys:compile()
  tap.ok(model:num_coords() == 7, string.format("spatial load eliminated: %d coordinates", model:num_coords()))
  local res = model:simulate {}
  local dw, dx = 0, 0
  for i = 1, #res.t do
    local t = res.t[i]
    dw = math.max(dw, math.abs(res["b.omega_z"][i] - w0 * math.exp(-c * t / Izz)))
    dx = math.max(dx, math.abs(res["b.x"][i] - F0 * t ^ 3 / (6 * m)))
  end
  -- integration error at rtol 1e-12 on values of order 1 (measured 9e-12, 1.2e-11)
  tap.ok(dw < 1e-9, string.format("torque of the angular velocity: wz = w0 exp(-c t/Izz) to %.2g rad/s", dw))
  tap.ok(dx < 1e-9, string.format("force of time: x = F0 t^3/(6 m) to %.2g m", dx))
end

-- 4. Bad input: each names the load and what is wrong, at the script line.
local sys = joinery.system { gravity = { 0, 0 } }
local b = sys:add("body2d", "b", { m = 1, J = 1 })
tap.raises(function() sys:load("tip", b:point("tip", { 0.5, 0 }), function() return {} end) end,
  { "sys:load 'tip'", "2-D terminal", "a point where a frame is needed" }, "a point where a frame is needed")
tap.raises(function() sys:load("drive", b.frame, 0.3) end,
  { "sys:load 'drive'", "must be a function" }, "a load that is not a function")
tap.raises(function() sys:load("bad name", b.frame, function() return {} end) end,
  { "sys:load", "identifier", "'bad name'" }, "a name that is not an identifier")
sys:load("typo", b.frame, function() return { torque = 1 } end)
local ok, err = pcall(function() return sys:simulate { t_end = 0.1 } end)
tap.ok(not ok and tostring(err):find("unknown component 'torque'", 1, true) ~= nil
  and tostring(err):find("fx, fy, tau", 1, true) ~= nil,
  "an unknown component is named with the ones the frame takes: " .. tostring(err))
local sys2 = joinery.system { gravity = { 0, 0 } }
local b2 = sys2:add("body2d", "b", { m = 1, J = 1 })
sys2:load("nothing", b2.frame, function() return 1 end)
ok, err = pcall(function() return sys2:simulate { t_end = 0.1 } end)
tap.ok(not ok and tostring(err):find("must return a table", 1, true) ~= nil,
  "a function that returns no table: " .. tostring(err))
tap.done()
