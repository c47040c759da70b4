-- The sparse solves (engine/src/dyn_sparse.c: diagonal M; dyn_kkt.c: any M, no rows) against
-- the dense one (dyn_uk.c) on every example model: each compiled twice, sparse_min_coords = 1
-- (every evaluation through the compressed-column store) and 0 (dense only), then the
-- acceleration and every output channel (row forces, powers, energies) compared at a state
-- the dense model reaches after 0.3 s (velocities non-zero, off the initial configuration).
-- Tolerance 1e-10 relative to the largest value of its kind (accelerations; channels): both
-- paths solve the same equations up to rounding in matrices of condition below ~1e4 (the
-- examples' row-scaled A M^-1/2), so they agree to ~1e-12 (measured: worst printed below);
-- a wrong term is O(1).
-- Then both models integrate 0.3 s with BDF (the default: its projection goes through the same
-- solves) to the same state: 1e-7 relative to the largest coordinate, far above the rounding
-- differences the steps carry (measured up to 5e-9, andrews) and far below any error of the method.
-- Last, chains beyond 2000 coordinates, where the evaluator keeps no dense M at all: masses on
-- springs at rest length fall freely (q'' = (0, -g) exactly but for rounding: 1e-12), and a
-- mass+rod chain agrees with the dense solve (forced by sparse_min_coords = 0) to 1e-8: the
-- chain's row-scaled A M^-1/2 has condition ~N^2 (~1e6 at 1050 links), so each path is within
-- ~1e6 * 1e-16 of the truth (measured 1.7e-10 apart); a wrong term is O(1).
local tap = dofile("tests/lua/tap.lua")
local examples = { "andrews", "bricard", "compound_pendulum", "constant_speed", "double_pendulum",
  "double_pendulum_lua", "driven_pendulum", "four_bar", "four_bar_chain", "four_bar_redundant",
  "free_body", "friction_incline", "heavy_top", "incline_em", "pendulum", "rolling_disk",
  "slider_crank", "spring_chain", "spring_chain_lua", "spring_chain_monolithic", "tracking" }
tap.plan(2 * #examples + 2)
local TOL = 1e-10

local function state_after(model, t_end, method)
  local res = model:simulate { t_end = t_end, dt_out = t_end, method = method }
  local q, v = {}, {}
  local names = model:coords()
  for i, name in ipairs(names) do
    q[i] = res[name][#res.t]
    v[i] = res["der(" .. name .. ")"][#res.t]
  end
  return q, v, res.t[#res.t]
end

local function worst_relative(a, b, keys)
  local scale, diff = 0, 0
  for _, k in ipairs(keys) do
    scale = math.max(scale, math.abs(a[k]))
    diff = math.max(diff, math.abs(a[k] - b[k]))
  end
  return diff / math.max(scale, 1e-300)
end

local function idx_of(t)
  local idx = {}
  for i = 1, #t do idx[i] = i end
  return idx
end

for _, name in ipairs(examples) do
  local sys = dofile("examples/" .. name .. ".lua")
  local dense = sys:compile { sparse_min_coords = 0 }
  local sparse = sys:compile { sparse_min_coords = 1 }
  local q, v, t = state_after(dense, 0.3, "adams")
  local ad, as = dense:acceleration(q, v, t), sparse:acceleration(q, v, t)
  local idx = {}
  for i = 1, #ad do idx[i] = i end
  local acc_diff = worst_relative(ad, as, idx)
  local cd, cs = dense:evaluate(q, v, t), sparse:evaluate(q, v, t)
  local keys = {}
  for k in pairs(cd) do keys[#keys + 1] = k end
  local ch_diff = worst_relative(cd, cs, keys)
  tap.ok(acc_diff <= TOL and ch_diff <= TOL,
    string.format("%s (%d coordinates, %d rows): sparse and dense agree (acceleration %.2g, " ..
      "channels %.2g relative)", name, dense:num_coords(), dense:num_rows(), acc_diff, ch_diff))
  local qd = state_after(dense, 0.3, "bdf")
  local qs = state_after(sparse, 0.3, "bdf")
  local state_diff = worst_relative(qd, qs, idx_of(qd))
  tap.ok(state_diff <= 1e-7, string.format("%s: BDF with projection, the same state after 0.3 s " ..
    "(%.2g relative)", name, state_diff))
end
local joinery = require "joinery"
local function chain(kind, count)
  local sys = joinery.system { gravity = { 0, -9.81 } }
  local prev = sys:add("ground", "ground", { dim = 2 }).pos
  for i = 1, count do
    local b = sys:add("mass", "m" .. i, { dim = 2, m = 1 + 0.01 * i, init = { x = i, y = 0 } })
    if kind == "spring" then
      sys:add("spring", "s" .. i, { dim = 2, k = 100, L = 1, a = prev, b = b.pos })
    else
      sys:add("rod", "r" .. i, { dim = 2, L = 1, a = prev, b = b.pos })
    end
    prev = b.pos
  end
  return sys
end

local springs = chain("spring", 1100):compile {}
local q, v = springs:initial()
local a, worst = springs:acceleration(q, v), 0
for i = 1, #a do worst = math.max(worst, math.abs(a[i] - (i % 2 == 0 and -9.81 or 0))) end
tap.ok(worst <= 1e-12, string.format("1100 masses on springs (2200 coordinates, no rows): free " ..
  "fall from the sparse solve (worst %.2g m/s^2)", worst))

local rods = chain("rod", 1050)
local sparse, dense = rods:compile {}, rods:compile { sparse_min_coords = 0 }
q, v = sparse:initial()
for i = 1, #v do v[i] = 0.001 * i * (-1) ^ i end
local as, ad = sparse:acceleration(q, v), dense:acceleration(q, v)
local diff = worst_relative(ad, as, idx_of(ad))
tap.ok(diff <= 1e-8, string.format("1050 masses on rods (2100 coordinates): sparse without dense " ..
  "arrays and dense agree (%.2g relative)", diff))
tap.done()
