-- W2: wall - k1 - m1 - k2 - m2 on a line, m = 1, 2 kg, k = 100, 50 N/m, no gravity, at rest,
-- displacements x1(0) = 0.1 m, x2(0) = 0: examples/spring_chain.lua's parts, except that the
-- second spring starts compressed by 0.1 m (its extension is x2 - x1).
local joinery = require "joinery"
local sys = joinery.system()
local wall = sys:add("ground", "wall", { dim = 1 })
local left = sys:add("spring_mass", "left", { m = 1, k = 100, X = 1, init = { x = 0.1 }, base = wall.pos })
sys:add("spring_mass", "right", { m = 2, k = 50, X = 1, init = { x = -0.1 }, base = left.tip })
return sys
