-- A pendulum and a mass glued to nothing (no gravity): the mass is a part not connected to
-- anything, a finding of `joinery check` (tests/lua/t_check.lua).
local joinery = require "joinery"
local sys = joinery.system { gravity = { 0, 0 } }
local pivot = sys:add("ground", "pivot", { dim = 2, x = 0, y = 0 })
local bob = sys:add("mass", "bob", { dim = 2, m = 1, init = { x = 1, y = 0 } })
sys:add("rod", "rod", { dim = 2, L = 1, a = pivot.pos, b = bob.pos })
sys:add("mass", "lone", { dim = 2, m = 1, init = { x = 3, y = 0 } })
return sys
