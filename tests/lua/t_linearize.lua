-- model:linearize (docs/control.md, "Linearization"), checked by physics:
--  * the cart-pole (a cart M on a rail, a point-mass pole m on an arm l, a force u on the
--    cart through an input) about its upright equilibrium against the closed-form A and B,
--    for two sets of sizes, and its outputs (C, D);
--  * the double pendulum's characteristic polynomial, upright and hanging, against the closed
--    form (a tree model: no rows at all);
--  * the linearization against the nonlinear simulation: a small perturbation of the hanging
--    cart-pole simulated for 0.6 s against RK4 on x' = A x;
--  * a redundant-row linkage (examples/four_bar_redundant.lua) and its non-redundant twin give
--    the same A at their equilibrium;
--  * a velocity row reduces the velocity states only;
--  * bad input: each a clear error.
local tap = dofile("tests/lua/tap.lua")
local joinery = require "joinery"

local function cart_pole(M, m, l, g, theta, with_input)
  local sys = joinery.system { gravity = { 0, -g } }
  local cart = sys:add("mass", "cart", { dim = 2, m = M })
  sys:add("guide", "rail", { dim = 2, nx = 0, ny = 1, d = 0, pos = cart.pos })
  sys:add("pendulum", "pole", { m = m, l = l, init = { theta = theta }, pivot = cart.pos })
  if with_input then
    sys:input { name = "u", value = 0, unit = "N" }
    sys:add("actuator", "push", { mode = 2, input = 0, coord = cart.x })
  end
  return sys:compile()
end

local function max_rel(got, want)
  local worst = 0
  for i = 1, #want do
    for j = 1, #want[i] do
      worst = math.max(worst, math.abs(got[i][j] - want[i][j]) / math.max(1, math.abs(want[i][j])))
    end
  end
  return worst
end

-- Cart-pole about upright (theta = pi), theta measured from hanging: with phi = theta - pi,
-- (M + m) x'' - m l phi'' = u and l phi'' = x'' + g phi, so x'' = (m g / M) phi + u / M and
-- phi'' = g (M + m) / (M l) phi + u / (M l).
-- Tolerance 1e-8 relative: the Richardson values measure ~2e-12 off (the central differences
-- at step 1e-4 are O(h^4) after extrapolation; rounding ~1e-12); the margin covers other
-- BLAS kernels. The error estimate must bound the real error and stay below 1e-6.
for _, p in ipairs { { M = 2, m = 0.5, l = 0.8, g = 9.81 }, { M = 0.7, m = 1.3, l = 0.3, g = 3.7 } } do
  local model = cart_pole(p.M, p.m, p.l, p.g, math.pi, true)
  local lin = model:linearize { outputs = { "pole.theta", "input.u", "der(cart.x)" } }
  tap.is(table.concat(lin.states, " "), "cart.x pole.theta der(cart.x) der(pole.theta)",
    "the cart-pole's states are its own coordinates and their rates")
  local A = { { 0, 0, 1, 0 }, { 0, 0, 0, 1 }, { 0, p.m * p.g / p.M, 0, 0 },
    { 0, p.g * (p.M + p.m) / (p.M * p.l), 0, 0 } }
  local B = { { 0 }, { 0 }, { 1 / p.M }, { 1 / (p.M * p.l) } }
  local ea, eb = max_rel(lin.A, A), max_rel(lin.B, B)
  tap.ok(ea < 1e-8, string.format("cart-pole M = %g: A matches the closed form", p.M))
  tap.ok(eb < 1e-8, string.format("cart-pole M = %g: B matches the closed form", p.M))
  tap.diag(string.format("A off by %.3g, B by %.3g (relative); estimate %.3g", ea, eb, lin.error))
  tap.ok(lin.error >= math.max(ea, eb) and lin.error < 1e-6,
    "the error estimate bounds the real error and is small")
  local C = { { 0, 1, 0, 0 }, { 0, 0, 0, 0 }, { 0, 0, 1, 0 } }
  local D = { { 0 }, { 1 }, { 0 } }
  tap.ok(max_rel(lin.C, C) < 1e-8 and max_rel(lin.D, D) < 1e-8, "C and D pick the outputs")
  tap.is(lin.inputs[1], "u", "the input is named")
