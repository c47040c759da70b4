-- The same chain as spring_chain.lua written the ordinary way: two point masses on a line
-- and two springs, wall - m1 - m2. Positions are absolute: m1 sits at X1 + x1 = 1.1 m,
-- m2 at X1 + x1 + X2 + x2 = 2.1 m. The springs' massless ends are glued to the masses and
-- glue elimination substitutes them away: the compiled model has just m1.x and m2.x, no
-- terminal coordinates and no constraint rows.
local joinery = require "joinery"

local sys = joinery.system()
local wall = sys:add("ground", "wall", { dim = 1 })
local m1 = sys:add("mass", "m1", { dim = 1, m = 1, init = { x = 1.1 } })
local m2 = sys:add("mass", "m2", { dim = 1, m = 2, init = { x = 2.1 } })
sys:add("spring", "s1", { dim = 1, k = 100, L = 1, a = wall.pos, b = m1.pos })
sys:add("spring", "s2", { dim = 1, k = 50, L = 1, a = m1.pos, b = m2.pos })
sys:settings { t_end = 10, dt_out = 0.01 }
return sys
