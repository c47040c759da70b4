-- A cart-pole caught by LQR (docs/control-examples.md). A cart of M = 1 kg on a level rail
-- (a mass whose y a guide holds at 0) carries a pole: a uniform rod of m = 0.5 kg and
-- l = 1 m (a body2d, J = m l^2 / 12) pinned at its lower end to the cart; gravity 9.81 m/s^2
-- along -y. An actuator pushes the cart along x with the force u (N), the model input "u".
--
-- The gains: model:linearize about the upright equilibrium (cart at 0, pole.theta = pi/2,
-- at rest, u = 0) gives A and B in the states it names (cart.x, pole.theta, der(cart.x),
-- der(pole.theta)); joinery.lqr solves the Riccati equation for Q = diag(10, 10, 1, 1),
-- R = 0.1 (N^-2). A controller sampled at 100 Hz sets u = -K (x - x_up) from the state it
-- reads, held until the next sample (a zero-order hold). The pole starts 0.3 rad (17
-- degrees) from upright, at rest; the loop swings it up and brings the cart back to 0.
--
--   joinery run examples/cart_pole_lqr.lua --out cart_pole.csv
--
-- The script returns the system and a table of what it computed (gains, linearization,
-- sizes) for tests/lua/t_cart_pole_lqr.lua, which checks the run against an independent
-- integration of the closed loop.
local joinery = require "joinery"

local M, m, l, g = 1, 0.5, 1, 9.81
local theta0 = 0.3 -- rad from upright
local period = 0.01 -- s: 100 Hz
local Q = { { 10, 0, 0, 0 }, { 0, 10, 0, 0 }, { 0, 0, 1, 0 }, { 0, 0, 0, 1 } }
local R = 0.1

local sys = joinery.system { gravity = { 0, -g } }
local cart = sys:add("mass", "cart", { dim = 2, m = M, init = { x = 0, y = 0 } })
sys:add("guide", "rail", { dim = 2, nx = 0, ny = 1, d = 0, pos = cart.pos })
local th = math.pi / 2 + theta0
local pole = sys:add("body2d", "pole", { m = m, J = m * l * l / 12,
  init = { x = l / 2 * math.cos(th), y = l / 2 * math.sin(th), theta = th } })
sys:pin(pole:point("base", { -l / 2, 0 }), cart.pos, "pivot")
sys:input { name = "u", value = 0, unit = "N" }
sys:actuator { name = "push", on = cart.x, input = "u" }

-- The controller reads the states the linearization names, as offsets from upright; K is
-- filled in below, before any run.
local K, states, offset = nil, nil, nil
sys:controller { name = "lqr", period = period, fn = function(s)
  local u = 0
  for j, name in ipairs(states) do u = u - K[1][j] * (s[name] - offset[j]) end
  s:set_input("u", u)
end }
sys:settings { t_end = 5, dt_out = period }

-- Linearize about upright: q over model:coords() (cart.x, cart.y, pole.x, pole.y,
-- pole.theta), at rest.
local model = sys:compile()
local up = { ["cart.x"] = 0, ["cart.y"] = 0, ["pole.x"] = 0, ["pole.y"] = l / 2,
  ["pole.theta"] = math.pi / 2 }
local q, v = {}, {}
for i, name in ipairs(model:coords()) do q[i], v[i] = up[name], 0 end
local lin = model:linearize { q = q, v = v, inputs = { u = 0 } }
model:close()
local P
K, P = joinery.lqr(lin.A, lin.B, Q, R)
states, offset = lin.states, {}
for j, name in ipairs(states) do offset[j] = up[name] or 0 end -- der(...): 0

return sys, { K = K, P = P, lin = lin, Q = Q, R = R, M = M, m = m, l = l, g = g,
  theta0 = theta0, period = period }
