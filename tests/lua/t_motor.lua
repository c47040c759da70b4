-- Motors and actuators (components/motor.c, lua/prelude/motors.lua; docs/parts.md, "Motors
-- and actuators"): each drive against a closed form across the tolerance ladder (rtol 1e-4,
-- 1e-6, 1e-8 and the default) and the four methods, the drive torque against the energy
-- balance, the conformance suite over every type and mode, and the bad-input messages.
local tap = dofile((arg and arg[0] and arg[0]:match("^(.*[/\\])") or "") .. "tap.lua")
local joinery = require "joinery"

local g = 9.81
local methods = { "bdf", "adams", "erk", "auto" }
local ladder = { 1e-4, 1e-6, 1e-8, false } -- false: the defaults (rtol 1e-11)
local DEFAULT_RTOL = 1e-11

-- Runs build() under every method and rtol; check(res, rtol) returns the error measured in
-- units of rtol; each must be below `bound` (a stated multiple of rtol).
local function ladder_check(what, build, opts, check, bound)
  local worst, where, failed = 0, "", nil
  for _, method in ipairs(methods) do
    for _, rtol in ipairs(ladder) do
      local o = { method = method }
      for k, v in pairs(opts) do o[k] = v end
      if rtol then o.rtol, o.atol = rtol, rtol * 1e-2 end
      local sys = build()
      local ok, res = pcall(sys.simulate, sys, o)
      if not ok then
        failed = failed or string.format("%s rtol %s: %s", method, tostring(rtol), res)
      else
        local e = check(res) / (rtol or DEFAULT_RTOL)
        if e > worst then worst, where = e, string.format("%s rtol %s", method, tostring(rtol)) end
      end
    end
  end
  tap.ok(failed == nil and worst < bound, string.format("%s: worst %.3g rtol (%s), bound %g rtol",
    what, worst, where, bound))
  if failed then tap.diag(failed) end
end

local function simpson(t, f)
  local n, h = #t, t[2] - t[1]
  local s = f[1] + f[n]
  for i = 2, n - 1 do s = s + (i % 2 == 0 and 4 or 2) * f[i] end
  return s * h / 3
end

-- A crank (2 kg, J = 0.1, centre of mass 0.25 m from its pivot) driven at 3 rad/s.
local m, r, J, omega = 2, 0.25, 0.1, 3
local function crank(drive)
  return function()
    local sys = joinery.system { gravity = { 0, -g } }
    local ground = sys:add("ground2d", "ground", {})
    local c = sys:add("body2d", "crank", { m = m, J = J, init = { x = r, y = 0, theta = 0 } })
    sys:pin(c:point("o", { -r, 0 }), ground.pos, "pivot")
    local spec = { name = "drive", a = ground.frame, b = c.frame }
    for k, v in pairs(drive) do spec[k] = v end
    sys:motor(spec)
    return sys
  end
end

tap.plan(82)

-- 1. Position mode, angle0 + speed t: theta = omega t exactly (the row is the motion: no
-- degree of freedom is left to the integrator), the torque m g r cos(omega t).
local pos_crank = crank { position = 0, speed = omega }
local model = pos_crank():compile()
tap.ok(model:num_coords() == 3 and model:num_rows() == 3,
  string.format("pin_motor2d glued to frames is eliminated: 3 coordinates, 3 rows; got %d, %d",
    model:num_coords(), model:num_rows()))
ladder_check("crank at constant speed: theta = omega t", pos_crank, { t_end = 2, dt_out = 0.01 },
  function(res)
    local e = 0
    for i = 1, #res.t do e = math.max(e, math.abs(res["crank.theta"][i] - omega * res.t[i])) end
    return e
  end, 1)
ladder_check("crank: drive.torque = m g r cos(omega t)", pos_crank, { t_end = 2, dt_out = 0.01 },
  function(res)
    local e = 0
    for i = 1, #res.t do
      e = math.max(e, math.abs(res["drive.torque"][i] - m * g * r * math.cos(omega * res.t[i])))
    end
    return e
  end, 1)
