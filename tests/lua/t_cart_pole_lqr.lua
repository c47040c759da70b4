-- examples/cart_pole_lqr.lua: a cart-pole caught from 0.3 rad by LQR gains (model:linearize
-- about upright, joinery.lqr) through a controller sampled at 100 Hz.
--  * the linearization and the gains against the closed form: A, B of the cart-pole with a
--    uniform rod pinned at its end, and joinery.lqr of those;
--  * the pole settles upright: |theta - pi/2| < 1e-3 rad from t = 4.5 s to 5 s, and the cart
--    comes back to within 1e-3 m of 0;
--  * every method and rung of the ladder against an independent integration of the closed
--    loop: the nonlinear equations of motion written out below, integrated by RK4 at a fixed
--    step of period / 400 with the same zero-order hold (u_k = -K x(t_k) held over
--    [t_k, t_k+1)), the largest difference in cart.x (m) and the pole's angle (rad) over the
--    501 samples within a stated multiple of rtol (BOUNDS below, with the measured values).
local here = arg[0]:match("^(.*[/\\])") or ""
local tap = dofile(here .. "tap.lua")
local L = dofile(here .. "ladder.lua")
local joinery = require "joinery"

tap.plan(5 + 2 + #L.ladder * #L.methods)

local sys, info = dofile("examples/cart_pole_lqr.lua")
local K, lin, M, m, l, g = info.K[1], info.lin, info.M, info.m, info.l, info.g
local h, J = l / 2, m * l * l / 12
local I = m * h * h + J -- the pole's moment of inertia about its pinned end

-- ---- the linearization and the gains against the closed form ------------------------------
-- Upright, phi = theta - pi/2 small: (M + m) x'' - m h phi'' = u, -m h x'' + I phi'' = m g h phi.
tap.is(table.concat(lin.states, " "), "cart.x pole.theta der(cart.x) der(pole.theta)",
  "the states: the cart's position, the pole's angle, their rates")
local det = (M + m) * I - (m * h) ^ 2
local A = { { 0, 0, 1, 0 }, { 0, 0, 0, 1 }, { 0, (m * h) ^ 2 * g / det, 0, 0 },
  { 0, (M + m) * m * g * h / det, 0, 0 } }
local B = { { 0 }, { 0 }, { I / det }, { m * h / det } }
local worst = 0
for i = 1, 4 do
  for j = 1, 4 do worst = math.max(worst, math.abs(lin.A[i][j] - A[i][j]) / math.max(1, math.abs(A[i][j]))) end
  worst = math.max(worst, math.abs(lin.B[i][1] - B[i][1]) / math.max(1, math.abs(B[i][1])))
end
tap.ok(worst < 1e-8, string.format("A and B match the closed form to %.2g (relative)", worst))
local Kc = joinery.lqr(A, B, info.Q, info.R)[1]
local dk = 0
for j = 1, 4 do dk = math.max(dk, math.abs(K[j] - Kc[j]) / math.abs(Kc[j])) end
tap.ok(dk < 1e-7, string.format("the gains match those of the closed-form A, B to %.2g", dk))
tap.diag(string.format("K = [%.10g, %.10g, %.10g, %.10g]", K[1], K[2], K[3], K[4]))
-- The cart's position gain is -sqrt(q_x / r) exactly: x enters no equation of motion.
tap.is_near(Kc[1], -math.sqrt(info.Q[1][1] / info.R), 1e-12, "k_x = -sqrt(q_x / r)")
local Pm = info.P
tap.ok(Pm[1][1] > 0 and Pm[2][2] > 0 and Pm[1][2] == Pm[2][1], "P symmetric, positive diagonal")

-- ---- the independent integration ---------------------------------------------------------
-- (M + m) x'' - m h sin(theta) theta'' - m h cos(theta) theta'^2 = u
-- -m h sin(theta) x'' + I theta'' + m g h cos(theta) = 0
local function f(s, u)
  local x, th, xd, thd = s[1], s[2], s[3], s[4]
  local sn, cs = math.sin(th), math.cos(th)
  local a11, a12, a22 = M + m, -m * h * sn, I
  local b1, b2 = u + m * h * cs * thd * thd, -m * g * h * cs
  local d = a11 * a22 - a12 * a12
  return { xd, thd, (a22 * b1 - a12 * b2) / d, (a11 * b2 - a12 * b1) / d }
end
local function reference(substeps)
  local s = { 0, math.pi / 2 + info.theta0, 0, 0 }
  local out, dt = { { s[1], s[2] } }, info.period / substeps
  for _ = 1, math.floor(5 / info.period + 0.5) do
    local u = -(K[1] * s[1] + K[2] * (s[2] - math.pi / 2) + K[3] * s[3] + K[4] * s[4])
    for _ = 1, substeps do
      local k1 = f(s, u)
      local s2 = {}
      for i = 1, 4 do s2[i] = s[i] + dt / 2 * k1[i] end
      local k2 = f(s2, u)
      for i = 1, 4 do s2[i] = s[i] + dt / 2 * k2[i] end
      local k3 = f(s2, u)
      for i = 1, 4 do s2[i] = s[i] + dt * k3[i] end
      local k4 = f(s2, u)
      for i = 1, 4 do s[i] = s[i] + dt / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]) end
    end
    out[#out + 1] = { s[1], s[2] }
  end
  return out
end
local ref, half = reference(400), reference(200)
local own = 0
for k = 1, #ref do
  own = math.max(own, math.abs(ref[k][1] - half[k][1]), math.abs(ref[k][2] - half[k][2]))
end
-- RK4 at period / 200 differs from period / 400 by own: the finer one's error is own / 15.
tap.ok(own < 1e-12, string.format("the reference's own error: RK4 at two steps differ by %.2g", own))

-- ---- the pole settles -------------------------------------------------------------------
local res = sys:simulate {}
local late, cart = 0, 0
for k = 1, #res.t do
  if res.t[k] >= 4.5 - 1e-9 then
    late = math.max(late, math.abs(res["pole.theta"][k] - math.pi / 2))
    cart = math.max(cart, math.abs(res["cart.x"][k]))
  end
end
tap.ok(late < 1e-3 and cart < 1e-3 and #res.t == 501, string.format(
  "settled: |theta - pi/2| <= %.2g rad and |cart.x| <= %.2g m from t = 4.5 s to 5 s", late, cart))

-- ---- every method and rung against the reference -----------------------------------------
-- BOUND (in rtol): measured worst 28 rtol under auto and Adams (the same run: auto stays
-- on Adams), 24 under ERK, 498 under BDF (at the defaults; 144 at 1e-8): each of the 500
-- samples restarts the integrator at order 1, and BDF's error grows most over those
-- restarts. The reference's own error (3e-14) is far below every bound.
local BOUNDS = { auto = 150, adams = 150, erk = 150, bdf = 2000 }
for _, method in ipairs(L.methods) do
  for _, tol in ipairs(L.ladder) do
    local rtol = tol[1] or L.DEFAULT_RTOL
    local r = sys:simulate { method = method, rtol = tol[1], atol = tol[2] }
    local diff = 0
    for k = 1, #ref do
      diff = math.max(diff, math.abs(r["cart.x"][k] - ref[k][1]),
        math.abs(r["pole.theta"][k] - ref[k][2]))
    end
    tap.ok(#r.t == #ref and diff <= BOUNDS[method] * rtol, string.format(
      "%s, rtol %s: within %.3g of the reference (%.1f rtol; bound %d)", method, L.name(tol),
      diff, diff / rtol, BOUNDS[method]))
  end
end
tap.done()
