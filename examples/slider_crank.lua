-- A slider-crank driven by a DC motor whose torque is a Lua function of the state:
-- tau = tau_s (1 - omega / omega_0) (stall torque tau_s, no-load speed omega_0), written as a
-- Lua part type (motor2d) glued to the crank's frame. The crank (radius r) turns about its
-- centre; the connecting rod (length l) joins the crank pin to the piston, which a slider2d
-- holds on the x axis of a fixed frame. No gravity, no friction: the motor's work goes
-- into kinetic energy, and the crank speeds up towards omega_0
-- (tests/lua/t_slider_crank.lua).
--
--   joinery run examples/slider_crank.lua
local joinery = require "joinery"

-- The motor: a massless copy (x, y, theta) of the frame it drives, so that glue
-- elimination substitutes it by the crank's coordinates; its force acts on theta.
local have = {}
for _, name in ipairs(joinery.types()) do have[name] = true end
if not have.motor2d then
  joinery.part_type {
    name = "motor2d", doc = "DC motor torque tau_s (1 - omega / omega_0) on a planar frame",
    params = {
      { name = "tau_s", default = 1, unit = "N m", doc = "stall torque" },
      { name = "omega_0", default = 10, unit = "rad/s", doc = "no-load speed", domain = "positive" },
    },
    coords = { "x", "y", "theta" },
    terminals = { { name = "frame", coords = { "x", "y", "theta" } } },
    force = function(q, v, t, p) return { theta = p.tau_s * (1 - v.theta / p.omega_0) } end,
    outputs = { { name = "power", fn = function(q, v, t, p)
      return p.tau_s * (1 - v.theta / p.omega_0) * v.theta end } },
  }
end

local r, l = 0.1, 0.3
local sys = joinery.system { gravity = { 0, 0 } } -- a horizontal machine
local base = sys:add("ground2d", "base", {})
-- Start at 90 degrees: the crank pin at (0, r), the piston at (sqrt(l^2 - r^2), 0).
local xp = math.sqrt(l * l - r * r)
local rod_angle = math.atan(-r, xp)
local crank = sys:add("body2d", "crank", { m = 0.5, J = 0.5 * 0.5 * r * r, init = { theta = math.pi / 2 } })
local rod = sys:add("body2d", "rod", { m = 0.2, J = 0.2 * l * l / 12,
  init = { x = xp / 2, y = r / 2, theta = rod_angle } })
local piston = sys:add("body2d", "piston", { m = 0.3, J = 1e-4, init = { x = xp } })

sys:pin(crank.pos, base.pos, "main_bearing")
sys:pin(crank:point("pin", { r, 0 }), rod:point("big_end", { -l / 2, 0 }), "crank_pin")
sys:pin(rod:point("small_end", { l / 2, 0 }), piston.pos, "wrist_pin")
sys:add("slider2d", "cylinder", { a = base.frame, b = piston.frame })
sys:add("motor2d", "motor", { tau_s = 0.5, omega_0 = 20, frame = crank.frame })

sys:channel("rpm", function(s) return s["der(crank.theta)"] * 60 / (2 * math.pi) end)
sys:settings { t_end = 5, dt_out = 0.001, rtol = 1e-10, atol = 1e-12 }
return sys
