-- Glue elimination changes the coordinates and rows, not the motion: each example model
-- compiled with and without it gives the same trajectory, energy and constraint forces.
local tap = dofile("tests/lua/tap.lua")
local cases = {
  -- script, channels to compare, expected coordinates with / without elimination
  { "pendulum", { "bob.x", "bob.y", "rod.tension", "force.rod.b.x", "force.rod.b.y", "energy" }, 2, 6 },
  { "incline_em", { "particle.x", "particle.y", "line.normal_force", "force.line.pos.y", "energy" }, 2, 4 },
  { "spring_chain_monolithic", { "m1.x", "m2.x", "s1.tension", "s2.tension", "force.s2.a", "energy" }, 2, 6 },
  -- the pendulums' pivots follow (JY_PART_FOLLOWS_GLUE), p2's through p1's: a chain; their
  -- glue forces come from the blocks' balance, M q'' included. 1 s: over 2 s the chaotic
  -- motion (th1 = 2 rad) takes the runs' difference to 1.4e-9, over 1 s it stays at 5e-10
  { "double_pendulum", { "p1.theta", "p2.theta", "energy", "force.p1.pivot.x", "force.p1.pivot.y",
    "force.p2.pivot.x", "force.p2.pivot.y" }, 2, 6, t_end = 1 },
}
-- Pendulums hung in series: each follows the one before, no rows left, the links a chain
-- from the ground: a tree model, solved by the articulated recursion (dyn_tree.c), one angle
-- each. With tree_recursion off, M is formed through each part's G: 14 pendulums leave no
-- rows (14 columns at the end, within the 16 a model without rows may take); 18 would need
-- 18, so the chains stop at 6 columns: the first 6 chain from the ground and the 7th, 11th
-- and 15th keep their pivots and rows and start chains of 4.
local function pendulum_chain(count)
  return function()
    local joinery = require "joinery"
    local sys = joinery.system { gravity = { 0, -9.81 } }
    local prev = sys:add("ground", "g", { dim = 2 }).pos
    for i = 1, count do
      prev = sys:add("pendulum", "p" .. i, { m = 1 + 0.1 * i, l = 1 - 0.03 * i,
        init = { theta = 0.2 * i }, pivot = prev }).bob
    end
    return sys
  end