-- The work of the drive torque, the integral of torque * omega (Simpson over the output
-- rows, 0.0025 s apart: its own error is ~2e-11 J), against the change of the energy.
ladder_check("crank: integral of torque * rate = E(T) - E(0)", pos_crank,
  { t_end = 2, dt_out = 0.0025 }, function(res)
    local n = #res.t
    return math.abs(simpson(res.t, res["drive.power"]) - (res.energy[n] - res.energy[1]))
  end, 10)

-- 2. Velocity mode: theta' = omega held by a velocity row; theta itself is integrated.
local vel_crank = crank { velocity = omega }
ladder_check("crank velocity drive: theta' = omega", vel_crank, { t_end = 2, dt_out = 0.01 },
  function(res)
    local e = 0
    for i = 1, #res.t do e = math.max(e, math.abs(res["der(crank.theta)"][i] - omega)) end
    return e
  end, 1)
-- (relative to 1 + |theta|; measured: BDF at the default rtol 1e-11 is the worst, 540 rtol,
-- BDF at 1e-4 19, ERK at 1e-6 4, Adams at most 2)
ladder_check("crank velocity drive: theta = omega t", vel_crank, { t_end = 2, dt_out = 0.01 },
  function(res)
    local e = 0
    for i = 1, #res.t do
      local want = omega * res.t[i]
      e = math.max(e, math.abs(res["crank.theta"][i] - want) / (1 + want))
    end
    return e
  end, 1000)

-- 3. Torque mode on a free wheel (pinned at its centre of mass): alpha = tau / J.
local tau = 0.5
local function wheel()
  local sys = joinery.system { gravity = { 0, -g } }
  local ground = sys:add("ground2d", "ground", {})
  local w = sys:add("body2d", "wheel", { m = 1, J = J })
  sys:pin(w.pos, ground.pos, "axle")
  sys:motor { name = "drive", a = ground.frame, b = w.frame, torque = tau }
  return sys
end
ladder_check("torque motor on a wheel: theta = tau t^2 / (2 J)", wheel, { t_end = 2, dt_out = 0.1 },
  function(res)
    local e = 0
    for i = 1, #res.t do
      local t = res.t[i]
      e = math.max(e, math.abs(res["wheel.theta"][i] - 0.5 * tau / J * t * t) / (1 + tau / J * t * t))
    end
    return e
  end, 100)
do
  local res = wheel():simulate { t_end = 1, dt_out = 0.5 }
  tap.ok(res["drive.torque"][3] == tau and res["drive.power"][3] == tau * res["drive.rate"][3],
    "torque mode: drive.torque is the applied torque, drive.power torque * rate")
end
-- A torque motor on a pendulum crank (one degree of freedom): the work tau (theta(T) -
-- theta(0)) equals the change of energy (relative to the work, 477 J; measured: BDF at the
-- default rtol 658 rtol, at 1e-4 36; Adams and ERK at most 3.3).
local function torque_crank()
  local sys = crank { torque = 8 } ()
  return sys
end
ladder_check("torque motor on a crank: tau dtheta = E(T) - E(0)", torque_crank,
  { t_end = 2, dt_out = 0.01 }, function(res)
    local n = #res.t
    local work = 8 * (res["crank.theta"][n] - res["crank.theta"][1])
    return math.abs(work - (res.energy[n] - res.energy[1])) / math.abs(work)
  end, 1000)

