-- A spring with its end b glued to nothing: its coordinates have no mass and no row, which
-- the compile's first acceleration refuses; `joinery check` names them as findings.
local joinery = require "joinery"
local sys = joinery.system { gravity = { 0, -9.81 } }
local pivot = sys:add("ground", "pivot", { dim = 2, x = 0, y = 0 })
local bob = sys:add("mass", "bob", { dim = 2, m = 1, init = { x = 1, y = 0 } })
sys:add("rod", "rod", { dim = 2, L = 1, a = pivot.pos, b = bob.pos })
sys:add("spring", "dangle", { dim = 2, k = 1, L = 1, a = bob.pos, init = { bx = 3, by = 1 } })
return sys
