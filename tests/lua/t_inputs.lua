-- Inputs, time signals and sampled controllers (docs/control.md), checked by physics:
--  * a sampled PD controller at 100 Hz drives a compound pendulum through a held input (an
--    actuator's torque): the energy balance E(T) - E(0) = sum_k u_k (theta_{k+1} - theta_k)
--    holds to the integration tolerance under every method and rung of the ladder, since
--    each change takes effect exactly at its sample (the integrator restarts there);
--  * the controller's run is bit for bit a loop of sim:advance(t_k) then sim:set_input;
--  * an input that never changes costs nothing: the same steps, the same end, bit for bit;
--  * a torque step and ramp given as a time table, or as a function with a breakpoint, on a
--    free wheel: theta(t) against the closed form at every rung, the defaults included;
--  * bad input: clear errors naming the input, controller or value.
local here = arg[0]:match("^(.*[/\\])") or ""
local tap = dofile(here .. "tap.lua")
local joinery = require "joinery"

local ladder = { 1e-4, 1e-6, 1e-8, false } -- false: the defaults
local methods = { "auto", "adams", "bdf", "erk" }
tap.plan(3 * #ladder * #methods + 2 + 3 + 4 * #ladder + 2 + 1 + 30)

local m, L, g = 1, 1, 9.81
local J = m * L * L / 12

-- A compound pendulum (a rod pinned at one end) with an actuator on its angle, whose torque
-- is the held input "u" (N m). with_input false: the same model without the input.
local function pendulum(with_input, theta0)
  local sys = joinery.system { gravity = { 0, -g } }
  local pivot = sys:add("ground", "pivot", { dim = 2, x = 0, y = 0 })
  local c, s = math.cos(theta0), math.sin(theta0)
  local rod = sys:add("body2d", "rod", { m = m, J = J,
    init = { x = L / 2 * c, y = L / 2 * s, theta = theta0 } })
  sys:pin(rod:point("top", { -L / 2, 0 }), pivot.pos, "hinge")
  if with_input then
    sys:input { name = "u", value = 0, unit = "N m" }
    sys:add("actuator", "drive", { mode = 2, input = 0, coord = rod.theta })
  end
  return sys, rod
end

-- The PD law toward theta = -pi/2 + 0.5 (rad), sampled at 100 Hz.
local K, D, dt = 20, 2, 0.01
local function law(theta, omega) return -K * (theta - (-math.pi / 2 + 0.5)) - D * omega end

local function settings(method, rtol)
  local s = { method = method, t_end = 2, dt_out = 0.05 }
  if rtol then s.rtol = rtol end
  return s
end

-- ---- the energy balance of a sampled loop, every method and rung ------------------------
-- Tolerance: the balance is two energies (about m g L / 2 = 4.9 J) and a sum of 200 works,
-- each right to the integration tolerance; 300 rtol (and 1e-9 J for the rounding of the
-- sum at the tightest rungs) is a margin over the measured worst (below 40 rtol).
for _, method in ipairs(methods) do
  for _, rtol in ipairs(ladder) do
    local sys, rod = pendulum(true, 0)
    local work, last_theta, last_u = 0, nil, 0
    sys:controller { name = "pd", period = dt, fn = function(s)
      local theta = s["rod.theta"]
      if last_theta then work = work + last_u * (theta - last_theta) end
      last_theta = theta
      last_u = law(theta, s["der(rod.theta)"])
      s:set_input("u", last_u)
    end }
    local model = sys:compile()
    local sim = model:sim(settings(method, rtol))
    local e0 = sim:channels().energy
    sim:advance(2)
    local ch = sim:channels()
    work = work + last_u * (ch["rod.theta"] - last_theta)
    local r = rtol or 1e-11 -- the default rtol
    local label = string.format("%s rtol %s", method, rtol or "default")
    tap.ok(math.abs(ch.energy - e0 - work) <= 300 * r * 5 + 1e-9,
      string.format("%s: E(T) - E(0) = sum u_k dtheta_k (off by %.2e J, %.0f rtol)", label,
        ch.energy - e0 - work, math.abs(ch.energy - e0 - work) / (5 * r)))
    -- the loop settles near its target: the controller is driving the model
    tap.ok(math.abs(ch["rod.theta"] - (-math.pi / 2 + 0.5)) < 0.3 and ch["input.u"] ~= 0,
      label .. ": the loop drives the pendulum toward its target (theta = "
        .. string.format("%.4f", ch["rod.theta"]) .. ")")
    sim:close()
  end
end

-- ---- a controller is a host loop of advance then set_input, bit for bit -----------------
do
  local sys = pendulum(true, 0)
  sys:controller { name = "pd", period = dt, fn = function(s)
    s:set_input("u", law(s["rod.theta"], s["der(rod.theta)"]))
  end }
  local a = sys:compile():sim(settings("auto"))
  a:advance(2)
  local qa, va = a:state()
  local host = pendulum(true, 0):compile():sim(settings("auto"))
  for k = 0, 200 do -- the controller samples t_end too
    host:advance(0 + k * dt)
    local q, v = host:state()
    local ch = host:channels()
    host:set_input("u", law(ch["rod.theta"], ch["der(rod.theta)"]))
  end
  host:advance(2)
  local qh, vh = host:state()
  local same = true
  for i = 1, #qa do same = same and qa[i] == qh[i] and va[i] == vh[i] end
  tap.ok(same, "a sampled controller's run equals a host's advance/set_input loop bit for bit")
  tap.is(a:stats().steps, host:stats().steps, "and takes the same steps")
end

-- ---- an input that never changes costs nothing --------------------------------------------
do
  local plain = pendulum(false, 0):compile():sim(settings("auto"))
  local held = pendulum(true, 0):compile():sim(settings("auto"))
  plain:advance(2)
  held:advance(2)
  held:set_input("u", 0) -- the value it has: no restart
  local qp = plain:state()
  local qh = held:state()
  tap.ok(qp[3] == qh[3], "a held input never changed: the same end bit for bit")
  tap.is(plain:stats().steps, held:stats().steps, "and the same steps")
  tap.is(held:stats().restarts, plain:stats().restarts, "and no restart for setting its own value")
end

-- ---- time signals on a free wheel: a step and a ramp in torque ---------------------------
-- theta'' = tau(t) / I. Step of 2 N m at t0 = 0.5: theta = (t - t0)^2 / I for t > t0.
-- Ramp from 0 at t0 to 2 N m at t1 = 1, then held: theta = (t - t0)^3 / (3 I (t1 - t0)) on the
-- ramp, then the held torque's parabola. Tolerance: 200 rtol of theta(T) (about 1 rad):
-- the breakpoints make every piece smooth, so the error is the method's own.
local I = 0.5
local function wheel(kind)
  local sys = joinery.system { gravity = { 0, 0 } }
  local pivot = sys:add("ground", "pivot", { dim = 2, x = 0, y = 0 })
  local w = sys:add("body2d", "w", { m = 1, J = I, init = { x = 0, y = 0, theta = 0 } })
  sys:pin(w:point("c", { 0, 0 }), pivot.pos, "axle")
  if kind == "step" then
    sys:input { name = "tau", t = { 0, 0.5 }, u = { 0, 2 }, interp = "constant" }
  elseif kind == "ramp" then
    sys:input { name = "tau", t = { 0, 0.5, 1 }, u = { 0, 0, 2 }, interp = "linear" }
  else -- the step as a Lua function with its breakpoint
    sys:input { name = "tau", fn = function(t) if t < 0.5 then return 0 end return 2 end,
      breakpoints = { 0.5 } }
  end
  sys:add("actuator", "drive", { mode = 2, input = 0, coord = w.theta })
  return sys
end
local function theta_exact(kind, t)
  if kind ~= "ramp" then return t > 0.5 and (t - 0.5) ^ 2 / I or 0 end
  if t <= 1 then return (t - 0.5) ^ 3 / (3 * I * 0.5) end
  local th1, om1 = 0.5 ^ 3 / (1.5 * I), 0.5 / I -- at t1: theta and omega
  return th1 + om1 * (t - 1) + (t - 1) ^ 2 / I
end
for _, kind in ipairs { "step", "ramp", "function", "cubic" } do
  for _, rtol in ipairs(ladder) do
    local sys = kind == "cubic" and joinery.system { gravity = { 0, 0 } } or wheel(kind)
    local T = 1.7
    if kind == "cubic" then -- a spline through a smooth torque: theta against the step's
      local pivot = sys:add("ground", "pivot", { dim = 2, x = 0, y = 0 })
      local w = sys:add("body2d", "w", { m = 1, J = I, init = { x = 0, y = 0, theta = 0 } })
      sys:pin(w:point("c", { 0, 0 }), pivot.pos, "axle")
      sys:input { name = "tau", t = { 0, 0.5, 1, 1.5, 2 }, u = { 2, 2, 2, 2, 2 }, interp = "cubic" }
      sys:add("actuator", "drive", { mode = 2, input = 0, coord = w.theta })
    end
    local res = sys:simulate(settings("auto", rtol))
    local n = #res.t
    local exact = kind == "cubic" and res.t[n] ^ 2 / I or theta_exact(kind, res.t[n])
    local r = rtol or 1e-11
    local err = math.abs(res["w.theta"][n] - exact)
    T = res.t[n]
    tap.ok(err <= 200 * r * math.max(1, math.abs(exact)) + 1e-12,
      string.format("%s torque, rtol %s: theta(%g) = %.12f against %.12f (%.1f rtol)", kind,
        rtol or "default", T, res["w.theta"][n], exact, err / r))
  end
end

do -- a Lua load reads the input by name (its fourth argument): the same closed form
  local sys = joinery.system { gravity = { 0, 0 } }
  local pivot = sys:add("ground", "pivot", { dim = 2, x = 0, y = 0 })
  local w = sys:add("body2d", "w", { m = 1, J = I, init = { x = 0, y = 0, theta = 0 } })
  sys:pin(w:point("c", { 0, 0 }), pivot.pos, "axle")
  sys:load("push", w.frame, function(t, q, v, u) return { tau = u.tau } end)
  sys:input { name = "tau", t = { 0, 0.5 }, u = { 0, 2 }, interp = "constant" }
  local res = sys:simulate { t_end = 2, dt_out = 1 }
  tap.ok(math.abs(res["w.theta"][3] - 1.5 ^ 2 / I) <= 200 * 1e-11 * 4.5,
    "a sys:load reading u.tau: theta(2) = " .. res["w.theta"][3] .. " against 4.5")
end

do -- the table's values as a channel, right at and between its points
  local res = wheel("ramp"):simulate { t_end = 1.5, dt_out = 0.25 }
  local want = { 0, 0, 0, 1, 2, 2, 2 }
  local same = true
  for i = 1, #res.t do same = same and math.abs(res["input.tau"][i] - want[i]) < 1e-15 end
  tap.ok(same, "input.tau reports the linear table at 0, 0.25, ... 1.5 s")
end

-- ---- a continuous controller: a PD law inside every evaluation -------------------------------
-- m x'' = -k x - c x' through the actuator: the damped oscillator's closed form. Tolerance
-- 100 rtol of the 0.1 m amplitude for the multistep methods (worst measured 11); ERK's error
-- grows past its rtol at the tight end as docs/numerics.md measures (up to 7.8e3 rtol), so
-- 1e4 for it (measured here: 305 at the default rtol).
do
  local mm, k, c, x0 = 2, 50, 4, 0.1
  local w0 = math.sqrt(k / mm)
  local z = c / (2 * math.sqrt(k * mm))
  local wd = w0 * math.sqrt(1 - z * z)
  local function exact(t) return x0 * math.exp(-z * w0 * t) * (math.cos(wd * t) + z * w0 / wd * math.sin(wd * t)) end
  for _, method in ipairs(methods) do
    for _, rtol in ipairs(ladder) do
      local sys = joinery.system { gravity = { 0 } }
      local b = sys:add("mass", "b", { dim = 1, m = mm, init = { x = x0 } })
      sys:input { name = "f", value = 0 }
      sys:actuator { name = "a", on = b.x, input = "f" }
      sys:controller { name = "pd", fn = function(s) s:set_input("f", -k * s["b.x"] - c * s["der(b.x)"]) end }
      local res = sys:simulate(settings(method, rtol))
      local n, worst = #res.t, 0
      for i = 1, n do worst = math.max(worst, math.abs(res["b.x"][i] - exact(res.t[i]))) end
      local r = rtol or 1e-11
      tap.ok(worst <= (method == "erk" and 1e4 or 100) * r * x0 and res.stats.restarts == 0 and
        math.abs(res["input.f"][n] + k * res["b.x"][n] + c * res["der(b.x)"][n]) < 1e-12,
        string.format("continuous PD, %s rtol %s: x(t) within %.1f rtol of the closed form, "
          .. "input.f the law's value, no restart", method, rtol or "default", worst / (r * x0)))
    end
  end
  local sys = joinery.system { gravity = { 0 } }
  sys:add("mass", "b", { dim = 1, m = 1 })
  sys:input { name = "f", value = 0 }
  sys:controller { name = "pd", fn = function(s) return s.energy end }
  local ok, err = pcall(sys.simulate, sys, { t_end = 0.1 })
  tap.ok(not ok and err:find("controller 'pd'", 1, true) and err:find("continuous controller reads", 1, true),
    "a continuous controller reading a channel of the solve: " .. tostring(err))
end

-- ---- bad input ------------------------------------------------------------------------------
local sys = joinery.system { gravity = { 0, 0 } }
sys:input { name = "u", value = 0 }
tap.raises(function() sys:input { name = "u", value = 1 } end, { "input 'u'", "added before" },
  "a repeated input name")
tap.raises(function() sys:input { name = "v", value = 0 / 0 } end, { "input 'v'", "finite" },
  "a NaN initial value")
tap.raises(function() sys:input { name = "a.b", value = 0 } end, { "'.'" }, "a '.' in a name")
tap.raises(function() sys:input { name = "r", t = { 0, 1, 1 }, u = { 0, 1, 2 } } end,
  { "input 'r'", "must increase", "point 3" }, "a time table not increasing in t")
tap.raises(function() sys:input { name = "r2", t = { 0, 1 }, u = { 0 } } end,
  { "input 'r2'", "one u for each t" }, "a table whose t and u differ in length")
tap.raises(function() sys:input { name = "r3", t = { 0 }, u = { 0 }, interp = "spline" } end,
  { "input 'r3'", "constant", "linear", "cubic" }, "an unknown interpolation")
tap.raises(function() sys:input { name = "x", valeu = 1 } end, { "unknown key 'valeu'", "value" },
  "a misspelt key, with did-you-mean")
tap.raises(function() sys:controller { name = "c", period = 0, fn = function() end } end,
  { "controller 'c'", "period" }, "a period <= 0")
do
  local s2, rod = pendulum(true, 0)
  s2:controller { name = "bad", period = 0.1, fn = function(s) s:set("rod.theta", 1) end }
  local ok, err = pcall(function() s2:simulate { t_end = 0.5 } end)
  tap.ok(not ok and err:find("controller 'bad'", 1, true) and err:find("sets inputs only", 1, true),
    "a controller writing to a coordinate: " .. tostring(err))
  local s3 = pendulum(true, 0)
  s3:controller { name = "typo", period = 0.1, fn = function(s) s:set_input("uu", 1) end }
  ok, err = pcall(function() s3:simulate { t_end = 0.5 } end)
  tap.ok(not ok and err:find("no input 'uu'", 1, true) and err:find("did you mean 'u'", 1, true),
    "an unknown input name in a controller, with did-you-mean")
  local sim = pendulum(true, 0):compile():sim { t_end = 1 }
  ok, err = pcall(sim.set_input, sim, "u", 1 / 0)
  tap.ok(not ok and err:find("input 'u'", 1, true) and err:find("not a finite", 1, true),
    "an infinite input value: " .. tostring(err))
  local s4 = joinery.system { gravity = { 0, 0 } }
  s4:add("mass", "b", { dim = 1, m = 1 })
  s4:input { name = "f", fn = function(t) return math.sin(t) end }
  ok, err = pcall(function() s4:simulate { t_end = 0.1 } end)
  tap.ok(not ok and err:find("input 'f'", 1, true) and err:find("joinery.math", 1, true),
    "a signal function that cannot take a hyper-dual t says to use joinery.math: " .. tostring(err))
end
