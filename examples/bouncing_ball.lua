-- A ball (1 kg) dropped from 1 m at rest onto a floor y = 0 with restitution e = 0.8: each
-- impact is the impulsive Udwadia-Kalaba law on the floor's row (the upward speed after it
-- is e times the speed before; docs/events.md, "The impact law"). A user event stops the
-- run at the first apex below 1 cm.
--
-- Closed form (g = 9.81, h = 1, v1 = sqrt(2 g h), T = sqrt(2 h / g)): impact k (k >= 1)
-- at t_1 = T, t_{k+1} = t_k + 2 e^k v1 / g, i.e. t_k = T (1 + 2 e (1 - e^(k-1)) / (1 - e));
-- between impacts k and k+1 the parabola y(t) = e^k v1 (t - t_k) - g/2 (t - t_k)^2, with
-- its apex e^(2k) h at t_k + e^k v1 / g. The apexes are 0.64^k m: the first below 1 cm is
-- after impact 11 (0.64^11 = 7.38 mm; 0.64^10 = 11.5 mm), at t = 3.714643 s.
--
--   joinery run examples/bouncing_ball.lua --rtol 1e-10 --atol 1e-12
local joinery = require "joinery"

local sys = joinery.system { gravity = { 0, -9.81 } }
local ball = sys:add("mass", "ball", { dim = 2, m = 1, init = { x = 0, y = 1 } })
sys:add("floor", "floor", { dim = 2, nx = 0, ny = 1, d = 0, e = 0.8, pos = ball.pos })
-- The apex is where the vertical velocity crosses zero going down.
sys:event { name = "low_apex", direction = "down",
  when = function(s) return s["der(ball.y)"] end,
  action = function(s) if s["ball.y"] < 0.01 then s:stop() end end }
sys:settings { t_end = 5, dt_out = 0.01 }
return sys
