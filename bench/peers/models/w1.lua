-- W1: the N-link chain. N point masses of 1 kg at the ends of massless 1 m links pinned in
-- series to the origin, horizontal along +x at rest, g = 9.81 m/s^2 along -y. N and KIND
-- (rod: `mass` + `rod` parts; pend: chained `pendulum` parts, the seeds' composition, with
-- massless pivot coordinates) come from the environment: bench/peers/run.py sets them.
local joinery = require "joinery"
local N = tonumber(os.getenv("N") or "10")
local kind = os.getenv("KIND") or "rod"
local sys = joinery.system { gravity = { 0, -9.81 } }
local prev = sys:add("ground", "ground", { dim = 2 }).pos
for i = 1, N do
  if kind == "rod" then
    local b = sys:add("mass", "m" .. i, { dim = 2, m = 1, init = { x = i, y = 0 } })
    sys:add("rod", "r" .. i, { dim = 2, L = 1, a = prev, b = b.pos })
    prev = b.pos
  else
    local p = sys:add("pendulum", "p" .. i,
      { m = 1, l = 1, init = { theta = math.pi / 2 }, pivot = prev })
    prev = p.bob
  end
end
return sys
