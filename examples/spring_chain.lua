-- Two spring-mass parts snapped together: the SICM decomposition (seed
-- sicm-coordinate-constraints-and-systems-from-parts, eqs. 1.207-1.212).
--
-- Each spring_mass owns its attachment coordinate `xi` and its extension `x`, with
-- L = 1/2 m (xi' + x')^2 - 1/2 k x^2: its mass matrix is singular on purpose. Gluing
-- left.base to the wall and right.base to left.tip adds xi = 0 and xi = X1 + x1; the
-- engine eliminates nothing by hand and recovers the compound equations (1.211)-(1.212).
--
--   joinery run examples/spring_chain.lua --rtol 1e-10 --atol 1e-12
local joinery = require "joinery"

local sys = joinery.system()
local wall = sys:add("ground", "wall", { dim = 1 })
local left = sys:add("spring_mass", "left", {
  m = 1, k = 100, X = 1, init = { x = 0.1 }, base = wall.pos })
sys:add("spring_mass", "right", {
  m = 2, k = 50, X = 1, init = { x = 0 }, base = left.tip })
sys:settings { t_end = 10, dt_out = 0.01 }
return sys
