-- The sparse acceleration solve (CHOLMOD on A M^-1 A^T, for diagonal M) against the dense
-- one: the same motion, including redundant rows, where the sparse path relies on its
-- shift and refinement instead of a rank-revealing factorization.
local tap = dofile("tests/lua/tap.lua")
tap.plan(3)
local joinery = require "joinery"

local function chain(links)
  local sys = joinery.system { gravity = { 0, -9.81 } }
  local prev = sys:add("ground", "g", { dim = 2 }).pos
  for i = 1, links do
    local m = sys:add("mass", "m" .. i, { dim = 2, m = 1 + 0.1 * i, init = { x = 0.1 * i } })
    sys:add("rod", "r" .. i, { dim = 2, L = 0.1, a = prev, b = m.pos })
    prev = m.pos
  end
  return sys
end
-- 0.5 s: the chain below is chaotic, and differences between runs grow a thousandfold by 1 s.
local opts = { t_end = 0.5, dt_out = 0.1, rtol = 1e-10, atol = 1e-12 }
-- The largest difference of the channels over the rows, relative to max(1, |a|).
local function worst_between(a, b, channels)
  local worst = 0
  for _, c in ipairs(channels) do
    for i = 1, #a.t do
      worst = math.max(worst, math.abs(a[c][i] - b[c][i]) / math.max(1, math.abs(a[c][i])))
    end
  end
  return worst
end
local function compare(sys_fn, channels)
  local dense = sys_fn():compile { sparse_min_coords = 0 }:simulate(opts)
  local sparse = sys_fn():compile { sparse_min_coords = 1 }:simulate(opts)
  return worst_between(dense, sparse, channels), dense, sparse
end
-- A 40-link chain is chaotic: rounding differences between the two solves (the accelerations
-- agree to 1e-14 at equal states, t_sparse_paths) change BDF's step sequence, and from then on
-- the runs differ by their integration error, which the chaos amplifies. So each run is held
-- to a reference at rtol 1e-13 and to each other by that error: measured 3.9e-8 (dense) and
-- 3.7e-8 (sparse) from the reference, 6e-9 (or 2.5e-10, by BLAS kernel) from each other;
-- bound 2e-7. A solve that was wrong by 1e-10 relative in one right-hand side would show as
-- a difference far above it after the amplification.
local chain_channels = { "m40.x", "m40.y", "force.r1.length", "energy" }
local reference = chain(40):compile { sparse_min_coords = 0 }:simulate {
  t_end = 0.5, dt_out = 0.1, rtol = 1e-13, atol = 1e-15 }
local function from_reference(res) return worst_between(reference, res, chain_channels) end
local worst, dense40, sparse40 = compare(function() return chain(40) end, chain_channels)
local dense_error, sparse_error = from_reference(dense40), from_reference(sparse40)
tap.ok(worst < 2e-7 and dense_error < 2e-7 and sparse_error < 2e-7,
  string.format("40-link chain (80 coordinates): sparse = dense to %.2g, each within its integration "
  .. "error of the reference (dense %.2g, sparse %.2g; bound 2e-7; %.3f s dense, %.3f s sparse)",
  worst, dense_error, sparse_error, dense40.seconds, sparse40.seconds))
worst = compare(function() return dofile("examples/four_bar_redundant.lua") end,
  { "B.x", "C.y", "BC.tension", "FC.tension", "AB.tension" })
tap.ok(worst < 1e-9, string.format("redundant double parallelogram: sparse = dense (worst %.2g)", worst))
worst = compare(function() return dofile("examples/pendulum.lua") end, { "bob.x", "rod.tension" })
tap.ok(worst < 1e-9, string.format("pendulum: sparse = dense (worst %.2g)", worst))
tap.done()