end

-- The double pendulum (point masses; pendulum parts whose pivots glue elimination removes: a
-- tree model, no rows). With the mass matrix Mm = [[(m1 + m2) l1^2, m2 l1 l2], [m2 l1 l2,
-- m2 l2^2]] and K = g diag((m1 + m2) l1, m2 l2), upright Mm phi'' = K phi, hanging
-- Mm phi'' = -K phi: det(sI - A) = s^4 -+ tr(Mm^-1 K) s^2 + det(K) / det(Mm).
local function charpoly(A) -- Faddeev-LeVerrier: c[k + 1] is the coefficient of s^(n - k)
  local n, Mk, c = #A, {}, { 1 }
  for i = 1, n do Mk[i] = {} for j = 1, n do Mk[i][j] = 0 end end
  for k = 1, n do
    local AM = {}
    for i = 1, n do
      AM[i] = {}
      for j = 1, n do
        local s = 0
        for r = 1, n do s = s + A[i][r] * Mk[r][j] end
        AM[i][j] = s + (i == j and c[k] or 0)
      end
    end
    Mk = AM
    local tr = 0
    for i = 1, n do for r = 1, n do tr = tr + A[i][r] * Mk[r][i] end end
    c[k + 1] = -tr / k
  end
  return c
end

for _, p in ipairs { { m1 = 1, l1 = 1, m2 = 0.5, l2 = 0.7, g = 9.81 },
                     { m1 = 0.2, l1 = 0.4, m2 = 2, l2 = 1.5, g = 9.81 } } do
  local sys = joinery.system { gravity = { 0, -p.g } }
  local ground = sys:add("ground", "ground", { dim = 2 })
  local p1 = sys:add("pendulum", "p1", { m = p.m1, l = p.l1, pivot = ground.pos })
  sys:add("pendulum", "p2", { m = p.m2, l = p.l2, pivot = p1.bob })
  local model = sys:compile()
  local names, q, v = model:coords(), model:initial()
  local mm = { { (p.m1 + p.m2) * p.l1 ^ 2, p.m2 * p.l1 * p.l2 }, { p.m2 * p.l1 * p.l2, p.m2 * p.l2 ^ 2 } }
  local k1, k2 = p.g * (p.m1 + p.m2) * p.l1, p.g * p.m2 * p.l2
  local det_m = mm[1][1] * mm[2][2] - mm[1][2] ^ 2
  local tr = (mm[2][2] * k1 + mm[1][1] * k2) / det_m -- tr(Mm^-1 K)
  for _, upright in ipairs { true, false } do
    for i, name in ipairs(names) do
      if name:match("theta") then q[i] = upright and math.pi or 0 end
      v[i] = 0
    end
    local lin = model:linearize { q = q, v = v }
    local c, want = charpoly(lin.A), { 1, 0, upright and -tr or tr, 0, k1 * k2 / det_m }
    local worst = 0
    for k = 1, 5 do worst = math.max(worst, math.abs(c[k] - want[k]) / math.max(1, math.abs(want[k]))) end
    tap.ok(#lin.states == 4 and worst < 1e-8, string.format(
      "double pendulum m2 = %g %s: the characteristic polynomial matches the closed form",
      p.m2, upright and "upright" or "hanging"))
    tap.diag(string.format("coefficients off by %.3g relative; estimate %.3g; states %s", worst,
      lin.error, table.concat(lin.states, " ")))
  end
end

