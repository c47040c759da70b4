-- Jacobi's elliptic sn(u, k) by the arithmetic-geometric mean (Abramowitz & Stegun 16.4.1),
-- and the complete elliptic integral K(k): the exact pendulum, for t_a01.lua and
-- bench/tolerances.lua. Returns { sn = sn, ellipk = ellipk }.
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

return { sn = sn, ellipk = ellipk }
