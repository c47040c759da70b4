-- Planar joints and force elements (docs/bodies2d.md), each against a closed form:
-- slider2d (a block on an incline), weld (two bodies as one), rotational_spring2d (frames
-- and angles, with damping and a constant torque), torque2d (a force off the centre of
-- mass), and a load written in Lua (joinery.part_type) as a function of time and of state.
local tap = dofile("tests/lua/tap.lua")
local joinery = require "joinery"
tap.plan(24)
local g = 9.81

local function index(model)
  local idx = {}
  for i, name in ipairs(model:coords()) do idx[name] = i end
  return idx
end

-- 1. Slider: a block on an axis tilted by alpha (a ground frame at angle 0.2 plus the
-- slider's own angle 0.3), sliding from rest under gravity: s = -g sin(alpha) t^2 / 2,
-- normal force m g cos(alpha), no torque (the slider holds the block at its centre).
do
  local m, alpha = 2, 0.5
  local sys = joinery.system { gravity = { 0, -g } }
  local base = sys:add("ground2d", "base", { x = 1, y = 2, theta = 0.2 })
  local block = sys:add("body2d", "block", { m = m, J = 0.1,
    init = { x = 1 + math.cos(alpha), y = 2 + math.sin(alpha), theta = 0.2 + 0.1 } })
  sys:add("slider2d", "rail", { a = base.frame, b = block.frame, angle = 0.3, theta0 = 0.1 })
  local model = sys:compile()
  tap.ok(model:num_coords() == 3 and model:num_rows() == 2,
    "a slider on a body's frame costs its 2 rows only (" .. tostring(model) .. ")")
  local res = model:simulate { t_end = 0.5, dt_out = 0.05, rtol = 1e-11, atol = 1e-12 }
  local n, worst = res.rows, 0
  for i = 1, n do
    local want = 1 - g * math.sin(alpha) * res.t[i] ^ 2 / 2
    worst = math.max(worst, math.abs(res["rail.slide"][i] - want))
  end
  tap.ok(worst < 1e-9, string.format("slide = 1 - g sin(alpha) t^2/2 (worst %.2g m)", worst))
  tap.is_near(res["rail.slide_rate"][n], -g * math.sin(alpha) * 0.5, 1e-9, "slide_rate = -g sin(alpha) t")
  tap.is_near(res["force.rail.across"][n], m * g * math.cos(alpha), 1e-9, "normal force = m g cos(alpha)")
  tap.ok(math.abs(res["force.rail.rotation"][n]) < 1e-9 and math.abs(res["block.theta"][n] - 0.3) < 1e-12,
    "the block does not turn and needs no torque")
end

-- 2. Weld: body 2's centre welded to body 1's point (a, 0); a torque tau on body 1 in free
-- space turns the pair about their common centre: alpha = tau / (J1 + J2 + mu a^2),
-- mu = m1 m2 / (m1 + m2). The weld's force on body 2 is m2 times its acceleration,
-- alpha a m1 / (m1 + m2) along y, and its torque J2 alpha (force.weld = force on body 1's frame).
do
  local m1, J1, m2, J2, a, tau = 2, 0.3, 1, 0.05, 0.7, 1.5
  local sys = joinery.system { gravity = { 0, 0 } }
  local b1 = sys:add("body2d", "b1", { m = m1, J = J1 })
  local b2 = sys:add("body2d", "b2", { m = m2, J = J2, init = { x = a } })
  sys:weld(b1:frame_at("w", { a, 0 }), b2.frame, "weld")
  sys:add("torque2d", "motor", { tau = tau, frame = b1.frame })
  local model = sys:compile()
  local q, v = model:initial()
  local acc, idx = model:acceleration(q, v), index(model)
  local alpha = tau / (J1 + J2 + m1 * m2 / (m1 + m2) * a * a)
  tap.is_near(acc[idx["b1.theta"]] / alpha, 1, 1e-12, "welded pair: theta'' = tau / J_total")
  tap.is_near(acc[idx["b2.theta"]] / alpha, 1, 1e-12, "both bodies turn together")
  local ch = model:evaluate(q, v)
  tap.is_near(ch["force.weld.y"], -m2 * alpha * a * m1 / (m1 + m2), 1e-12, "weld force = -m2 a_2 on body 1")
  tap.is_near(ch["force.weld.z"], -J2 * alpha, 1e-12, "weld torque = -J2 alpha on body 1")
end

-- 3. Rotational spring-damper between the ground frame and a disk pinned at its centre:
-- J theta'' + c theta' + k (theta - theta0) = tau, against the damped oscillator's solution.
do
  local J, k, c, th0, tau = 0.02, 3, 0.04, 0.1, 0.15
  local sys = joinery.system { gravity = { 0, -g } }
  local base = sys:add("ground2d", "base", {})
  local disk = sys:add("body2d", "disk", { m = 1, J = J, init = { theta = 0 } })
  sys:pin(disk.pos, base.pos, "axle")
  sys:add("rotational_spring2d", "coil", { k = k, c = c, theta0 = th0, tau = tau, a = base.frame, b = disk.frame })
  local res = sys:simulate { t_end = 2, dt_out = 0.1, rtol = 1e-11, atol = 1e-12 }
  local wn, z = math.sqrt(k / J), c / (2 * math.sqrt(k * J))
  local wd, eq = wn * math.sqrt(1 - z * z), th0 + tau / k
  local worst = 0
  for i = 1, res.rows do
    local t = res.t[i]
    local want = eq - eq * math.exp(-z * wn * t) * (math.cos(wd * t) + z * wn / wd * math.sin(wd * t))
    worst = math.max(worst, math.abs(res["disk.theta"][i] - want))
  end
  tap.ok(worst < 1e-8, string.format("damped rotation = closed form (worst %.2g rad)", worst))
  local n = res.rows
  tap.is_near(res["coil.torque"][n], k * (res["disk.theta"][n] - th0) + c * res["der(disk.theta)"][n] - tau, 1e-12,
    "coil.torque = k phi + c phi' - tau (on a)")
  tap.is_near(res["coil.angle"][n], res["disk.theta"][n], 1e-15, "coil.angle = theta_b - theta_a")
end

-- 4. Between two angles (dim = 1, the bodies' coordinate terminals): two disks on axles
-- exchange a torsional oscillation at w = sqrt(k (J1 + J2) / (J1 J2)), their angular momentum
-- J1 w1 + J2 w2 constant (here 0).
do
  local J1, J2, k = 0.02, 0.05, 2
  local sys = joinery.system { gravity = { 0, 0 } }
  local d1 = sys:add("body2d", "d1", { m = 1, J = J1, init = { theta = 0.1 } })
  local d2 = sys:add("body2d", "d2", { m = 1, J = J2, init = { x = 1 } })
  sys:pin(d1.pos, sys:add("ground", "o1", { dim = 2 }).pos)
  sys:pin(d2.pos, sys:add("ground", "o2", { dim = 2, x = 1 }).pos)
  sys:add("rotational_spring2d", "shaft", { dim = 1, k = k, a = d1.theta, b = d2.theta })
  local model = sys:compile()
  tap.is(model:num_coords(), 6, "a dim = 1 spring on coordinate terminals adds no coordinates")
  local res = model:simulate { t_end = 1, dt_out = 0.01, rtol = 1e-11, atol = 1e-12 }
  local w = math.sqrt(k * (J1 + J2) / (J1 * J2))
  local worst, mom = 0, 0
  for i = 1, res.rows do
    local want = -0.1 * math.cos(w * res.t[i])
    worst = math.max(worst, math.abs(res["shaft.angle"][i] - want))
    mom = math.max(mom, math.abs(J1 * res["der(d1.theta)"][i] + J2 * res["der(d2.theta)"][i]))
  end
  tap.ok(worst < 1e-8, string.format("relative angle = -0.1 cos(w t) (worst %.2g rad)", worst))
  tap.ok(mom < 1e-10, string.format("angular momentum stays 0 (worst %.2g)", mom))
end

-- 5. torque2d away from the centre of mass (on a marker frame): a force F at body point r
-- gives a = F / m and theta'' = (r x F) / J at rest.
do
  local m, J, rx, ry, fx, fy, tau = 3, 0.2, 0.4, -0.1, 2, 5, 0.3
  local sys = joinery.system { gravity = { 0, 0 } }
  local b = sys:add("body2d", "b", { m = m, J = J, init = { theta = 0.5 } })
  sys:add("torque2d", "push", { fx = fx, fy = fy, tau = tau, frame = b:frame_at("h", { rx, ry }) })
  local model = sys:compile()
  local q, v = model:initial()
  local acc, idx = model:acceleration(q, v), index(model)
  local c, s = math.cos(0.5), math.sin(0.5)
  local px, py = c * rx - s * ry, s * rx + c * ry
  tap.ok(math.abs(acc[idx["b.x"]] - fx / m) < 1e-12 and math.abs(acc[idx["b.y"]] - fy / m) < 1e-12,
    "force at a body point: a = F / m")
  tap.is_near(acc[idx["b.theta"]], (px * fy - py * fx + tau) / J, 1e-12, "theta'' = (r x F + tau) / J")
end

-- 6. Loads written in Lua: a torque as a function of time on a disk on an axle,
-- tau0 cos(w t), gives theta = tau0 / (J w^2) (1 - cos w t); a torque as a function of the
-- state, -k theta - c theta', moves the disk exactly as rotational_spring2d does.
do
  local have = {}
  for _, name in ipairs(joinery.types()) do have[name] = true end
  if not have.test_drive2d then
    joinery.part_type {
      name = "test_drive2d", doc = "a torque tau0 cos(w t) - k theta - c theta' on a planar frame (test)",
      params = {
        { name = "tau0", default = 0, unit = "N m", doc = "amplitude of the driving torque" },
        { name = "w", default = 0, unit = "rad/s", doc = "its angular frequency" },
        { name = "k", default = 0, unit = "N m/rad", doc = "stiffness", domain = "nonnegative" },
        { name = "c", default = 0, unit = "N m s/rad", doc = "damping", domain = "nonnegative" },
      },
      coords = { "x", "y", "theta" },
      terminals = { { name = "frame", coords = { "x", "y", "theta" } } },
      force = function(q, v, t, p)
        return { theta = p.tau0 * math.cos(p.w * t) - p.k * q.theta - p.c * v.theta }
      end,
    }
  end
  local J, tau0, w = 0.05, 0.2, 3
  local sys = joinery.system { gravity = { 0, 0 } }
  local disk = sys:add("body2d", "disk", { m = 1, J = J })
  sys:pin(disk.pos, sys:add("ground", "o", { dim = 2 }).pos)
  sys:add("test_drive2d", "drive", { tau0 = tau0, w = w, frame = disk.frame })
  local model = sys:compile()
  tap.is(model:num_coords(), 3, "a massless Lua load on a body's frame is eliminated with its glue")
  local res = model:simulate { t_end = 2, dt_out = 0.1, rtol = 1e-11, atol = 1e-12 }
  local worst = 0
  for i = 1, res.rows do
    worst = math.max(worst, math.abs(res["disk.theta"][i] - tau0 / (J * w * w) * (1 - math.cos(w * res.t[i]))))
  end
  tap.ok(worst < 1e-9, string.format("Lua torque of time: theta = tau0/(J w^2)(1 - cos w t) (worst %.2g)", worst))

  local function spin(load)
    local s = joinery.system { gravity = { 0, 0 } }
    local d = s:add("body2d", "disk", { m = 1, J = J, init = { theta = 0.3 } })
    s:pin(d.pos, s:add("ground", "o", { dim = 2 }).pos)
    load(s, d)
    return s:simulate { t_end = 1, dt_out = 0.1, rtol = 1e-11, atol = 1e-12 }
  end
  local a = spin(function(s, d) s:add("test_drive2d", "drive", { k = 2, c = 0.03, frame = d.frame }) end)
  local b = spin(function(s, d)
    s:add("rotational_spring2d", "coil", { k = 2, c = 0.03, a = s:add("ground2d", "base", {}).frame, b = d.frame })
  end)
  worst = 0
  for i = 1, a.rows do worst = math.max(worst, math.abs(a["disk.theta"][i] - b["disk.theta"][i])) end
  tap.ok(worst < 1e-9, string.format("Lua torque of state = rotational_spring2d (worst %.2g rad)", worst))
end

-- 7. What body:point and body:marker return.
do
  local sys = joinery.system { gravity = { 0, -g } }
  local rod = sys:add("body2d", "rod", { m = 1, J = 1 / 12, init = { x = 0.5 } })
  local top = rod:point("top", { -0.5, 0 })
  tap.ok(tostring(top) == "joinery.Terminal rod_top.pos (dim 2)", "body:point returns the marker's pos: " .. tostring(top))
  local marker = rod:marker("mid", { 0, 0 }, 0.25)
  tap.ok(tostring(marker.frame) == "joinery.Terminal rod_mid.frame (dim 3)" and marker.type == "marker2d",
    "body:marker returns the marker2d part")
end

-- 8. User channels live as long as a model compiled from the system, not the system.
do
  local function build()
    local sys = joinery.system { gravity = { 0, -g } }
    local rod = sys:add("body2d", "rod", { m = 1, J = 1 / 12, init = { x = 0.5 } })
    sys:pin(rod:point("top", { -0.5, 0 }), sys:add("ground", "o", { dim = 2 }).pos)
    local scale = 2 -- an upvalue the function keeps
    sys:channel("double_theta", function(s) return scale * s["rod.theta"] end)
    sys:channel("plus_one", function(s) return s.double_theta + 1 end)
    return sys:compile()
  end
  local model = build()
  collectgarbage()
  collectgarbage()
  local res = model:simulate { t_end = 0.2, dt_out = 0.1 }
  local n = res.rows
  tap.ok(res.double_theta[n] == 2 * res["rod.theta"][n] and res.plus_one[n] == res.double_theta[n] + 1,
    "a channel function (and the ones before it) outlives its collected system")
  local names = model:channels()
  tap.ok(names[#names - 1] == "double_theta" and names[#names] == "plus_one", "user channels come last, in order")
end
tap.done()
