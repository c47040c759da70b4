-- A planar pin's joint angle and rate as channels, against the kinematics: sys:pin adds the
-- part "<pin>" (pin_angle2d) whose "<pin>.angle" is theta_b - theta_a of the two bodies'
-- frames (a ground side: the world, or a ground2d's theta) and "<pin>.rate" its derivative.
-- The closed forms read the bodies' own channels of the same row, so they hold to rounding
-- whatever the tolerance. The part's copies are eliminated: the model keeps the coordinates
-- and rows it had without it. A crank that turns several times keeps a continuous angle; a
-- pin between points with no orientation adds nothing.
local here = arg[0]:match("^(.*[/\\])") or ""
local tap = dofile(here .. "tap.lua")
local joinery = require "joinery"

local tols = { { rtol = 1e-8, atol = 1e-10 }, {} } -- {}: the defaults
local signs = { 1, -1 }
tap.plan(#tols * #signs * 5 + 5 + 4 + 3 + 2 + 3)

local function has(list, x)
  for _, y in ipairs(list) do if y == x then return true end end
  return false
end

local function range(col)
  local lo, hi = math.huge, -math.huge
  for _, x in ipairs(col) do lo, hi = math.min(lo, x), math.max(hi, x) end
  return hi - lo
end

-- A double pendulum of two uniform links (1 m), each hanging from the previous one's tip.
-- Sign s mirrors the initial angles and speed, and (s = -1) names the ground pin with the
-- ground as b, so its angle is -theta1.
local function double_pendulum(s, pin_names)
  local sys = joinery.system { gravity = { 0, -9.81 } }
  local pivot = sys:add("ground", "pivot", { dim = 2 })
  local th1, th2 = -math.pi / 2 + 0.7 * s, -math.pi / 2 - 0.4 * s
  local x1, y1 = 0.5 * math.cos(th1), 0.5 * math.sin(th1)
  local x2, y2 = 2 * x1 + 0.5 * math.cos(th2), 2 * y1 + 0.5 * math.sin(th2)
  local l1 = sys:add("body2d", "link1", { m = 1, J = 1 / 12,
    init = { x = x1, y = y1, theta = th1 }, vel = { theta = 1.5 * s } })
  local l2 = sys:add("body2d", "link2", { m = 0.7, J = 0.7 / 12,
    init = { x = x2, y = y2, theta = th2 } })
  local top = l1:point("top", { -0.5, 0 })
  if s > 0 then sys:pin(pivot.pos, top, pin_names[1]) else sys:pin(top, pivot.pos, pin_names[1]) end
  sys:pin(l1:point("tip", { 0.5, 0 }), l2:point("top", { -0.5, 0 }), pin_names[2])
  return sys
end

-- 1. Both pins' angle and rate against the links' theta and omega, at two tolerances and
-- both signs; the model has the 6 coordinates and 4 pin rows it has without the channels.
for _, tol in ipairs(tols) do
  for _, s in ipairs(signs) do
    local sys = double_pendulum(s, { "hinge1", "hinge2" })
    local model = sys:compile()
    local opts = { t_end = 3, dt_out = 0.01, rtol = tol.rtol, atol = tol.atol }
    local r = model:simulate(opts)
    local rel, ground = 0, 0
    for i = 1, r.rows do
      local t1, t2 = r["link1.theta"][i], r["link2.theta"][i]
      local w1, w2 = r["der(link1.theta)"][i], r["der(link2.theta)"][i]
      rel = math.max(rel, math.abs(r["hinge2.angle"][i] - (t2 - t1)),
        math.abs(r["hinge2.rate"][i] - (w2 - w1)))
      ground = math.max(ground, math.abs(r["hinge1.angle"][i] - s * t1),
        math.abs(r["hinge1.rate"][i] - s * w1))
    end
    local what = string.format("rtol %s, sign %d", tostring(tol.rtol or "default"), s)
    tap.ok(rel <= 1e-14, "hinge2.angle = theta2 - theta1, .rate = omega2 - omega1 (" .. what
      .. string.format("; worst %.1e)", rel))
    tap.ok(ground <= 1e-14, "ground pin: angle = " .. (s > 0 and "" or "-") .. "theta1, rate = "
      .. (s > 0 and "" or "-") .. "omega1 (" .. what .. string.format("; worst %.1e)", ground))
    tap.ok(range(r["hinge2.angle"]) > 0.5 and range(r["hinge1.rate"]) > 1,
      "the pendulum swings: the channels move (" .. what .. ")")
    tap.ok(model:num_coords() == 6 and model:num_rows() == 4,
      string.format("no coordinates or rows added: %d coords, %d rows (%s)", model:num_coords(),
        model:num_rows(), what))
    local check = model:check()
    tap.ok(check.sound, "joinery check finds nothing (" .. what .. "): " .. check.findings
      .. " findings")
  end
end

-- 2. The default output: the pin's angle, rate and forces, not the part's eliminated copies;
-- without glue elimination the copies stay coordinates with glue rows and the channels agree.
do
  local sys = double_pendulum(1, { "hinge1", "hinge2" })
  local chans = sys:simulate({ t_end = 0.1 }).channels -- the default output selection
  tap.ok(has(chans, "hinge2.angle") and has(chans, "hinge2.rate") and has(chans, "hinge1.angle")
    and has(chans, "hinge1.rate") and has(chans, "force.hinge2.x"),
    "default output has hinge.angle, hinge.rate and the force")
  tap.ok(not has(chans, "hinge2.a_theta") and not has(chans, "force.hinge2.a.x"),
    "the eliminated copies and their glues' forces are left out of the default output")
  local r = sys:simulate { t_end = 0.2, columns = "hinge2.*" }
  tap.ok(has(r.channels, "hinge2.b_theta") and has(r.channels, "hinge2.angle"),
    "the copies stay one glob away (hinge2.*)")
  local plain = sys:compile { eliminate_glue = false }
  local rp = plain:simulate { t_end = 1, dt_out = 0.01, rtol = 1e-10, atol = 1e-12 }
  local worst = 0
  for i = 1, rp.rows do
    worst = math.max(worst,
      math.abs(rp["hinge2.angle"][i] - (rp["link2.theta"][i] - rp["link1.theta"][i])))
  end
  tap.ok(plain:num_coords() > 6 and worst <= 1e-9, string.format(
    "without elimination (%d coords) the angle agrees to %.1e", plain:num_coords(), worst))
  -- unnamed pins: the part is named after the glue's default name
  local sys2 = double_pendulum(1, {})
  local angles, forces = {}, {}
  for _, c in ipairs(sys2:compile():channels()) do
    local g = c:match("^(glue%d+)%.angle$")
    if g then angles[#angles + 1] = g end
    g = c:match("^force%.(glue%d+)%.x$")
    if g then forces[g] = true end
  end
  tap.ok(#angles == 2 and forces[angles[1]] and forces[angles[2]],
    "unnamed pins: glue<k>.angle beside force.glue<k>.x, for both pins")
end

-- 3. A four-bar parallelogram whose crank turns round several times: examples/four_bar.lua
-- with its glues made pins. The crank's pin (ground side b) reads -theta_crank, continuous
-- across the turns; the coupler's pins theta_b - theta_a of the bars.
do
  local f = assert(io.open(here .. "../../examples/four_bar.lua"))
  local text = f:read("a"):gsub("sys:glue%(", "sys:pin(")
  f:close()
  local sys = assert(load(text, "=four_bar.lua (pins)"))()
  local r = sys:simulate { t_end = 5, dt_out = 0.01 }
  local form, jump = 0, 0
  for i = 1, r.rows do
    local tc, tk, tr = r["crank.theta"][i], r["coupler.theta"][i], r["rocker.theta"][i]
    form = math.max(form, math.abs(r["pin_a.angle"][i] + tc), math.abs(r["pin_b.angle"][i] + tr),
      math.abs(r["pin_c.angle"][i] - (tc - tk)), math.abs(r["pin_d.angle"][i] - (tr - tk)),
      math.abs(r["pin_a.rate"][i] + r["der(crank.theta)"][i]),
      math.abs(r["pin_c.rate"][i] - (r["der(crank.theta)"][i] - r["der(coupler.theta)"][i])))
    if i > 1 then jump = math.max(jump, math.abs(r["pin_a.angle"][i] - r["pin_a.angle"][i - 1])) end
  end
  local last = r["pin_a.angle"][r.rows]
  tap.ok(last > -math.pi / 2 + 4 * math.pi,
    string.format("the crank turns more than twice: pin_a.angle %.3f -> %.3f rad",
      r["pin_a.angle"][1], last))
  tap.ok(jump < 0.2, string.format("pin_a.angle is continuous: largest step between rows %.3f rad",
    jump))
  tap.ok(form <= 1e-14, string.format("four-bar pins: angle = theta_b - theta_a (ground and "
    .. "body sides), rate = its derivative, to %.1e", form))
  local pin_parts = 0
  for _, name in ipairs(sys:parts()) do
    if sys:part(name).type == "pin_angle2d" then pin_parts = pin_parts + 1 end
  end
  tap.ok(pin_parts == 4, "one pin_angle2d part per pin: " .. pin_parts)
end

-- 4. A ground2d turned by 0.3 rad as side a: angle = theta - 0.3.
do
  local sys = joinery.system { gravity = { 0, -9.81 } }
  local g = sys:add("ground2d", "g", { theta = 0.3 })
  local rod = sys:add("body2d", "rod", { m = 1, J = 1 / 12, init = { x = 0.5, theta = 0 } })
  sys:pin(g.pos, rod:point("top", { -0.5, 0 }), "hinge")
  local r = sys:simulate { t_end = 1, dt_out = 0.05 }
  local worst = 0
  for i = 1, r.rows do
    worst = math.max(worst, math.abs(r["hinge.angle"][i] - (r["rod.theta"][i] - 0.3)))
  end
  tap.ok(worst <= 1e-14, string.format("ground2d side: angle = theta - theta_ground (%.1e)", worst))
  local rep = joinery.check_part("pin_angle2d")
  tap.ok(rep.passed and rep.instances > 0, "pin_angle2d passes the conformance suite: "
    .. table.concat(rep.failed, ", "))
  tap.ok(range(r["hinge.angle"]) > 0.5, "the rod swings")
end

-- 5. The part added by hand, as a C user would (world = 1: side a fixed, terminal b only),
-- reads as sys:pin's; a world that is not 0, 1 or 2 is refused, naming the values.
do
  local sys = joinery.system { gravity = { 0, -9.81 } }
  local pivot = sys:add("ground", "pivot", { dim = 2 })
  local rod = sys:add("body2d", "rod", { m = 1, J = 1 / 12, init = { x = 0.5, theta = 0 } })
  sys:pin(pivot.pos, rod:point("top", { -0.5, 0 }), "hinge")
  sys:add("pin_angle2d", "manual", { world = 1, theta_world = 0.25, b = rod.frame })
  local model = sys:compile()
  local r = model:simulate { t_end = 1, dt_out = 0.05 }
  local worst = 0
  for i = 1, r.rows do
    worst = math.max(worst, math.abs(r["manual.angle"][i] - (r["hinge.angle"][i] - 0.25)),
      math.abs(r["manual.rate"][i] - r["hinge.rate"][i]))
  end
  tap.ok(worst <= 1e-14 and model:num_coords() == 3 and model:num_rows() == 2, string.format(
    "added by hand: angle = theta - theta_world (%.1e), no coordinates or rows added", worst))
  local ok, err = pcall(sys.add, sys, "pin_angle2d", "bad", { world = 3 })
  tap.ok(not ok and tostring(err):find("world = 3: 0 (a and b frames), 1 (a fixed) or 2", 1, true),
    "world = 3 refused: " .. tostring(err))
end

-- 6. Pins where a side has no orientation, or whose name a part has, add no part.
do
  local sys = joinery.system { gravity = { 0, -9.81 } }
  local m1 = sys:add("mass", "m1", { dim = 2, m = 1 })
  local m2 = sys:add("mass", "m2", { dim = 2, m = 2, init = { x = 1 } })
  local rod = sys:add("body2d", "rod", { m = 1, J = 1 / 12, init = { x = 2 } })
  local before = #sys:parts()
  sys:pin(m1.pos, m2.pos, "joint")
  sys:pin(m2.pos, rod.pos, "joint2")
  tap.ok(#sys:parts() == before and sys:part("joint") == nil,
    "a pin between masses' points, or a mass and a body, adds no part")
  local chans = sys:compile():channels()
  tap.ok(not has(chans, "joint.angle") and has(chans, "force.joint.x"),
    "no joint.angle channel; the force channel is there")
  local sys2 = joinery.system {}
  local pivot = sys2:add("ground", "pivot", { dim = 2 })
  local r2 = sys2:add("body2d", "rod", { m = 1, J = 1 / 12, init = { x = 0.5 } })
  sys2:pin(pivot.pos, r2:point("top", { -0.5, 0 }), "rod")
  tap.ok(sys2:part("rod").type == "body2d" and #sys2:parts() == 3,
    "a pin named like a part adds no angle part and raises nothing")
end
