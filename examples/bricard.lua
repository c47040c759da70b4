-- The Bricard linkage (IFToMM multibody benchmark A04): five bars of 1 m joined in a closed
-- loop by six hinges whose axes turn by 90 degrees from one hinge to the next.
--
--   ground pivot O = (0, 0, 0), axis y      bar 1: O -> (1, 0, 0)
--   hinge at (1, 0, 0), axis z              bar 2: -> (1, -1, 0)   (its end is P3)
--   hinge at (1, -1, 0), axis x             bar 3: -> (1, -1, 1)
--   hinge at (1, -1, 1), axis y             bar 4: -> (0, -1, 1)
--   hinge at (0, -1, 1), axis z             bar 5: -> (0, 0, 1) = Q
--   ground pivot Q = (0, 0, 1), axis x
--
-- Each bar is 1 kg, a 1 m x 0.1 m x 0.1 m brick (uniform box inertia), a body3d with its
-- centre of mass at the bar's middle; the hinges are hinge3d parts. Released at rest under
-- gravity along -y, it swings.
--
-- Grubler's count says 0 degrees of freedom (5 bodies x 6 - 6 hinges x 5), but Bricard's
-- geometry has 1: the 35 constraint rows (30 hinge rows, 5 quaternion norms) have rank 34
-- at every configuration of the motion. The compile report names the dependent row; the
-- acceleration solve leaves it out, and keeps watching that it stays implied by the others
-- (docs/numerics.md, "Redundant constraints"). No method or tolerance is set here: it runs
-- at the defaults. tests/lua/t_bricard.lua checks the energy and P3 against an independent
-- integration in the six hinge angles.
--
--   joinery run examples/bricard.lua
local joinery = require "joinery"

local bar = { m = 1.0, L = 1.0, w = 0.1 } -- kg, m (length), m (side of the square section)
local g = 9.81

-- Uniform brick: I = m (b^2 + c^2) / 12 about each axis; the bar's own axis is the thin one.
local I_axial = bar.m * (bar.w ^ 2 + bar.w ^ 2) / 12
local I_transverse = bar.m * (bar.L ^ 2 + bar.w ^ 2) / 12

-- The loop's corners and the hinge axes, in order: corner k is where bar k ends.
local corners = { { 0, 0, 0 }, { 1, 0, 0 }, { 1, -1, 0 }, { 1, -1, 1 }, { 0, -1, 1 }, { 0, 0, 1 } }
local axes = { { 0, 1, 0 }, { 0, 0, 1 }, { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 }, { 1, 0, 0 } }

local sys = joinery.system { gravity = { 0, -g, 0 } }
local ground = sys:add("ground3d", "ground", {})

local bars, centres = {}, {}
for k = 1, 5 do
  local a, b = corners[k], corners[k + 1]
  local c = { (a[1] + b[1]) / 2, (a[2] + b[2]) / 2, (a[3] + b[3]) / 2 }
  local along = { math.abs(b[1] - a[1]), math.abs(b[2] - a[2]), math.abs(b[3] - a[3]) }
  local I = {}
  for i = 1, 3 do I[i] = along[i] > 0 and I_axial or I_transverse end
  centres[k] = c
  -- body axes = space axes at the start (identity orientation)
  bars[k] = sys:add("body3d", "bar" .. k, {
    m = bar.m, Ixx = I[1], Iyy = I[2], Izz = I[3],
    init = { x = c[1], y = c[2], z = c[3], q0 = 1, q1 = 0, q2 = 0, q3 = 0 },
  })
end

-- Hinge k joins frame a (the ground or bar k - 1) and frame b (bar k or the ground) at
-- corner k; its point is given from each frame's origin, its axis in each frame's axes
-- (the same vector, since every frame starts at the identity).
local function hinge(k, frame_a, origin_a, frame_b, origin_b)
  local p, n = corners[k], axes[k]
  sys:add("hinge3d", "h" .. k, {
    rax = p[1] - origin_a[1], ray = p[2] - origin_a[2], raz = p[3] - origin_a[3],
    rbx = p[1] - origin_b[1], rby = p[2] - origin_b[2], rbz = p[3] - origin_b[3],
    nax = n[1], nay = n[2], naz = n[3], nbx = n[1], nby = n[2], nbz = n[3],
    a = frame_a, b = frame_b,
  })
end
local origin = { 0, 0, 0 }
hinge(1, ground.frame, origin, bars[1].frame, centres[1])
for k = 2, 5 do hinge(k, bars[k - 1].frame, centres[k - 1], bars[k].frame, centres[k]) end
hinge(6, bars[5].frame, centres[5], ground.frame, origin)

-- P3, the end (1, -1, 0) of bar 2: x + R(q) r with r = (0, -L/2, 0) in bar 2's axes, and
-- R(q) r = (q0^2 - e.e) r + 2 (e.r) e + 2 q0 e x r.
local function bar2_end(s)
  local q0, e1, e2, e3 = s["bar2.q0"], s["bar2.q1"], s["bar2.q2"], s["bar2.q3"]
  local r2 = -bar.L / 2
  local c, d = q0 * q0 - (e1 * e1 + e2 * e2 + e3 * e3), 2 * e2 * r2 -- d = 2 (e . r)
  return s["bar2.x"] + d * e1 + 2 * q0 * (-e3 * r2),
         s["bar2.y"] + c * r2 + d * e2,
         s["bar2.z"] + d * e3 + 2 * q0 * (e1 * r2)
end
sys:channel("P3.x", function(s) return (bar2_end(s)) end)
sys:channel("P3.y", function(s) return select(2, bar2_end(s)) end)
sys:channel("P3.z", function(s) return select(3, bar2_end(s)) end)

sys:settings { t_end = 10 }
return sys, { bar = bar, g = g, corners = corners, axes = axes }