-- 4. hinge3d motor on a spatial body: a tilted axis; position (angle = omega t, and the
-- hinge's own angle output agrees), torque (alpha = tau / I about the axis).
local function quat_axis_angle(ax, ay, az, a)
  local n = math.sqrt(ax * ax + ay * ay + az * az)
  local s = math.sin(a / 2) / n
  return { math.cos(a / 2), ax * s, ay * s, az * s }
end
local Izz = 0.03
local function spinner(drive, use_joint)
  return function()
    local sys = joinery.system { gravity = { 0, 0, -g } }
    local ground = sys:add("ground3d", "ground", {})
    -- the body's z axis along the hinge axis (1, 1, 1) of the ground
    local q = quat_axis_angle(-1, 1, 0, math.acos(1 / math.sqrt(3)))
    local b = sys:add("body3d", "b", { m = 1, Ixx = 0.05, Iyy = 0.04, Izz = Izz,
      init = { q0 = q[1], q1 = q[2], q2 = q[3], q3 = q[4] } })
    local h = sys:add("hinge3d", "h", { nax = 1, nay = 1, naz = 1, nbx = 0, nby = 0, nbz = 1,
      a = ground.frame, b = b.frame })
    local spec = { name = "drive" }
    if use_joint then
      spec.joint = h
    else
      spec.a, spec.b, spec.axis, spec.axis_b = ground.frame, b.frame, { 1, 1, 1 }, { 0, 0, 1 }
    end
    for k, v in pairs(drive) do spec[k] = v end
    sys:motor(spec)
    return sys
  end
end
do
  local m1 = spinner({ position = 0.2, speed = omega }, true)():compile()
  local m2 = spinner({ position = 0.2, speed = omega }, false)():compile()
  tap.ok(m1:num_coords() == 7 and m1:num_rows() == 7 and m2:num_coords() == 7,
    string.format("hinge_motor3d (joint = h or a, b, axis) is eliminated: 7 coordinates, 7 rows; "
      .. "got %d, %d and %d", m1:num_coords(), m1:num_rows(), m2:num_coords()))
end
local function wrap(x) return (x + math.pi) % (2 * math.pi) - math.pi end
ladder_check("hinge3d motor, position: angle = 0.2 + omega t (motor and hinge outputs)",
  spinner({ position = 0.2, speed = omega }, true), { t_end = 2, dt_out = 0.01 }, function(res)
    local e = 0
    for i = 1, #res.t do
      local want = 0.2 + omega * res.t[i]
      e = math.max(e, math.abs(res["drive.angle"][i] - want), math.abs(wrap(res["h.angle"][i] - want)))
    end
    return e
  end, 10)
ladder_check("hinge3d motor, torque: angle = tau t^2 / (2 Izz)",
  spinner({ torque = 0.06 }, false), { t_end = 1, dt_out = 0.05 }, function(res)
    local e = 0
    for i = 1, #res.t do
      local t = res.t[i]
      local want = 0.5 * 0.06 / Izz * t * t
      e = math.max(e, math.abs(res["drive.angle"][i] - res["drive.angle"][1] - want) / (1 + want))
    end
    return e
  end, 100)

-- 5. prismatic3d motor: a body sliding along (0, 1, 1)/sqrt 2 under gravity -z.
local function slider3(drive, use_joint)
  return function()
    local sys = joinery.system { gravity = { 0, 0, -g } }
    local ground = sys:add("ground3d", "ground", {})
    local b = sys:add("body3d", "b", { m = 2, Ixx = 0.05, Iyy = 0.04, Izz = 0.03 })
    local p = sys:add("prismatic3d", "p", { nax = 0, nay = 1, naz = 1, a = ground.frame,
      b = b.frame })
    local spec = { name = "drive" }
    if use_joint then
      spec.joint = p
    else
      spec.a, spec.b, spec.axis, spec.linear = ground.frame, b.frame, { 0, 1, 1 }, true
    end
    for k, v in pairs(drive) do spec[k] = v end
    sys:motor(spec)
    return sys
  end
end
local F = 30
ladder_check("prismatic3d motor, force: x = (F/m - g/sqrt 2) t^2 / 2",
  slider3({ force = F }, true), { t_end = 1, dt_out = 0.05 }, function(res)
    local a, e = F / 2 - g / math.sqrt(2), 0
    for i = 1, #res.t do
      local t = res.t[i]
      e = math.max(e, math.abs(res["drive.displacement"][i] - 0.5 * a * t * t),
        math.abs(res["p.displacement"][i] - 0.5 * a * t * t))
    end
    return e
  end, 100)
ladder_check("prismatic3d motor, position: force = m g / sqrt 2 holds it at 0.1 + 0.5 t",
  slider3({ position = 0.1, speed = 0.5 }, false), { t_end = 1, dt_out = 0.05 }, function(res)
    local e = 0
    for i = 1, #res.t do
      e = math.max(e, math.abs(res["drive.displacement"][i] - 0.1 - 0.5 * res.t[i]),
        math.abs(res["drive.force"][i] - 2 * g / math.sqrt(2)) / 10)
    end
    return e
  end, 10)

-- 6. The actuator on a cart: x'' = F / m; and sys:motor without a: a held speed.
local function cart(spec_fn)
  return function()
    local sys = joinery.system { gravity = { 0, 0, 0 } }
    local c = sys:add("mass", "cart", { dim = 1, m = 4 })
    spec_fn(sys, c)
    return sys
  end
end
ladder_check("actuator on a cart: x = F t^2 / (2 m)",
  cart(function(sys, c) sys:actuator { name = "push", on = c.x, force = 6 } end),
  { t_end = 2, dt_out = 0.1 }, function(res)
    local e = 0
    for i = 1, #res.t do
      local t = res.t[i]
      e = math.max(e, math.abs(res["cart.x"][i] - 0.75 * t * t) / (1 + 1.5 * t * t))
    end
    return e
  end, 100)
do
  local res = cart(function(sys, c)
    sys:motor { name = "servo", b = c.x, velocity = 1.5, linear = true }
  end)():simulate { t_end = 1, dt_out = 0.5 }
  tap.ok(math.abs(res["cart.x"][3] - 1.5) < 1e-9 and math.abs(res["servo.force"][3]) < 1e-12,
    string.format("sys:motor on a coordinate: x = 1.5 t (%.3g), no force needed", res["cart.x"][3]))
end

-- 7. slider2d motor: force along a tilted planar slider under gravity.
local function slider2(use_joint)
  return function()
    local sys = joinery.system { gravity = { 0, -g } }
    local ground = sys:add("ground2d", "ground", {})
    local b = sys:add("body2d", "b", { m = 2, J = 0.1 })
    local s = sys:add("slider2d", "s", { angle = math.pi / 6, a = ground.frame, b = b.frame })
    if use_joint then
      sys:motor { name = "drive", joint = s, force = 20 }
    else
      sys:motor { name = "drive", a = ground.frame, b = b.frame, linear = true,
        axis = math.pi / 6, force = 20 }
    end
    return sys
  end
end
ladder_check("slider2d motor, force: s = (F/m - g/2) t^2 / 2", slider2(true),
  { t_end = 1, dt_out = 0.05 }, function(res)
    local a, e = 10 - g / 2, 0
    for i = 1, #res.t do
      local t = res.t[i]
      e = math.max(e, math.abs(res["drive.displacement"][i] - 0.5 * a * t * t),
        math.abs(res["s.slide"][i] - 0.5 * a * t * t))
    end
    return e
  end, 100)
do
  local r1 = slider2(true)():simulate { t_end = 0.5, dt_out = 0.5 }
  local r2 = slider2(false)():simulate { t_end = 0.5, dt_out = 0.5 }
  tap.ok(r1["b.x"][2] == r2["b.x"][2], "slider motor: joint = s and a, b, axis run alike")
end

-- 7b. The reference from a model input (part protocol 6): a position that is a function of
-- t (its derivatives by hyper-duals: the row is exact), a held torque input, an actuator.
local M = joinery.math
local function wheel_with(spec_fn)
  return function()
    local sys = joinery.system { gravity = { 0, -g } }
    local ground = sys:add("ground2d", "ground", {})
    local w = sys:add("body2d", "wheel", { m = 1, J = J })
    sys:pin(w.pos, ground.pos, "axle")
    spec_fn(sys, ground, w)
    return sys
  end
end
ladder_check("position = function(t) 0.3 sin 2t: theta and torque = -1.2 J sin 2t",
  wheel_with(function(sys, ground, w)
    sys:motor { name = "drive", a = ground.frame, b = w.frame,
      position = function(t) return 0.3 * M.sin(2 * t) end }
  end), { t_end = 2, dt_out = 0.01 }, function(res)
    local e = 0
    for i = 1, #res.t do
      local t = res.t[i]
      e = math.max(e, math.abs(res["wheel.theta"][i] - 0.3 * math.sin(2 * t)),
        math.abs(res["drive.torque"][i] + 1.2 * J * math.sin(2 * t)),
        math.abs(res["input.drive_position"][i] - 0.3 * math.sin(2 * t)))
    end
    return e
  end, 1)
ladder_check("torque = a held input (gain 2): theta = gain u t^2 / (2 J)",
  wheel_with(function(sys, ground, w)
    sys:input { name = "u", value = 0.25, unit = "N m" }
    sys:motor { name = "drive", a = ground.frame, b = w.frame, torque = "u", gain = 2 }
  end), { t_end = 2, dt_out = 0.1 }, function(res)
    local e = 0
    for i = 1, #res.t do
      local t = res.t[i]
      e = math.max(e, math.abs(res["wheel.theta"][i] - 0.5 * 0.5 / J * t * t) / (1 + t * t / J))
    end
    return e
  end, 100)
ladder_check("velocity = a linear time table: theta' follows it",
  wheel_with(function(sys, ground, w)
    sys:input { name = "w", t = { 0, 1, 2 }, u = { 0, 2, 2 } }
    sys:motor { name = "drive", a = ground.frame, b = w.frame, velocity = "w" }
  end), { t_end = 2, dt_out = 0.01 }, function(res)
    local e = 0
    for i = 1, #res.t do
      local t = res.t[i]
      e = math.max(e, math.abs(res["der(wheel.theta)"][i] - (t < 1 and 2 * t or 2)))
    end
    return e
  end, 10)
ladder_check("actuator from an input: x = gain u t^2 / (2 m)",
  cart(function(sys, c)
    sys:input { name = "u", value = 2, unit = "N" }
    sys:actuator { name = "push", on = c.x, input = "u", gain = 3 }
  end), { t_end = 2, dt_out = 0.1 }, function(res)
    local e = 0
    for i = 1, #res.t do
      local t = res.t[i]
      e = math.max(e, math.abs(res["cart.x"][i] - 0.75 * t * t) / (1 + 1.5 * t * t),
        math.abs(res["push.force"][i] - 6))
    end
    return e
  end, 100)

-- 8. The conformance suite over every type in every mode.
do
  local bad = {}
  for _, t in ipairs { "pin_motor2d", "slider_motor2d", "hinge_motor3d", "prismatic_motor3d",
      "actuator" } do
    for mode = 0, 2 do
      local ok, rep = pcall(joinery.check_part, t, { mode = mode, speed = 0.7 })
      if not ok or not rep.passed then bad[#bad + 1] = t .. " mode " .. mode end
    end
  end
  tap.ok(#bad == 0, "conformance: 5 types x 3 modes pass" .. (#bad > 0 and ": " .. table.concat(bad, ", ") or ""))
end

-- 9. Bad input: each a clear error at the script line, naming the motor and the key.
local function base()
  local sys = joinery.system { gravity = { 0, -g } }
  local ground = sys:add("ground2d", "ground", {})
  local c = sys:add("body2d", "c", { m = 1, J = 1 })
  local g3 = sys:add("ground3d", "g3", {})
  local b3 = sys:add("body3d", "b3", { m = 1, Ixx = 1, Iyy = 1, Izz = 1 })
  return sys, ground, c, g3, b3
end
local sys, ground, c, g3, b3 = base()
tap.raises(function() sys:motor { name = "m", a = ground.frame, b = c.frame, position = 0, velocity = 1 } end,
  { "sys:motor 'm'", "position and velocity given", "one mode" }, "two modes at once")
tap.raises(function() sys:motor { name = "m", a = ground.frame, b = c.frame } end,
  { "sys:motor 'm'", "give one of position, velocity or torque" }, "no mode")
tap.raises(function() sys:motor { name = "m", a = ground.frame, b = b3.frame, velocity = 1 } end,
  { "sys:motor 'm'", "ground.frame (3-D)", "b3.frame (7-D)" }, "a planar frame and a spatial one")
tap.raises(function() sys:motor { name = "m", a = g3.frame, b = b3.frame, velocity = 1 } end,
  { "sys:motor 'm'", "give axis = {x, y, z}" }, "spatial frames without an axis")
tap.raises(function() sys:motor { name = "m", a = g3.frame, b = b3.frame, axis = { 0, 0, 0 }, velocity = 1 } end,
  { "'m'", "hinge_motor3d", "axis (nax, nay, naz) is zero" }, "a zero axis")
tap.raises(function() sys:motor { name = "m", a = ground.frame, b = c.frame, axis = { 0, 0, 1 }, velocity = 1 } end,
  { "sys:motor 'm'", "turn about z", "no axis" }, "an axis on a planar pin motor")
tap.raises(function() sys:motor { name = "m", a = ground.pos, b = c.pos, velocity = 1 } end,
  { "sys:motor 'm'", "2-D points", "drives frames" }, "points where frames are needed")
tap.raises(function() sys:motor { name = "m", a = ground.frame, b = c.frame, torque = "u" } end,
  { "sys:motor 'm'", "torque = 'u'", "no input" }, "an unknown input name")
tap.raises(function() sys:motor { name = "m", a = ground.frame, b = c.frame, force = 1 } end,
  { "sys:motor 'm'", "torque = ..., not force" }, "force on a rotary motor")
tap.raises(function() sys:motor { name = "m", joint = c, velocity = 1 } end,
  { "sys:motor 'm'", "joint 'c' is a body2d", "hinge3d, prismatic3d or slider2d" }, "joint = a body")
tap.raises(function() sys:motor { name = "m", a = ground.frame, b = c.frame, velocity = 1, speed = 2 } end,
  { "sys:motor 'm'", "speed = ... goes with position" }, "speed with a velocity drive")
tap.raises(function() sys:motor { name = "m", a = ground.frame, b = c.frame, velocty = 1 } end,
  { "sys:motor 'm'", "unknown key 'velocty'" }, "a misspelt key")
tap.raises(function() sys:actuator { name = "p", on = c.frame, force = 1 } end,
  { "sys:actuator 'p'", "1-D coordinate terminal", "c.frame (3-D)" }, "an actuator on a frame")
tap.raises(function() sys:actuator { name = "p", on = c.x } end,
  { "sys:actuator 'p'", "give input = name" }, "an actuator with nothing to apply")
tap.raises(function() sys:add("pin_motor2d", "pm", { mode = 1.5, a = ground.frame, b = c.frame }) end,
  { "pm", "mode = 1.5", "0 (position), 1 (velocity) or 2 (effort)" }, "a mode that is no mode")
tap.raises(function() sys:add("pin_motor2d", "pm", { input = 0.5, a = ground.frame, b = c.frame }) end,
  { "pm", "input = 0.5", "index of a model input" }, "an input index that is no index")
-- An input index past the model's inputs: the run says so, naming the part.
do
  local s2, gr, cc = base()
  s2:add("pin_motor2d", "pm", { mode = 2, input = 3, a = gr.frame, b = cc.frame })
  local ok, err = pcall(s2.simulate, s2, { t_end = 0.1 })
  tap.ok(not ok and tostring(err):find("pm", 1, true) and tostring(err):find("input = 3", 1, true)
    and tostring(err):find("0 inputs", 1, true), "an input index out of range: " .. tostring(err))
end
tap.done()
