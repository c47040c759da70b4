-- Compiling through the sparse factorizations (models of at least sparse_min_coords
-- coordinates: the initial state's Newton steps on J J^T, the no-dependent-rows check on
-- A A^T) against the dense rank-revealing path: the same consistent initial state, the same
-- values moved, the same dependent rows, on every example and on models whose initial values
-- must move (followers, unset values, a guess).
local tap = dofile("tests/lua/tap.lua")
local joinery = require "joinery"

local examples = {}
for name in io.popen("ls examples/*.lua"):lines() do examples[#examples + 1] = name end

local function pendulum_chain(links)
  local sys = joinery.system { gravity = { 0, -9.81 } }
  local prev = sys:add("ground", "g", { dim = 2 }).pos
  for i = 1, links do
    prev = sys:add("pendulum", "p" .. i, { m = 1, l = 1, init = { theta = 0.1 * i }, pivot = prev }).bob
  end
  return sys
end
local function four_bar_guess()
  local sys = joinery.system()
  local A = sys:add("ground", "A", { dim = 2 })
  local D = sys:add("ground", "D", { dim = 2, x = 2 })
  local B = sys:add("mass", "B", { dim = 2, init = { x = 0.6, y = 0.8 } })
  local C = sys:add("mass", "C", { dim = 2, guess = { x = 2.5, y = 1.5 } })
  sys:add("rod", "AB", { dim = 2, L = 1, a = A.pos, b = B.pos })
  sys:add("rod", "BC", { dim = 2, L = 2, a = B.pos, b = C.pos })
  sys:add("rod", "DC", { dim = 2, L = 1.5, a = D.pos, b = C.pos })
  return sys
end
local cases = {
  { "30-pendulum chain from given angles (pivots follow their glue)", function() return pendulum_chain(30) end },
  { "four-bar with a guessed coupler end", four_bar_guess },
}
for _, file in ipairs(examples) do
  cases[#cases + 1] = { file, function() return dofile(file) end }
end
-- each case; the long chain (4 checks); the 1000 pendulums through 3 solvers; the doubled
-- rod (a report and an error with 4 parts)
tap.plan(#cases + 4 + 3 + 1 + 5 + 1)


local function moved_names(model)
  local names = {}
  for _, mv in ipairs(model:moved()) do names[#names + 1] = mv.name end
  return table.concat(names, ",")
end
local function redundant_line(model)
  return model:report():match("redundant constraints:[^\n]*") or ""
end

for _, case in ipairs(cases) do
  local name, build = case[1], case[2]
  local ok_d, dense = pcall(function() return build():compile { sparse_min_coords = 0 } end)
  local ok_s, sparse = pcall(function() return build():compile { sparse_min_coords = 1 } end)
  if not ok_d then
    -- a model that does not compile densely (a plugin not built) must fail the same way
    tap.ok(not ok_s, name .. ": fails to compile on both paths")
  elseif not ok_s then
    tap.ok(false, name .. ": sparse compile failed: " .. tostring(sparse))
  else
    local qd, vd = dense:initial()
    local qs, vs = sparse:initial()
    local worst = 0
    for i = 1, #qd do
      worst = math.max(worst, math.abs(qd[i] - qs[i]) / math.max(1, math.abs(qd[i])),
        math.abs(vd[i] - vs[i]) / math.max(1, math.abs(vd[i])))
    end
    -- Both Newton iterations stop at the assembly tolerance (1e-12 of the state's size);
    -- the two steps differ by rounding, so the states agree well within 1e-10.
    tap.ok(worst < 1e-10 and moved_names(dense) == moved_names(sparse)
      and redundant_line(dense) == redundant_line(sparse),
      string.format("%s: sparse compile = dense (worst %.2g, %d moved, %s)", name, worst,
        #dense:moved(), redundant_line(dense) ~= "" and "dependent rows agree" or "no dependent rows"))
  end
end

-- A long mass+rod chain whose masses are only guessed near the constraint manifold: the
-- sparse compile puts every mass at 1 m from the previous one; the model then takes steps.
-- 10,000 bodies (the evaluator keeps no dense M or A there: they would be 5 GB);
-- JOINERY_TEST_CHAIN_N sets another size.
do
  local N = tonumber(os.getenv("JOINERY_TEST_CHAIN_N") or "10000")
  local sys = joinery.system { gravity = { 0, -9.81 } }
  local prev = sys:add("ground", "g", { dim = 2 }).pos
  for i = 1, N do
    local m = sys:add("mass", "m" .. i, { dim = 2, m = 1,
      guess = { x = i + 0.01 * math.sin(i), y = 0.01 * math.cos(i) } })
    sys:add("rod", "r" .. i, { dim = 2, L = 1, a = prev, b = m.pos })
    prev = m.pos
  end
  local model = sys:compile()
  tap.ok(model:num_rows() == N and model:num_coords() == 2 * N,
    string.format("%d-body chain: %d rows (one per rod), %d coordinates (the masses')", N,
      model:num_rows(), model:num_coords()))
  local q, v = model:initial()
  local at = {}
  for i, name in ipairs(model:coords()) do at[name] = i end
  local worst, px, py = 0, 0, 0
  for i = 1, N do
    local x, y = q[at["m" .. i .. ".x"]], q[at["m" .. i .. ".y"]]
    worst = math.max(worst, math.abs(math.sqrt((x - px) ^ 2 + (y - py) ^ 2) - 1))
    px, py = x, y
  end
  -- The Newton iteration stops at assembly_tol (1e-12) times the largest |q| (about N m).
  tap.ok(worst <= 1e-12 * (N + 1), string.format("%d-body chain: every rod 1 m long to %.2g m "
    .. "(tolerance %.2g)", N, worst, 1e-12 * (N + 1)))
  local acc = model:acceleration(q, v)
  -- At rest every rod's length has zero second derivative: (p_i - p_i-1) . (a_i - a_i-1) = 0.
  local worst_acc, pax, pay = 0, 0, 0
  px, py = 0, 0
  for i = 1, N do
    local ix, iy = at["m" .. i .. ".x"], at["m" .. i .. ".y"]
    local ax, ay = acc[ix], acc[iy]
    worst_acc = math.max(worst_acc, math.abs((q[ix] - px) * (ax - pax) + (q[iy] - py) * (ay - pay)))
    if not (ax == ax and ay == ay) then worst_acc = math.huge end
    px, py, pax, pay = q[ix], q[iy], ax, ay
  end
  -- The rows' matrix A W A^T is conditioned like a chain Laplacian, ~N^2, so rounding leaves
  -- ~eps N^2 g in the rows: measured 4e-15 m/s^2 at N = 1000, 2e-8 at 10,000. 1e-14 N^2 g
  -- (at least 1e-9 g) keeps a margin of ~500 and stays far below a violated rod (~g).
  local acc_tol = math.max(1e-9, 1e-14 * N * N) * 9.81
  tap.ok(worst_acc <= acc_tol, string.format("%d-body chain: the first acceleration keeps "
    .. "every rod's length (%.2g m/s^2, tolerance %.2g)", N, worst_acc, acc_tol))
  -- A few steps: energy kept (the rods do no work). E* = m g L N (N + 1) / 2 is the energy
  -- scale of the chain falling; Adams at rtol 1e-8 over 2 ms kept E to 1.1e-15 E* at
  -- N = 10,000; 1e-8 E* is far above that and far below a wrong step.
  local res = model:simulate { t_end = 0.002, dt_out = 0.002, method = "adams", rtol = 1e-8,
                               atol = 1e-10 }
  local e0, e1, scale = res.energy[1], res.energy[res.rows], 9.81 * N * (N + 1) / 2
  tap.ok(res.rows == 2 and math.abs(e1 - e0) <= 1e-8 * scale and res.stats.steps > 0,
    string.format("%d-body chain: %d steps to 2 ms, energy kept to %.2g of m g L N(N+1)/2 "
      .. "(tolerance 1e-8)", N, res.stats.steps, math.abs(e1 - e0) / scale))
end

-- 1000 chained pendulum parts (massless pivots: the KKT path), horizontal at rest: 3000
-- coordinates without glue elimination, beyond the dense fallback. The KKT solve used to
-- measure its rows against b alone, which is rounding (~1e-29) at rest, and called a 2e-15
-- solve "constraints not met". With elimination and tree_recursion off the pivots follow the
-- bobs in chains of at most 6 columns (compile_glue.c): the first 6 angles hang from the
-- ground, then each chain keeps its first pivot (px, py) and 4 angles, so N + 2 (N - 6) / 4
-- coordinates (rounded up) and 2 pivot rows a chain. By default (the links a tree, no rows)
-- the N angles alone, solved by the tree recursion.
for _, solver in ipairs { { eliminate_glue = false }, { tree_recursion = false }, {} } do
  local N = 1000
  local sys = joinery.system { gravity = { 0, -9.81 } }
  local prev = sys:add("ground", "g", { dim = 2 }).pos
  for i = 1, N do
    prev = sys:add("pendulum", "p" .. i, { m = 1, l = 1, init = { theta = math.pi / 2 },
                                           pivot = prev }).bob
  end
  local model = sys:compile(solver)
  local res = model:simulate { t_end = 0.002, dt_out = 0.002, method = "adams", rtol = 1e-8,
                               atol = 1e-10 }
  -- as for the rod chain above: energy to 1e-8 of m g L N (N + 1) / 2
  local e0, e1, scale = res.energy[1], res.energy[res.rows], 9.81 * N * (N + 1) / 2
  local coords = solver.eliminate_glue == false and 3 * N
    or solver.tree_recursion == false and N + 2 * ((N - 6 + 3) // 4) or N
  tap.ok(model:num_coords() == coords and res.rows == 2 and math.abs(e1 - e0) <= 1e-8 * scale,
    string.format("%d-pendulum chain (%d coordinates, want %d; %s): %d steps to "
      .. "2 ms, energy kept to %.2g of m g L N(N+1)/2", N, model:num_coords(), coords,
      coords == N and "tree recursion" or "sparse KKT only", res.stats.steps,
      math.abs(e1 - e0) / scale))
end

-- 300 rods on ball joints hanging straight down at rest (2100 coordinates, beyond the dense
-- fallback): an equilibrium, q'' = 0 exactly, so the terms of A q'' are rounding too. The KKT
-- path measured its rows against them and b alone and refused the model ("constraints not
-- met", relative residual 0.34); the accelerations the balanced forces would give set the
-- scale now. At rest it stays: every rod's centre within 1e-10 m over 0.1 s (rounding of
-- forces of the order of N m g balancing, measured 2.9e-13; a fall would move it by g t^2 / 2
-- = 0.05 m).
do
  local N, L, m, r = 300, 0.1, 0.1, 0.01
  local sys = joinery.system { gravity = { 0, 0, -9.81 } }
  local prev = sys:add("ground3d", "ground", {}).pos
  for k = 1, N do
    local rod = sys:add("body3d", "rod" .. k, { m = m, Ixx = m * (3 * r * r + L * L) / 12,
      Iyy = m * (3 * r * r + L * L) / 12, Izz = m * r * r / 2,
      init = { x = 0, y = 0, z = -(k - 0.5) * L, q0 = 1 } })
    sys:ball(rod:point("a", { 0, 0, L / 2 }), prev, "j" .. k)
    prev = rod:point("b", { 0, 0, -L / 2 })
  end
  local ok, model = pcall(sys.compile, sys)
  local moved = math.huge
  if ok then
    local res = model:simulate { t_end = 0.1, dt_out = 0.1, columns = "rod*.z" }
    moved = 0
    for k = 1, N do
      moved = math.max(moved, math.abs(res["rod" .. k .. ".z"][res.rows] + (k - 0.5) * L))
    end
  else
    tap.diag(model)
  end
  tap.ok(ok and moved <= 1e-10, string.format("300 rods hanging at rest (2100 coordinates): "
    .. "compiled, and still at rest after 0.1 s (moved %.2g m)", moved))
end

-- A chain with one rod twice (r1 and "again" tie m1 to the ground): its rows lose rank, so
-- the sparse Newton step hands over to the dense rank-revealing one. 100 bodies: the dense
-- step decides, and the row declared last is the dependent one. 1500 bodies (1501 x 3000
-- entries, above the dense step's 4M): an error that says why, not minutes of dense work.
local function doubled_chain(N)
  local sys = joinery.system { gravity = { 0, -9.81 } }
  local ground = sys:add("ground", "g", { dim = 2 }).pos
  local prev, first = ground, nil
  for i = 1, N do
    local m = sys:add("mass", "m" .. i, { dim = 2, m = 1,
      guess = { x = i + 0.01 * math.sin(i), y = 0.01 * math.cos(i) } })
    sys:add("rod", "r" .. i, { dim = 2, L = 1, a = prev, b = m.pos })
    first = first or m.pos
    prev = m.pos
  end
  sys:add("rod", "again", { dim = 2, L = 1, a = ground, b = first })
  return sys
end
do
  local model = doubled_chain(100):compile()
  tap.has(model:report(), "dependent rows: again.length",
    "100-body chain with a doubled rod: the dense step meets the rows and names the dependent one")
  tap.raises(function() doubled_chain(1500):compile() end,
    { "initial state", "position rows lose rank", "1501 rows, 3000 coordinates",
      "start from a configuration that meets the rows" },
    "1500-body chain with a doubled rod: too large for the dense step, and the error says so")
end
tap.done()
