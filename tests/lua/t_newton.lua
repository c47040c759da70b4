-- BDF's Newton linear solver (docs/numerics.md, "BDF's linear solver at large N"): the dense
-- difference-quotient Jacobian and Newton–Krylov integrate the same motion of a chain of
-- masses on rods, each keeps its energy, each reports its own work, and `auto` picks by
-- the number of states (dense up to 80).
local tap = dofile((arg and arg[0] and arg[0]:match("^(.*[/\\])") or "") .. "tap.lua")
local joinery = require "joinery"

tap.plan(8)

local function chain(n)
  local sys = joinery.system { gravity = { 0, -9.81 } }
  local prev = sys:add("ground", "ground", { dim = 2 }).pos
  for i = 1, n do
    local b = sys:add("mass", "m" .. i, { dim = 2, m = 1, init = { x = i, y = 0 } })
    sys:add("rod", "r" .. i, { dim = 2, L = 1, a = prev, b = b.pos })
    prev = b.pos
  end
  return sys
end

local function run(n, newton, t_end)
  return chain(n):compile():simulate { method = "bdf", newton = newton, t_end = t_end,
    dt_out = t_end, rtol = 1e-10, atol = 1e-12 }
end

local function drift(res)
  local e = res.energy
  return math.abs(e[#e] - e[1])
end

-- 6 links (24 states), 1 s from horizontal: the tip falls about 4 m.
local dense, krylov = run(6, "dense", 1), run(6, "krylov", 1)
local dx = math.abs(dense["m6.x"][2] - krylov["m6.x"][2])
local dy = math.abs(dense["m6.y"][2] - krylov["m6.y"][2])
-- Two integrations at rtol 1e-10 of a 6-link chain over 1 s: each tip is off its exact
-- path by ~1e-8 m (energy drift below); 1e-6 m leaves a margin of 100.
tap.ok(dx < 1e-6 and dy < 1e-6,
  string.format("dense and Krylov agree on the tip at 1 s (%.1e, %.1e m)", dx, dy))
tap.ok(dense["m6.y"][2] < -1, string.format("the tip fell (y = %.3f m)", dense["m6.y"][2]))
-- Measured 1.6e-7 J each (of the ~200 J the links' weights do over the fall): 1e-6 J
-- leaves a margin of 6 for other BLAS kernels and step sequences.
tap.ok(drift(dense) < 1e-6 and drift(krylov) < 1e-6,
  string.format("both keep the energy (drift %.1e, %.1e J)", drift(dense), drift(krylov)))
tap.ok(dense.stats.jac_evals > 0 and dense.stats.krylov_iters == 0 and
  dense.stats.jac_rhs_evals == 24 * dense.stats.jac_evals,
  string.format("dense: %d Jacobians of 24 right-hand sides each, no Krylov iterations",
    dense.stats.jac_evals))
tap.ok(krylov.stats.jac_evals == 0 and krylov.stats.krylov_iters > 0 and
  krylov.stats.jac_rhs_evals >= krylov.stats.krylov_iters,
  string.format("Krylov: %d iterations, %d right-hand sides for J v, no Jacobian",
    krylov.stats.krylov_iters, krylov.stats.jac_rhs_evals))

-- auto: 20 links are 80 states (dense), 21 links 84 (Krylov).
local small, large = run(20, "auto", 0.01), run(21, "auto", 0.01)
tap.ok(small.stats.jac_evals > 0 and small.stats.krylov_iters == 0,
  "auto at 80 states: the dense Jacobian")
tap.ok(large.stats.jac_evals == 0 and large.stats.krylov_iters > 0,
  "auto at 84 states: Newton-Krylov")
tap.is(joinery.system():settings().newton, "auto", "the default is auto")
tap.done()
