local joinery = require "joinery"
local sys = joinery.system { gravity = { 0, -9.81 } }
local ball = sys:add("mass", "ball", { dim = 2, m = 1, init = { x = 0, y = 0.001 } })
sys:add("floor", "floor", { dim = 2, e = 0.5, mu = 0.2, pos = ball.pos })
local g = sys:add("ground", "g", { dim = 2, x = 0, y = 0.05 })
sys:add("rope", "rope", { dim = 2, L = 0.06, a = g.pos, b = ball.pos })
sys:event { name = "apex", direction = "down", when = function(s) return s["der(ball.y)"] end,
  action = function(s) s:set("der(ball.x)", 0.1); s:set_param("floor", "e", 0.2) end }
sys:event { name = "late", when = function(s) return s.t - 0.015 end, action = "stop" }
local res = sys:simulate { t_end = 0.02, dt_out = 0.005 }
local n = #res.events
sys:settings { t_end = 0.02, dt_out = 0.01, method = "adams" }
return sys
