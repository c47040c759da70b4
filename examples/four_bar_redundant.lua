-- A double parallelogram of point masses and rods, with one bar too many.
--
-- Ground pivots A (0, 0), E (0.5, 0), D (1, 0); three cranks AB, EF, DC of length 1 keep
-- the coupler points B, F, C (1 kg each) translating together; the coupler is held by
-- BF and FC (0.5 m each) and also by BC (1 m). Since B, F, C stay on one line, the row
-- of BC is the sum of the rows of BF and FC at every configuration: the constraints are
-- redundant (rank 5 of 6 rows), and the compile report names the dependent row. The
-- motion is exact; the rod forces the engine reports are the minimum-norm ones among all
-- that hold the motion (orthogonal to the null space of A^T: T_BF + T_FC - T_BC = 0).
--
-- Released at rest with the cranks 30 degrees below the horizontal, it swings between
-- -30 and -150 degrees and never reaches the folded configuration (cranks along the
-- ground line), where the Jacobian would lose rank for a different reason.
local joinery = require "joinery"

local theta0 = math.rad(-30)
local ux, uy = math.cos(theta0), math.sin(theta0)
local sys = joinery.system { gravity = { 0, -9.81 } }
local A = sys:add("ground", "A", { dim = 2, x = 0 })
local E = sys:add("ground", "E", { dim = 2, x = 0.5 })
local D = sys:add("ground", "D", { dim = 2, x = 1 })
local B = sys:add("mass", "B", { dim = 2, m = 1, init = { x = ux, y = uy } })
local F = sys:add("mass", "F", { dim = 2, m = 1, init = { x = 0.5 + ux, y = uy } })
local C = sys:add("mass", "C", { dim = 2, m = 1, init = { x = 1 + ux, y = uy } })
sys:add("rod", "AB", { dim = 2, L = 1, a = A.pos, b = B.pos })
sys:add("rod", "EF", { dim = 2, L = 1, a = E.pos, b = F.pos })
sys:add("rod", "DC", { dim = 2, L = 1, a = D.pos, b = C.pos })
sys:add("rod", "BF", { dim = 2, L = 0.5, a = B.pos, b = F.pos })
sys:add("rod", "FC", { dim = 2, L = 0.5, a = F.pos, b = C.pos })
sys:add("rod", "BC", { dim = 2, L = 1, a = B.pos, b = C.pos })
-- A spring pulling C towards a wall point loads the coupler (without it every crank would
-- swing as its own pendulum and the coupler bars would carry nothing).
local S = sys:add("ground", "S", { dim = 2, x = 2.5, y = uy })
sys:add("spring", "pull", { dim = 2, k = 20, L = 0.5, a = S.pos, b = C.pos })
sys:settings { t_end = 10, dt_out = 0.01 }
return sys