-- The linearization against the nonlinear motion: the hanging cart-pole perturbed by 1e-6 in
-- every state and simulated for 0.6 s, against classical RK4 on x' = A x (h = 1e-3, its own
-- error ~1e-15 of the amplitude). The motions differ by the nonlinear terms, O(amplitude^2):
-- tolerance 1e-3 of the amplitude, 1e-9; the state moves by far more than that.
do
  local model = cart_pole(1.5, 0.4, 0.6, 9.81, 0, false)
  local q0, v0 = model:initial()
  local lin = model:linearize { q = q0, v = v0 }
  local A, x0 = lin.A, { 1e-6, -0.7e-6, 0.5e-6, 1.2e-6 }
  local function f(x)
    local d = {}
    for i = 1, 4 do d[i] = 0 for j = 1, 4 do d[i] = d[i] + A[i][j] * x[j] end end
    return d
  end
  local x, h = { table.unpack(x0) }, 1e-3
  for _ = 1, 600 do
    local k1 = f(x)
    local k2 = f { x[1] + h / 2 * k1[1], x[2] + h / 2 * k1[2], x[3] + h / 2 * k1[3], x[4] + h / 2 * k1[4] }
    local k3 = f { x[1] + h / 2 * k2[1], x[2] + h / 2 * k2[2], x[3] + h / 2 * k2[3], x[4] + h / 2 * k2[4] }
    local k4 = f { x[1] + h * k3[1], x[2] + h * k3[2], x[3] + h * k3[3], x[4] + h * k3[4] }
    for i = 1, 4 do x[i] = x[i] + h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]) end
  end
  local idx = {}
  for i, name in ipairs(model:coords()) do idx[name] = i end
  local q, v = { table.unpack(q0) }, { table.unpack(v0) }
  q[idx["cart.x"]] = q[idx["cart.x"]] + x0[1]
  q[idx["pole.theta"]] = q[idx["pole.theta"]] + x0[2]
  v[idx["cart.x"]] = v[idx["cart.x"]] + x0[3]
  v[idx["pole.theta"]] = v[idx["pole.theta"]] + x0[4]
  local sim <close> = model:sim { t_end = 0.6, rtol = 1e-12, atol = 1e-15 }
  sim:set_state(0, q, v)
  sim:advance(0.6)
  local qt, vt = sim:state()
  local nl = { qt[idx["cart.x"]] - q0[idx["cart.x"]], qt[idx["pole.theta"]] - q0[idx["pole.theta"]],
    vt[idx["cart.x"]], vt[idx["pole.theta"]] }
  local diff, moved = 0, 0
  for i = 1, 4 do
    diff = math.max(diff, math.abs(nl[i] - x[i]))
    moved = math.max(moved, math.abs(x[i] - x0[i]))
  end
  tap.ok(diff < 1e-9 and moved > 1e-7,
    "a small perturbation moves as x' = A x predicts (the nonlinear simulation)")
  tap.diag(string.format("nonlinear vs linear after 0.6 s: %.3g (the state moved %.3g)", diff, moved))
end

