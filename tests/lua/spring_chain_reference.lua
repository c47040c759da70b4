-- The exact modal solution of examples/spring_chain.lua (the seed's (1.211)-(1.212)), for
-- t_spring_chain.lua and bench/tolerances.lua: returns exact(t) -> x1, x2 (the two
-- springs' extensions, left.x and right.x) and the parameters { m1, k1, m2, k2, x0 }.
local p = { m1 = 1, k1 = 100, m2 = 2, k2 = 50, x0 = 0.1 }
local m1, k1, m2, k2, x0 = p.m1, p.k1, p.m2, p.k2, p.x0
-- K phi = w^2 M phi with M = [[m1+m2, m2], [m2, m2]], K = diag(k1, k2)
local a, b, c = m1 * m2, -(k1 * m2 + k2 * (m1 + m2)), k1 * k2
local disc = math.sqrt(b * b - 4 * a * c)
local s = { (-b - disc) / (2 * a), (-b + disc) / (2 * a) }
local shape = {}
for i = 1, 2 do shape[i] = (k1 - s[i] * (m1 + m2)) / (s[i] * m2) end
local c2 = -x0 * shape[1] / (shape[2] - shape[1])
local c1 = x0 - c2
local w1, w2 = math.sqrt(s[1]), math.sqrt(s[2])

local function exact(t)
  return c1 * math.cos(w1 * t) + c2 * math.cos(w2 * t),
         c1 * shape[1] * math.cos(w1 * t) + c2 * shape[2] * math.cos(w2 * t)
end

return exact, p
