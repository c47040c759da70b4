-- Stick-slip: a block (1 kg) on a horizontal table with Coulomb friction mu_s = mu_k = 0.3,
-- pulled towards a wall at the origin by a linear spring (k = 100 N/m, rest length 0),
-- released at rest at x = 0.5 m. The guide's friction slides, and sticks when the sliding
-- velocity reaches zero while the spring needs no more than mu_s N to hold it
-- (docs/events.md, "Stick-slip friction").
--
-- Closed form (omega = sqrt(k/m) = 10 rad/s, delta = mu m g / k = 0.02943 m): each half-swing
-- is a harmonic motion about the offset equilibrium +-delta (the friction opposes the
-- motion), so it lasts pi/omega and the turning points are
--   x_k = (-1)^k (x0 - 2 k delta),  t_k = k pi / omega,
-- the amplitude shrinking by 2 mu m g / k each half-swing. Between them
--   x(t) = s delta + (x_{k} - s delta) cos(omega (t - t_k)),  s = sign(x_k).
-- The block sticks at the first turning point with |x_k| <= mu_s m g / k: here k = 8,
-- x_8 = 0.5 - 16 delta = 0.02912 m at t_8 = 0.8 pi = 2.513274 s (the spring pulls with
-- 2.912 N, the table holds up to 2.943 N), and stays there to t_end = 5 s.
--
--   joinery run examples/stick_slip.lua --rtol 1e-10 --atol 1e-12
local joinery = require "joinery"

local sys = joinery.system { gravity = { 0, -9.81 } }
local wall = sys:add("ground", "wall", { dim = 2, x = 0, y = 0 })
local block = sys:add("mass", "block", { dim = 2, m = 1, init = { x = 0.5, y = 0 } })
sys:add("guide", "table", { dim = 2, nx = 0, ny = 1, d = 0, mu = 0.3, mu_s = 0.3,
  pos = block.pos })
sys:add("spring", "spring", { dim = 2, k = 100, L = 0, a = wall.pos, b = block.pos })
sys:settings { t_end = 5, dt_out = 0.01 }
return sys
