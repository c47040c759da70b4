-- model:equilibrium (docs/control.md, "Operating points"), checked by physics:
--  * a hanging chain of masses and springs against the closed form (each spring stretched by
--    the weight below it), for two sets of sizes and signs of gravity;
--  * a compound pendulum held by a torque input u at the angle where m g (L/2) cos(theta) = u;
--  * a cart on a spring pushed by a force input, its pole hanging or held at an angle: x = u/k;
--  * a redundant linkage and its non-redundant twin reach the same equilibrium;
--  * not isolated (the free direction named), no equilibrium (the acceleration left named),
--    bad names and options: each a clear error.
-- Tolerances: the solve stops when the acceleration left is below tol = 1e-9 (the default);
-- the positions then sit within tol / stiffness of the closed form, 1e-9 m here, and the
-- Newton iteration usually ends far below that (rounding, ~1e-15).
local tap = dofile("tests/lua/tap.lua")
local joinery = require "joinery"

local function index(model)
  local idx = {}
  for i, name in ipairs(model:coords()) do idx[name] = i end
  return idx
end

-- A vertical chain: ground at 0, masses m_i hung below it on springs k_i of rest lengths L_i
-- (each spring from the mass up to the one above: a 1-D spring's length is signed, b - a),
-- gravity g along x. Spring i carries the weight of masses i .. N, so
-- x_i = x_(i-1) - L_i + g sum_(j >= i) m_j / k_i (g < 0: stretched; g > 0: pushed up).
for _, p in ipairs { { g = -9.81, m = { 1, 0.5, 2 }, k = { 100, 40, 250 }, L = { 0.3, 0.2, 0.5 } },
                     { g = 3.7, m = { 0.2, 3 }, k = { 7, 1000 }, L = { 1, 0.1 } } } do
  local sys = joinery.system { gravity = { p.g } }
  local prev = sys:add("ground", "top", { dim = 1, x = 0 }).pos
  for i = 1, #p.m do
    local b = sys:add("mass", "m" .. i, { dim = 1, m = p.m[i], init = { x = -i } })
    sys:add("spring", "s" .. i, { dim = 1, k = p.k[i], L = p.L[i], a = b.pos, b = prev })
    prev = b.pos
  end
  local model = sys:compile()
  local q, rep = model:equilibrium {}
  local idx, x, worst = index(model), 0, 0
  for i = 1, #p.m do
    local below = 0
    for j = i, #p.m do below = below + p.m[j] end
    x = x - p.L[i] + p.g * below / p.k[i]
    worst = math.max(worst, math.abs(q[idx["m" .. i .. ".x"]] - x))
  end
  tap.ok(worst < 1e-9, string.format("a chain of %d masses hangs where the closed form says", #p.m))
  tap.diag(string.format("off by %.3g m after %d iterations, acceleration left %.3g, rcond %.3g",
    worst, rep.iterations, rep.residual, rep.rcond))
  tap.ok(rep.residual <= 1e-9 and rep.nfree == #p.m, "the report gives the residual and free count")
end

-- A compound pendulum (a rod of mass m, length L pinned at one end; theta from the x axis)
-- held by a torque u from an actuator: equilibrium where u = m g (L/2) cos(theta), theta =
-- -acos(u / (m g L/2)) on the hanging side. The pin's rows make x, y dependent on theta.
local m, L, g = 1.3, 0.9, 9.81
local function pendulum()
  local sys = joinery.system { gravity = { 0, -g } }
  local pivot = sys:add("ground", "pivot", { dim = 2, x = 0, y = 0 })
  local th = -math.pi / 2
  local rod = sys:add("body2d", "rod", { m = m, J = m * L * L / 12,
    init = { x = L / 2 * math.cos(th), y = L / 2 * math.sin(th), theta = th } })
  sys:pin(rod:point("top", { -L / 2, 0 }), pivot.pos, "hinge")
  sys:input { name = "u", value = 0, unit = "N m" }
  sys:add("actuator", "drive", { mode = 2, input = 0, coord = rod.theta })
  return sys:compile()
end
local pend = pendulum()
local pidx = index(pend)
for _, frac in ipairs { 0.3, -0.65 } do
  local u = frac * m * g * L / 2
  local q = pend:equilibrium { inputs = { u = u } }
  local want = -math.acos(frac)
  tap.is_near(q[pidx["rod.theta"]], want, 1e-9,
    string.format("a torque u = %.3g N m holds the pendulum at -acos(u / (m g L/2))", u))
  tap.is_near(q[pidx["rod.x"]], L / 2 * math.cos(want), 1e-9, "its centre follows the pin")
end
tap.raises(function() pend:equilibrium { inputs = { u = 1.2 * m * g * L / 2 } } end, { "no equilibrium found", "rod.theta", "still" }, "a torque larger than gravity can hold: no equilibrium, the acceleration named")

-- A cart on a spring (k, to the origin) on a rail, pushed by a force input u, with a pole:
-- horizontally only the spring and u act on the whole, so x = u / k whether the pole hangs
-- or is held at an angle (holding pole.theta leaves it exactly there).
local k = 40
local function cart()
  local sys = joinery.system { gravity = { 0, -g } }
  local o = sys:add("ground", "o", { dim = 2 })
  local c = sys:add("mass", "cart", { dim = 2, m = 2 })
  sys:add("guide", "rail", { dim = 2, nx = 0, ny = 1, d = 0, pos = c.pos })
  sys:add("spring", "s", { dim = 2, k = k, L = 0, a = o.pos, b = c.pos })
  sys:add("pendulum", "pole", { m = 0.5, l = 0.8, init = { theta = 0.2 }, pivot = c.pos })
  sys:input { name = "u", value = 0, unit = "N" }
  sys:add("actuator", "push", { mode = 2, input = 0, coord = c.x })
  return sys:compile()
end
local cp = cart()
local cidx = index(cp)
local q = cp:equilibrium { inputs = { u = 3 } }
tap.is_near(q[cidx["cart.x"]], 3 / k, 1e-10, "the pushed cart sits at u / k")
tap.is_near(q[cidx["pole.theta"]], 0, 1e-9, "its pole hangs")
local guess = { table.unpack(q) }
guess[cidx["pole.theta"]] = 0.3
local held, rep = cp:equilibrium { q = guess, hold = { "pole.theta" }, inputs = { u = -5 } }
tap.is_near(held[cidx["cart.x"]], -5 / k, 1e-10, "with the pole held at 0.3 rad: x = u / k")
tap.is(held[cidx["pole.theta"]], 0.3, "the held coordinate keeps its value exactly")
tap.is(rep.nfree, 1, "one free coordinate is left")

-- Redundant rows (the three-rocker linkage of examples/four_bar_redundant.lua, 6 rows of
-- rank 5) against its twin without the rod BC: the same equilibrium, 1e-9 m.
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
  local qr, qt = linkage(true):equilibrium {}, linkage(false):equilibrium {}
  local worst = 0
  for i = 1, #qr do worst = math.max(worst, math.abs(qr[i] - qt[i])) end
  tap.ok(worst < 1e-9, "the redundant linkage rests where its twin does")
  tap.diag(string.format("differ by %.3g m", worst))
end

-- Not isolated: nothing holds the cart without its spring; two masses joined by a spring,
-- free in a line, may sit anywhere together.
do
  local sys = joinery.system { gravity = { 0, -g } }
  local c = sys:add("mass", "cart", { dim = 2, m = 2 })
  sys:add("guide", "rail", { dim = 2, nx = 0, ny = 1, d = 0, pos = c.pos })
  sys:add("pendulum", "pole", { m = 0.5, l = 0.8, init = { theta = 0.2 }, pivot = c.pos })
  local free = sys:compile()
  tap.raises(function() free:equilibrium {} end, { "not isolated", "(cart.x)", "hold it" }, "a cart nothing holds: the free coordinate named")
  local two = joinery.system { gravity = { 0 } }
  local a = two:add("mass", "a", { dim = 1, m = 1, init = { x = 0 } })
  local b = two:add("mass", "b", { dim = 1, m = 3, init = { x = 2 } })
  two:add("spring", "s", { dim = 1, k = 5, L = 1, a = a.pos, b = b.pos })
  local pair = two:compile()
  tap.raises(function() pair:equilibrium {} end, { "not isolated", "a.x", "b.x" }, "a free pair: the free direction named by both coordinates")
  local q2 = pair:equilibrium { hold = { "a.x" } }
  -- the acceleration left (< 1e-9) over k / m = 5/3: within 1e-9 m
  tap.is_near(q2[2] - q2[1], 1, 1e-9, "holding one, the spring rests at its length")
end

-- Bad names and options.
tap.raises(function() cp:equilibrium { hold = { "cart.xx" } } end, { "unknown coordinate 'cart.xx'", "did you mean 'cart.x'" }, "an unknown held coordinate")
tap.raises(function() cp:equilibrium { hold = { "cart.x", "cart.x" } } end, { "'cart.x' twice" }, "a coordinate held twice")
tap.raises(function() cp:equilibrium { inputs = { uu = 1 } } end, { "unknown input 'uu'", "did you mean 'u'" }, "an unknown input")
tap.raises(function() cp:equilibrium { hodl = {} } end, { "unknown model:equilibrium option 'hodl'", "did you mean 'hold'" }, "an unknown option")
tap.raises(function() cp:equilibrium { tol = -1 } end, { "tol must be a positive number" }, "a tolerance <= 0")
tap.raises(function() cp:equilibrium { inputs = { u = 0 / 0 } } end, { "input 'u'" }, "a NaN input")
tap.done()
