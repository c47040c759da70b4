-- examples/embed/pendulum_host.c (a C host closing a PD loop at 100 Hz through
-- jy_sim_set_input) against the same loop as a Lua controller (sys:controller): for each
-- method the host's final theta (printed with %.17g) and its steps equal the Lua run's bit
-- for bit, and the energy balance it prints, E(T) - E(0) - sum u dtheta, is within the
-- bound of tests/engine/t_inputs.c: samples x rtol x (m g L / 2 + max |u| x 1 rad).
local tap = dofile((arg[0]:match("^(.*[/\\])") or "") .. "tap.lua")
local joinery = require "joinery"

local host = os.getenv("PENDULUM_HOST")
if not host then
  tap.plan(0)
  tap.diag("PENDULUM_HOST is not set (run through meson test)")
  return tap.done()
end
tap.plan(4 * 4)

local KP, KD, REF, DT, T_END = 40, 4, -1, 0.01, 2

local function lua_run(method)
  local sys = joinery.system { gravity = { 0, -9.81 } }
  local rod = sys:add("body2d", "rod", { m = 1, J = 1 / 12, init = { x = 0.5, y = 0, theta = 0 } })
  local pivot = sys:add("ground", "pivot", { dim = 2 })
  local top = sys:add("marker2d", "rod_top", { rx = -0.5, body = rod.frame })
  sys:glue(top.pos, pivot.pos, "hinge")
  sys:input { name = "u", value = 0, unit = "N m" }
  sys:add("actuator", "motor", { mode = 2, input = 0, coord = rod.theta })
  sys:controller { name = "pd", period = DT, fn = function(s)
    s:set_input("u", -KP * (s["rod.theta"] - REF) - KD * s["der(rod.theta)"])
  end }
  local model = sys:compile()
  local sim = model:sim { method = method, t_end = T_END }
  sim:advance(T_END)
  local q = sim:state()
  local theta
  for i, name in ipairs(model:coords()) do
    if name == "rod.theta" then theta = q[i] end
  end
  return theta, sim:stats().steps
end

for _, method in ipairs { "auto", "bdf", "adams", "erk" } do
  local pipe = assert(io.popen(string.format("'%s' %s 2>&1", host, method)))
  local out = pipe:read("a")
  local okay = pipe:close()
  tap.ok(okay, method .. ": pendulum_host ran")
  local theta = tonumber(out:match("theta%(T%) = (%S+)"))
  local steps = tonumber(out:match("(%d+) steps"))
  local de, work = out:match("E%(T%) %- E%(0%) = (%S+) J, sum u dtheta = (%S+) J")
  de, work = tonumber(de), tonumber(work)
  local lua_theta, lua_steps = lua_run(method)
  tap.ok(theta ~= nil and theta == lua_theta, string.format(
    "%s: the host's theta(T) = %.17g equals the Lua controller's %.17g", method, theta or 0 / 0,
    lua_theta))
  tap.is(steps, lua_steps, method .. ": the same steps")
  local allowed = T_END / DT * 1e-11 * (9.81 / 2 + KP * math.abs(REF))
  tap.ok(de and work and math.abs(de - work) <= allowed, string.format(
    "%s: energy balance %.3g J (allowed %.3g J)", method, (de or 0) - (work or 0), allowed))
end
tap.done()
