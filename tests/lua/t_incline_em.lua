-- examples/incline_em.lua against eq. (32) of Udwadia, Kalaba & Fan (2005): a unit mass on
-- the line x2 = k x1 with the non-ideal constraint force c = (1, 2).
local tap = dofile("tests/lua/tap.lua")
tap.plan(6)
local k, g = 0.5, 9.81
local a1 = -g * k / (k * k + 1) + (1 + 2 * k) / (k * k + 1)
local a2 = g / (k * k + 1) - g + k * (1 + 2 * k) / (k * k + 1)
tap.is_near(a2, k * a1, 1e-14, "eq. (32) keeps the particle on the line (a2 = k a1)")

local res = dofile("examples/incline_em.lua"):simulate { rtol = 1e-10, atol = 1e-12 }
local n = #res.t
tap.is_near(res.t[n], 1, 1e-12, "ran to t = 1 s")
tap.is_near(res["particle.x"][n], a1 / 2, 1e-9, "x1(1 s) = a1 / 2 (eq. 32)")
tap.is_near(res["particle.y"][n], a2 / 2, 1e-9, "x2(1 s) = a2 / 2 (eq. 32)")

-- Energy balance: what the non-ideal force delivers is what the energy gains, and the
-- ideal force does no work. The power is linear in t here (constant acceleration), so
-- the trapezoidal rule over the outputs is exact up to rounding.
local work = 0
for i = 2, n do
  work = work + (res.t[i] - res.t[i - 1]) * (res["power.nonideal"][i] + res["power.nonideal"][i - 1]) / 2
end
tap.is_near(res.energy[n] - res.energy[1], work, 1e-9, "energy gained = work of the non-ideal force")
local ideal = 0
for i = 1, n do ideal = math.max(ideal, math.abs(res["power.ideal"][i])) end
tap.ok(ideal < 1e-9, "the ideal constraint force does no work (|power.ideal| < 1e-9 W)")
tap.done()