-- Redundant rows: four_bar_redundant (three rockers, and the coupler's rod BC besides BF and
-- FC: 6 rows of rank 5) against its twin without BC (5 independent rows), both at their
-- equilibrium under gravity and the spring. One degree of freedom: the same A (its states
-- the same coordinates), 1e-7 relative.
do
  local function linkage(redundant)
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
    if redundant then sys:add("rod", "BC", { dim = 2, L = 1, a = B.pos, b = C.pos }) end
    local S = sys:add("ground", "S", { dim = 2, x = 2.5, y = uy })
    sys:add("spring", "pull", { dim = 2, k = 20, L = 0.5, a = S.pos, b = C.pos })
    return sys:compile()
  end
  local red, twin = linkage(true), linkage(false)
  local qr = red:equilibrium {}
  local qt = twin:equilibrium {}
  local zero = {}
  for i = 1, #qr do zero[i] = 0 end
  local lr, lt = red:linearize { q = qr, v = zero }, twin:linearize { q = qt, v = zero }
  tap.is(table.concat(lr.states, " "), table.concat(lt.states, " "),
    "the redundant linkage and its twin have the same states")
  local worst = #lr.A == #lt.A and max_rel(lr.A, lt.A) or math.huge
  tap.ok(#lr.A == 2 and worst < 1e-7, "the redundant row changes nothing in A")
  tap.diag(string.format("states %s; A differs by %.3g; A[2][1] = %.6g", table.concat(lr.states, " "),
    worst, lr.A[2] and lr.A[2][1] or 0 / 0))
end

-- A velocity row reduces the velocity states, not the positions: a point mass in the plane
-- whose velocity must satisfy vx = vy (a row psi = vx - vy, written at the velocity level),
-- pulled toward the origin by springs k: x'' = y'' = -k (x + y) / (2 m).
do
  local sys = joinery.system { gravity = { 0, 0 } }
  local o = sys:add("ground", "o", { dim = 2 })
  local b = sys:add("mass", "b", { dim = 2, m = 2, init = { x = 0.1, y = 0.1 } })
  sys:add("spring", "s", { dim = 2, k = 3, L = 0, a = o.pos, b = b.pos })
  sys:constrain { name = "skate", on = { b.pos }, psi = function(x, xd) return xd[1] - xd[2] end }
  local model = sys:compile()
  local lin = model:linearize {}
  tap.is(#lin.states, 3, "a velocity row leaves both positions and one velocity")
  tap.diag("states " .. table.concat(lin.states, " "))
  local want = -3 / (2 * 2) -- d(x'')/dx = d(x'')/dy = -k / (2 m)
  tap.ok(math.abs(lin.A[3][1] - want) < 1e-8 and math.abs(lin.A[3][2] - want) < 1e-8
    and math.abs(lin.A[1][3] - 1) < 1e-8 and math.abs(lin.A[2][3] - 1) < 1e-8,
    "and the reduced A is the constrained motion's")
end

-- Bad input.
do
  local model = cart_pole(2, 0.5, 0.8, 9.81, math.pi, true)
  local q, v = model:initial()
  local bad = { table.unpack(q) }
  bad[2] = 0.01 -- cart.y off the rail
  tap.raises(function() model:linearize { q = bad, v = v } end, { "violates", "rail", "0.01" }, "a state off the constraints names the row")
  local vbad = { table.unpack(v) }
  vbad[2] = -0.5
  tap.raises(function() model:linearize { q = q, v = vbad } end, { "velocity", "rail" }, "a velocity off the constraints names the row")
  tap.raises(function() model:linearize { outputs = { "pole.thetaa" } } end, { "unknown channel", "did you mean 'pole.theta'" }, "an unknown output")
  tap.raises(function() model:linearize { inputs = { "uu" } } end, { "unknown input 'uu'", "did you mean 'u'" }, "an unknown input")
  tap.raises(function() model:linearize { ouputs = {} } end, { "unknown model:linearize option 'ouputs'", "did you mean 'outputs'" }, "an unknown option")
  tap.raises(function() model:linearize { step = 2 } end, { "step" }, "a step out of range")
  tap.raises(function() model:linearize { q = { 1, 2 } } end, { "'q' must have 3 entries" }, "a q of the wrong size")
end

do -- a model beyond the dense solves' size: a clear refusal, not an allocation of n^2 doubles
  local sys = joinery.system { gravity = { 0, -9.81 } }
  local prev = sys:add("ground", "g", { dim = 2 })
  for i = 1, 1001 do
    local b = sys:add("mass", "m" .. i, { dim = 2, m = 1, init = { x = i * 0.1, y = 0 } })
    sys:add("spring", "s" .. i, { dim = 2, k = 100, L = 0.1, a = prev.pos, b = b.pos })
    prev = b
  end
  local model = sys:compile()
  tap.raises(function() model:linearize {} end, { "linearize works with dense matrices", "2002" },
    "linearize on 2002 coordinates")
  tap.raises(function() model:equilibrium {} end, { "equilibrium works with dense matrices" },
    "equilibrium on 2002 coordinates")
end
tap.done()
