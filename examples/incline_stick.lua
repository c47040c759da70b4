-- A block (1 kg) launched up a 30 degree incline at v0 = 2 m/s, with Coulomb friction
-- mu_k = 0.2 and static mu_s = 0.7 on the guide that holds it on the incline. It slides
-- up, stops, and stays: at rest the guide's stick row holds it as long as the friction
-- needed, m g sin(alpha), is within mu_s m g cos(alpha), i.e. tan(alpha) <= mu_s
-- (docs/events.md, "Stick-slip friction").
--
-- Closed form (g = 9.81, along the incline, up positive): sliding up, gravity and friction
-- both pull down the slope, a = -g (sin alpha + mu_k cos alpha) = -6.60414 m/s^2, so
--   s(t) = v0 t - 1/2 |a| t^2,   the stop at t_s = v0 / |a| = 0.302840 s,
--   s_max = v0^2 / (2 |a|) = 0.302840 m,
-- and s = s_max from then on (tan 30 deg = 0.577 <= 0.7). With mu_s below tan(alpha)
-- (the script's first argument, e.g. 0.4) it slides back down from t_s with
-- a = -g (sin alpha - mu_k cos alpha) = -3.20586 m/s^2.
--
--   joinery run examples/incline_stick.lua --rtol 1e-10 --atol 1e-12
local joinery = require "joinery"

local alpha, v0, mu_k = math.rad(30), 2, 0.2
local mu_s = tonumber((...)) or 0.7
local sys = joinery.system { gravity = { 0, -9.81 } }
local block = sys:add("mass", "block", { dim = 2, m = 1, init = { x = 0, y = 0 },
  vel = { x = v0 * math.cos(alpha), y = v0 * math.sin(alpha) } })
sys:add("guide", "incline", {
  dim = 2, nx = -math.sin(alpha), ny = math.cos(alpha), d = 0, -- the line y = x tan(alpha)
  mu = mu_k, mu_s = mu_s, pos = block.pos })
sys:settings { t_end = 2, dt_out = 0.01 }
return sys
