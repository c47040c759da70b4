-- IFToMM A01's exact solution, for t_a01.lua and bench/methods.lua: the simple pendulum
-- (L = 1 m, g = 9.81 m/s^2) released at rest from the horizontal. Returns exact(t) → x, y
-- of the bob (pivot at the origin).
local elliptic = dofile("tests/lua/elliptic.lua")
local g, L = 9.81, 1
-- From rest at theta0 = pi/2: sin(theta / 2) = k sn(K - omega t, k), k = sin(theta0 / 2).
local k = math.sin(math.pi / 4)
local K, omega = elliptic.ellipk(k), math.sqrt(g / L)
return function(t)
  local theta = 2 * math.asin(k * elliptic.sn(K - omega * t, k))
  return L * math.sin(theta), -L * math.cos(theta)
end
