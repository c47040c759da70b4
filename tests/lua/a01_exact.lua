-- IFToMM A01's exact solution, for t_a01.lua and bench/methods.lua: the simple pendulum
-- (L = 1 m, g = 9.81 m/s^2) released at rest from the horizontal. Returns exact(t) → x, y
-- of the bob (pivot at the origin), by Jacobi's sn from the arithmetic-geometric mean
-- (Abramowitz & Stegun 16.4.1).
local g, L = 9.81, 1

local function sn(u, k)
  local a, c, n = { 1 }, { k }, 1
  local b = math.sqrt(1 - k * k)
  while math.abs(c[n]) > 1e-16 and n < 40 do
    a[n + 1], c[n + 1], b = (a[n] + b) / 2, (a[n] - b) / 2, math.sqrt(a[n] * b)
    n = n + 1
  end
  local phi = 2 ^ (n - 1) * a[n] * u
  for i = n, 2, -1 do phi = (phi + math.asin(c[i] / a[i] * math.sin(phi))) / 2 end
  return math.sin(phi)
end
local function ellipk(k)
  local a, b = 1, math.sqrt(1 - k * k)
  for _ = 1, 40 do a, b = (a + b) / 2, math.sqrt(a * b) end
  return math.pi / (2 * a)
end
-- From rest at theta0 = pi/2: sin(theta / 2) = k sn(K - omega t, k), k = sin(theta0 / 2).
local k = math.sin(math.pi / 4)
local K, omega = ellipk(k), math.sqrt(g / L)
return function(t)
  local theta = 2 * math.asin(k * sn(K - omega * t, k))
  return L * math.sin(theta), -L * math.cos(theta)
end
