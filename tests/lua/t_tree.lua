-- The tree recursion (engine/src/dyn_tree.c): a model that glue elimination leaves without
-- rows, its links a tree, is solved by the articulated recursion instead of forming M. On
-- trees small enough for M to be formed through G as well (tree_recursion = false: the same
-- coordinates, no rows), both give the same acceleration and output channels at random
-- states; a kept coordinate without mass is named; a 10,000-pendulum chain compiles and
-- steps.
local tap = dofile("tests/lua/tap.lua")
local joinery = require "joinery"
local M = joinery.math

local rng_state = 4242
local function rand(a, b) -- a small LCG: the same numbers on every run
  rng_state = (rng_state * 1103515245 + 12345) % 2147483648
  return a + (b - a) * rng_state / 2147483648
end

local function registered(name)
  for _, t in ipairs(joinery.types()) do
    if t == name then return true end
  end
  return false
end

-- Two arms in one part hanging from its pivot (px, py): two kept angles, so the block the
-- recursion factors is 2 x 2 (LAPACK's Cholesky), not the pendulum's single angle.
if not registered("twin_arm") then
  joinery.part_type {
    name = "twin_arm", doc = "two point masses on two arms in series, hung from (px, py)",
    params = {
      { name = "m", default = 1, unit = "kg", doc = "each bob", domain = "positive" },
      { name = "l", default = 1, unit = "m", doc = "each arm", domain = "positive" },
    },
    coords = { "px", "py", "a", "b" },
    follows_glue = true,
    terminals = {
      { name = "pivot", coords = { "px", "py" } },
      { name = "tip", dim = 2, fn = function(q, t, p)
        return { q.px + p.l * (M.sin(q.a) + M.sin(q.b)), q.py - p.l * (M.cos(q.a) + M.cos(q.b)) }
      end },
    },
    lagrangian = function(q, v, t, p)
      local ca, sa, cb, sb = M.cos(q.a), M.sin(q.a), M.cos(q.b), M.sin(q.b)
      local x1, y1 = q.px + p.l * sa, q.py - p.l * ca
      local u1, w1 = v.px + p.l * ca * v.a, v.py + p.l * sa * v.a
      local u2, w2 = u1 + p.l * cb * v.b, w1 + p.l * sb * v.b
      local g = p.gravity
      return 0.5 * p.m * (u1 * u1 + w1 * w1 + u2 * u2 + w2 * w2)
        + p.m * (g[2] * y1 + g[2] * (y1 - p.l * cb) + g[1] * (2 * x1 + p.l * sb))
    end,
  }
end

-- A pivot with a slider s along x that carries no mass: what the recursion cannot solve.
if not registered("bare_slider") then
  joinery.part_type {
    name = "bare_slider", doc = "a massless slider s on a pivot (px, py)",
    params = { { name = "k", default = 1, unit = "N/m", doc = "spring on s", domain = "positive" } },
    coords = { "px", "py", "s" },
    follows_glue = true,
    terminals = { { name = "pivot", coords = { "px", "py" } } },
    force = function(q, v, t, p) return { 0, 0, -p.k * q.s } end,
  }
end

local cases = {
  { "branched pendulums (p2 and p3 on p1's bob, p4 on p2's)", function()
    local sys = joinery.system { gravity = { 0, -9.81 } }
    local g = sys:add("ground", "g", { dim = 2 })
    local p1 = sys:add("pendulum", "p1", { m = 1.2, l = 0.9, init = { theta = 0.4 }, pivot = g.pos })
    local p2 = sys:add("pendulum", "p2", { m = 0.7, l = 1.1, init = { theta = -0.3 }, pivot = p1.bob })
    sys:add("pendulum", "p3", { m = 0.4, l = 0.6, init = { theta = 1.2 }, pivot = p1.bob })
    sys:add("pendulum", "p4", { m = 0.9, l = 0.8, init = { theta = 2.0 }, pivot = p2.bob })
    return sys
  end, 4 },
  { "twin arms in Lua, three in series, a pendulum at the end", function()
    local sys = joinery.system { gravity = { 0, -9.81 } }
    local prev = sys:add("ground", "g", { dim = 2 }).pos
    for i = 1, 3 do
      prev = sys:add("twin_arm", "t" .. i, { m = 0.5 + 0.2 * i, l = 0.5 + 0.1 * i,
        init = { a = 0.3 * i, b = -0.2 * i }, pivot = prev }).tip
    end
    sys:add("pendulum", "p", { m = 0.8, l = 0.7, init = { theta = 0.5 }, pivot = prev })
    return sys
  end, 7 },
  { "masses joined by springs and dampers (force elements between parts)", function()
    local sys = joinery.system { gravity = { 0, -9.81 } }
    local prev = sys:add("ground", "wall", { dim = 2 }).pos
    for i = 1, 3 do
      local m = sys:add("mass", "m" .. i, { dim = 2, m = 0.5 * i, init = { x = 0.9 * i, y = -0.1 * i } })
      sys:add("spring", "s" .. i, { dim = 2, k = 40 + 10 * i, L = 0.8, a = prev, b = m.pos })
      sys:add("damper", "d" .. i, { dim = 2, c = 0.3 * i, a = prev, b = m.pos })
      prev = m.pos
    end
    return sys
  end, 6 },
}
tap.plan(#cases * 3 + 5) -- each case, then the single checks below

for _, c in ipairs(cases) do
  local label, build, n = c[1], c[2], c[3]
  local tree = build():compile()
  local formed = build():compile { tree_recursion = false }
  tap.ok(tree:num_coords() == n and formed:num_coords() == n and #tree:rows() == 0
    and tree:report():find("articulated recursion", 1, true)
    and not formed:report():find("articulated recursion", 1, true),
    string.format("%s: %d coordinates, no rows, the tree recursion said in the report "
      .. "(%d and %d coordinates)", label, n, tree:num_coords(), formed:num_coords()))
  -- Both are direct solves of the same small system (condition below 1e3 here): their
  -- accelerations differ by rounding, ~1e-15 of their size; 1e-12 leaves a margin of 1000.
  -- Output channels (glue forces from (M a - Q) on each block against the G-mapped balance,
  -- the damper's power) the same way, relative to the largest of each row.
  local worst_acc, worst_ch, where = 0, 0, ""
  local names = tree:channels()
  for _ = 1, 5 do
    local q, v = {}, {}
    for j = 1, n do q[j], v[j] = rand(-1.5, 1.5), rand(-2, 2) end
    local t = rand(0, 1)
    local a, b = tree:acceleration(q, v, t), formed:acceleration(q, v, t)
    local size = 1
    for j = 1, n do size = math.max(size, math.abs(b[j])) end
    for j = 1, n do worst_acc = math.max(worst_acc, math.abs(a[j] - b[j]) / size) end
    local ra, rb = tree:evaluate(q, v, t), formed:evaluate(q, v, t)
    local scale = 1
    for _, name in ipairs(names) do scale = math.max(scale, math.abs(rb[name])) end
    for _, name in ipairs(names) do
      local d = math.abs(ra[name] - rb[name]) / scale
      if d > worst_ch then worst_ch, where = d, name end
    end
  end
  tap.ok(worst_acc <= 1e-12, string.format("%s: the same acceleration as with M formed "
    .. "(worst %.2g relative, 5 random states)", label, worst_acc))
  tap.ok(worst_ch <= 1e-12, string.format("%s: the same %d output channels (worst %.2g "
    .. "relative, in %s)", label, #names, worst_ch, where))
end

-- A part with mass whose two blocks follow two different parts couples their inertia: not
-- a tree. A bar's midpoint mass between two pendulums' bobs (its ends follow them) is
-- solved with M formed through G, as with tree_recursion off.
if not registered("mid_mass") then
  joinery.part_type {
    name = "mid_mass", doc = "a point mass m midway between its ends a and b",
    params = { { name = "m", default = 1, unit = "kg", doc = "the mass", domain = "positive" } },
    coords = { "ax", "ay", "bx", "by" },
    follows_glue = true,
    terminals = { { name = "a", coords = { "ax", "ay" } }, { name = "b", coords = { "bx", "by" } } },
    kinetic = function(q, v, t, p)
      local u, w = (v.ax + v.bx) / 2, (v.ay + v.by) / 2
      return 0.5 * p.m * (u * u + w * w)
    end,
    potential = function(q, t, p) return -p.m * p.gravity[2] * (q.ay + q.by) / 2 end,
  }
end
do
  local function build()
    local sys = joinery.system { gravity = { 0, -9.81 } }
    local g1 = sys:add("ground", "g1", { dim = 2 })
    local g2 = sys:add("ground", "g2", { dim = 2, x = 1 })
    local p1 = sys:add("pendulum", "p1", { m = 1, l = 1, init = { theta = 0.3 }, pivot = g1.pos })
    local p2 = sys:add("pendulum", "p2", { m = 1, l = 1, init = { theta = 0.2 }, pivot = g2.pos })
    sys:add("mid_mass", "bar", { m = 0.5, a = p1.bob, b = p2.bob })
    return sys
  end
  local model, formed = build():compile(), build():compile { tree_recursion = false }
  local q, v = { 0.4, -0.1 }, { 0.3, 0.7 }
  local a, b = model:acceleration(q, v, 0), formed:acceleration(q, v, 0)
  tap.ok(model:num_coords() == 2 and not model:report():find("articulated recursion", 1, true)
    and math.abs(a[1] - b[1]) + math.abs(a[2] - b[2]) == 0,
    "a part with mass following two parts: not a tree, M formed (the same solve as with "
    .. "tree_recursion off)")
end

-- A kept coordinate that carries no mass, with nothing following it: the articulated block
-- is zero, the acceleration not unique, and the compile says which part and coordinate.
do
  local sys = joinery.system { gravity = { 0, -9.81 } }
  local g = sys:add("ground", "g", { dim = 2 })
  local p = sys:add("pendulum", "p", { m = 1, l = 1, init = { theta = 0.3 }, pivot = g.pos })
  sys:add("bare_slider", "slider", { pivot = p.bob })
  local ok, err = pcall(function() return sys:compile() end)
  err = tostring(err)
  tap.ok(not ok and err:find("acceleration not unique", 1, true)
    and err:find("part 'slider' (bare_slider)", 1, true) and err:find("slider.s", 1, true)
    and err:find("carry no mass", 1, true),
    "a massless kept coordinate in a tree: not unique, naming the part and coordinate: " .. err)
end

-- N pendulum parts of 1 kg and 1 m in series from a ground, horizontal at rest (W1).
local function horizontal_chain(N)
  local sys = joinery.system { gravity = { 0, -9.81 } }
  local prev = sys:add("ground", "g", { dim = 2 }).pos
  for i = 1, N do
    prev = sys:add("pendulum", "p" .. i, { m = 1, l = 1, init = { theta = math.pi / 2 },
                                           pivot = prev }).bob
  end
  return sys
end

-- 10,000 pendulum parts in series: the angles alone (no pivot kept, no row), compiled and
-- stepped 2 ms from horizontal at rest, energy kept to 1e-8 of m g L N (N + 1) / 2 (as the
-- 1000-part chain in t_compile_sparse.lua). A correctness test, not a timed one.
do
  local N = 10000
  local model = horizontal_chain(N):compile()
  local res = model:simulate { t_end = 0.002, dt_out = 0.002, method = "adams", rtol = 1e-8,
                               atol = 1e-10 }
  local e0, e1, scale = res.energy[1], res.energy[res.rows], 9.81 * N * (N + 1) / 2
  -- From horizontal at rest no link carries tension at first, so every bob starts in free
  -- fall: the first angle moves by g t^2 / (2 l) = 1.962e-5 rad in 2 ms and the others
  -- (relative heights unchanged) not at first order; the next terms are O(t^4), ~1e-10,
  -- and Adams follows a t^2 start almost exactly (1e-11 seen, against 1e-9 allowed).
  local th1 = res["p1.theta"][res.rows]
  tap.ok(model:num_coords() == N and res.rows == 2 and math.abs(e1 - e0) <= 1e-8 * scale,
    string.format("%d-pendulum chain: %d coordinates, 2 ms in %d steps, energy kept to %.2g "
      .. "of m g L N(N+1)/2", N, model:num_coords(), res.stats.steps, math.abs(e1 - e0) / scale))
  tap.is_near(th1, math.pi / 2 - 9.81 * 0.002 ^ 2 / 2, 1e-9,
    "... the first angle as in free fall of its bob, g t^2 / (2 l)")
end

-- 100,000 in series: the compile's first acceleration starts with no view computed. Views
-- are made sources first (tree_order); made on demand from the deepest part they recursed
-- up the chain, 100,000 C frames, and the stack overflowed (a segmentation fault).
do
  local N = 100000
  local model = horizontal_chain(N):compile()
  local q, v = model:initial()
  local a = model:acceleration(q, v, 0)
  -- at rest from horizontal every bob starts in free fall: the first angle's acceleration
  -- is -g / l, the others' 0 (their relative heights do not change at first)
  local rest = 0
  for j = 2, N do rest = math.max(rest, math.abs(a[j])) end
  tap.ok(model:num_coords() == N and math.abs(a[1] + 9.81) <= 1e-9 and rest <= 1e-9,
    string.format("%d-pendulum chain: compiled, first acceleration %.12g (want -9.81), the "
      .. "others at most %.2g", N, a[1], rest))
end

tap.done()
