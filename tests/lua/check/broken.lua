-- A deliberately broken model for `joinery check` (tests/lua/t_check.lua): a pendulum, a mass
-- glued to nothing with no gravity and, unless the first argument is "compiles", a spring
-- whose end b is glued to nothing (its coordinates have no mass and no row: the compile
-- refuses the model at its first acceleration, and the check names each finding).
local joinery = require "joinery"
local compiles = ... == "compiles"
local sys = joinery.system { gravity = { 0, 0 } }
local pivot = sys:add("ground", "pivot", { dim = 2, x = 0, y = 0 })
local bob = sys:add("mass", "bob", { dim = 2, m = 1, init = { x = 1, y = 0 } })
sys:add("rod", "rod", { dim = 2, L = 1, a = pivot.pos, b = bob.pos })
sys:add("mass", "lone", { dim = 2, m = 1, init = { x = 3, y = 0 } })
if not compiles then
  sys:add("spring", "dangle", { dim = 2, k = 1, L = 1, a = bob.pos, init = { bx = 3, by = 1 } })
end
return sys
