-- The spatial chain (issue 44): N uniform rods of 1 kg, 1 m and radius 0.05 m, each a body3d
-- along its own z axis, rod 1's top end on a ball joint at the origin and every next rod's
-- top on the previous rod's bottom end (sys:ball), g = 9.81 along -z. Started at rest from a
-- helix: rod 1 turned by 1 rad about x from the hanging pose, each next rod by 0.3 rad about
-- (0, 1, 1)/sqrt 2 relative to the one before, so the chain falls and swings in 3-D.
-- bench/peers/spatial.h holds the same data for the MuJoCo and Simbody drivers. N comes from
-- the environment (bench/peers/spatial.py sets it).
local joinery = require "joinery"
local N = tonumber(os.getenv("N") or "5")
local m, L, r = 1.0, 1.0, 0.05
local sys = joinery.system { gravity = { 0, 0, -9.81 } }
local ground = sys:add("ground3d", "ground", {})

local function qmul(a, b)
  return { a[1] * b[1] - a[2] * b[2] - a[3] * b[3] - a[4] * b[4],
           a[1] * b[2] + a[2] * b[1] + a[3] * b[4] - a[4] * b[3],
           a[1] * b[3] - a[2] * b[4] + a[3] * b[1] + a[4] * b[2],
           a[1] * b[4] + a[2] * b[3] - a[3] * b[2] + a[4] * b[1] }
end
-- R(q) v = v + 2 q0 (e x v) + 2 e x (e x v)
local function rotate(q, v)
  local e = { q[2], q[3], q[4] }
  local function cross(a, b)
    return { a[2] * b[3] - a[3] * b[2], a[3] * b[1] - a[1] * b[3], a[1] * b[2] - a[2] * b[1] }
  end
  local t = cross(e, v)
  local u = cross(e, t)
  return { v[1] + 2 * q[1] * t[1] + 2 * u[1], v[2] + 2 * q[1] * t[2] + 2 * u[2],
           v[3] + 2 * q[1] * t[3] + 2 * u[3] }
end

local q = { math.cos(0.5), math.sin(0.5), 0, 0 }
local s = math.sin(0.15) / math.sqrt(2)
local qrel = { math.cos(0.15), 0, s, s }
local top, prev = { 0, 0, 0 }, ground.pos
local Ixx = m * (3 * r * r + L * L) / 12
for i = 1, N do
  if i > 1 then q = qmul(q, qrel) end
  local d = rotate(q, { 0, 0, -L / 2 })
  local rod = sys:add("body3d", "rod" .. i, {
    m = m, Ixx = Ixx, Iyy = Ixx, Izz = m * r * r / 2,
    init = { x = top[1] + d[1], y = top[2] + d[2], z = top[3] + d[3],
             q0 = q[1], q1 = q[2], q2 = q[3], q3 = q[4] },
  })
  sys:ball(prev, rod:point("top", { 0, 0, L / 2 }))
  prev = rod:point("bottom", { 0, 0, -L / 2 })
  top = { top[1] + 2 * d[1], top[2] + 2 * d[2], top[3] + 2 * d[3] }
end
return sys