end
local function chain_channels(count, pivots)
  local channels = { "p1.theta", "p" .. count .. ".theta", "energy" }
  for _, i in ipairs(pivots) do
    channels[#channels + 1] = "force.p" .. i .. ".pivot.x"
    channels[#channels + 1] = "force.p" .. i .. ".pivot.y"
  end
  return channels
end
-- Over 2 s the chain's two runs drift apart to 3e-9 (Prescott kernel); over 0.5 s they
-- agree to 2e-11, the formulations' agreement rather than the chain's growth of differences.
cases[#cases + 1] = { pendulum_chain(14), label = "14 pendulums in series (tree recursion)",
  chain_channels(14, { 1, 2, 6, 7, 8, 11, 14 }), 14, 42, t_end = 0.5 }
cases[#cases + 1] = { pendulum_chain(14), label = "14 pendulums in series (no rows, M formed)",
  chain_channels(14, { 1, 2, 6, 7, 8, 11, 14 }), 14, 42, t_end = 0.5,
  solver = { tree_recursion = false } }
cases[#cases + 1] = { pendulum_chain(18), label = "18 pendulums in series (tree recursion)",
  chain_channels(18, { 1, 2, 6, 7, 8, 11, 14, 15, 18 }), 18, 54, t_end = 0.5 }
cases[#cases + 1] = { pendulum_chain(18), label = "18 pendulums in series (four chains)",
  chain_channels(18, { 1, 2, 6, 7, 8, 11, 14, 15, 18 }), 24, 54, t_end = 0.5,
  solver = { tree_recursion = false } }
-- The rod's ends as the glues' second terminals: the force channel stays the force on the
-- first terminal (here the pivot and the bob).
local function reversed()
  local joinery = require "joinery"
  local sys = joinery.system { gravity = { 0, -9.81 } }
  local pivot = sys:add("ground", "pivot", { dim = 2 })
  local bob = sys:add("mass", "bob", { dim = 2, m = 1, init = { x = 0.6, y = -0.8 } })
  local rod = sys:add("rod", "rod", { dim = 2, L = 1 })
  sys:glue(pivot.pos, rod.a, "hinge")
  sys:glue(bob.pos, rod.b, "tie")
  return sys
end
cases[#cases + 1] = { reversed, label = "pendulum glued the other way round", { "bob.x", "bob.y", "force.tie.x", "force.tie.y", "force.hinge.x",
  "force.hinge.y" }, 2, 6 }
tap.plan(#cases * 3)
-- Both runs integrate the same ODE in different coordinates, so they differ by the
-- integrator's error: at rtol 1e-11 that was up to 1.4e-8 in s1.tension (k = 100 N/m times
-- position errors of 1e-10 m; 6e-9 to 1.4e-8 across OpenBLAS kernels, no margin under 1e-8).
-- At rtol 1e-13 it is at most 1.9e-10 (default/Cooperlake, Haswell, Prescott kernels;
-- 5e-10 in the double pendulum's pivot forces, which go through M q'' of chained blocks),
-- for the same cost (under 0.02 s a run).
local opts = { rtol = 1e-13, atol = 1e-14, t_end = 2, dt_out = 0.05 }
-- The largest difference of the two runs over the named channels, relative to 1 or the
-- value, and where.
local function worst_difference(a_res, b_res, names)
  local worst, where = 0, ""
  for _, name in ipairs(names) do
    local a, b = a_res[name], b_res[name]
    for i = 1, #a do
      local d = math.abs(a[i] - b[i]) / math.max(1, math.abs(b[i]))
      if d > worst then worst, where = d, name end
    end
  end
  return worst, where
end
for _, c in ipairs(cases) do
  local runs = {}
  for k, eliminate in ipairs { true, false } do
    local sys = type(c[1]) == "function" and c[1]() or dofile("examples/" .. c[1] .. ".lua")
    local solver = { eliminate_glue = eliminate }
    for key, value in pairs(c.solver or {}) do solver[key] = value end
    local model = sys:compile(solver)
    -- columns "*": the eliminated copies too (the default leaves them out), to compare them
    local o = { rtol = opts.rtol, atol = opts.atol, t_end = c.t_end or opts.t_end, dt_out = opts.dt_out,
      columns = "*" }
    runs[k] = { n = model:num_coords(), res = model:simulate(o), channels = model:channels() }
  end
  tap.ok(runs[1].n == c[3] and runs[2].n == c[4],
    string.format("%s: %d coordinates with elimination, %d without", c.label or c[1], runs[1].n, runs[2].n))
  -- At rtol 1e-13 the runs differ by at most 5.8e-10 (the pendulum's energy): 1e-8
  -- (absolute, SI units of order 1-100) leaves a margin of 17 and is far below any modelling
  -- error.
  local worst, where = worst_difference(runs[1].res, runs[2].res, c[2])
  tap.ok(worst < 1e-8, string.format("%s: same motion and forces (worst %.2g in %s)", c.label or c[1],
    worst, where))
  -- The same columns either way: every part's coordinates and velocities, the eliminated
  -- ones following what they are glued to (the same 1e-8: the runs' difference).
  local same = #runs[1].channels == #runs[2].channels
  for i = 1, #runs[1].channels do same = same and runs[1].channels[i] == runs[2].channels[i] end
  local coords = {}
  for i = 2, #runs[2].channels do
    local name = runs[2].channels[i]
    if name == "energy" then break end -- the coordinates and velocities come first
    coords[#coords + 1] = name
  end
  local worst_coord, at = worst_difference(runs[1].res, runs[2].res, coords)
  tap.ok(same and #coords == 2 * c[4] and worst_coord < 1e-8,
    string.format("%s: the same %d columns with and without elimination, the %d coordinates and "
      .. "velocities agreeing (worst %.2g in %s)", c.label or c[1], #runs[1].channels, #coords,
      worst_coord, at))
end
tap.done()
