-- examples/pendulum.lua: the period against 4 sqrt(l/g) K(sin 45 deg), the rod force
-- against the seed's lambda check m g cos(theta) + m l theta'^2, and 3 m g at the bottom.
local tap = dofile("tests/lua/tap.lua")
tap.plan(6)
local m, l, g = 1, 1, 9.81

-- K(k) = pi / (2 AGM(1, sqrt(1 - k^2)))
local function ellipk(k)
  local a, b = 1, math.sqrt(1 - k * k)
  for _ = 1, 40 do a, b = (a + b) / 2, math.sqrt(a * b) end
  return math.pi / (2 * a)
end
local period = 4 * math.sqrt(l / g) * ellipk(math.sin(math.pi / 4))

local res = dofile("examples/pendulum.lua"):simulate {
  rtol = 1e-11, atol = 1e-12, t_end = 5, dt_out = 0.001 }
local t, x, vx = res.t, res["bob.x"], res["der(bob.x)"]

-- Times where x crosses 0 going negative (the bob passes the bottom leftwards), located
-- on the cubic Hermite interpolant of x and x' between outputs (error ~ h^4 x'''').
local function crossing(i)
  local h = t[i + 1] - t[i]
  local p0, p1, m0, m1 = x[i], x[i + 1], vx[i] * h, vx[i + 1] * h
  local function f(s)
    local s2, s3 = s * s, s * s * s
    return (2 * s3 - 3 * s2 + 1) * p0 + (s3 - 2 * s2 + s) * m0 + (-2 * s3 + 3 * s2) * p1
           + (s3 - s2) * m1
  end
  local lo, hi = 0, 1
  for _ = 1, 60 do
    local mid = (lo + hi) / 2
    if (f(mid) > 0) == (p0 > 0) then lo = mid else hi = mid end
  end
  return t[i] + h * (lo + hi) / 2
end
local crossings = {}
for i = 1, #t - 1 do
  if x[i] > 0 and x[i + 1] <= 0 then crossings[#crossings + 1] = crossing(i) end
end
tap.ok(#crossings >= 2, "the bob passes the bottom leftwards at least twice in 5 s")
local measured = crossings[2] - crossings[1]
tap.is_near(measured / period, 1, 1e-7, "period = 4 sqrt(l/g) K(sin 45 deg) to 1e-7 relative")
tap.diag(string.format("period %.12f s, closed form %.12f s", measured, period))

-- Rod tension vs m g cos(theta) + m l theta'^2, with cos(theta) = -y/l and
-- l^2 theta'^2 = |v|^2 on the rod.
local worst = 0
for i = 1, #t do
  local y, vy = res["bob.y"][i], res["der(bob.y)"][i]
  local want = m * g * (-y / l) + m * (vx[i] ^ 2 + vy ^ 2) / l
  worst = math.max(worst, math.abs(res["rod.tension"][i] - want) / (m * g))
end
tap.ok(worst < 1e-6, "rod tension = m g cos(theta) + m l theta'^2 to 1e-6 relative")
tap.diag(string.format("worst relative tension error: %.3g", worst))

-- At the lowest point the tension is 3 m g: the vertex of the parabola through the three
-- outputs around the largest sample (the tension is even about the bottom, so the vertex
-- error is O(h^4)).
local imax = 2
for i = 2, #t - 1 do
  if res["rod.tension"][i] > res["rod.tension"][imax] then imax = i end
end
local f0, f1, f2 = res["rod.tension"][imax - 1], res["rod.tension"][imax], res["rod.tension"][imax + 1]
local vertex = f1 - (f2 - f0) ^ 2 / (8 * (f2 - 2 * f1 + f0))
tap.is_near(vertex / (3 * m * g), 1, 1e-6, "tension at the lowest point = 3 m g")

-- The constraint holds: the residual channels stay at the tolerance level.
local rpos = 0
for i = 1, #t do rpos = math.max(rpos, res["residual.pos"][i]) end
tap.ok(rpos < 1e-8, "position residual stays below 1e-8 m over 5 s")
tap.diag(string.format("max position residual %.3g m", rpos))
local e0, drift = res.energy[1], 0
for i = 1, #t do drift = math.max(drift, math.abs(res.energy[i] - e0) / (m * g * l)) end
tap.ok(drift < 1e-8, "energy conserved to 1e-8 m g l")
tap.diag(string.format("energy drift %.3g m g l; %d steps", drift, res.stats.steps))
tap.done()
