-- A quarter car over a road bump and a washboard stretch (issue 42). The body (sprung mass,
-- 250 kg) rides on the suspension, a spring (16 kN/m) and damper (1 kN s/m), over the wheel
-- (unsprung mass, 35 kg), which rides on the tyre, a spring (160 kN/m) whose lower end, the
-- road point, follows the road height y_r(t). The car starts at rest in its static
-- equilibrium on a flat road; at t = 6.3 s it crosses a 5 cm one-minus-cosine bump 0.1 s
-- long, and from t = 10 s a washboard, y_r = 1 cm sin(2 pi 2 Hz (t - 10)), until t = 20 s.
-- The body's mode is near 1.2 Hz (damping ratio 0.26), the wheel hop near 11 Hz.
--
-- The road is the model input "road" (channel input.road), written one of two ways:
--   "table"    (the default) a time table, linear between points 0.01 s apart over the
--              bump and 40 a period over the washboard: every point is a breakpoint
--   "function" a Lua function of t with its three kinks declared as breakpoints
-- The integrator stops and restarts at every breakpoint, so the 0.1 s bump is seen at the
-- defaults (no max_step needed). The input drives the model directly: the road point is
-- massless, the motor "contact" (sys:motor, position = "road") prescribing its height to be
-- y_r(t) exactly (a rheonomic row using the input's value, rate and acceleration; where the
-- table kinks the rate jumps and the engine puts the state back onto the row at the
-- restart). The tyre is a 1-D spring from the road point to the wheel's height. The row's
-- force, contact.force (= force.contact.drive), is the road's push on the tyre, the contact
-- force k_t (L_t - y_w + y_r) = (m_b + m_w) g + k_t (y_r - z_w); the road point's height is
-- contact.position (= input.road). Wheel and body are body2d parts moving vertically.
--
--   joinery run examples/quarter_car.lua                 -- the road as a time table
--   joinery run examples/quarter_car.lua -- function     -- the road as a function of t
local joinery = require "joinery"
local M = joinery.math

local form = ... or "table"
if form ~= "table" and form ~= "function" then
  error(string.format("quarter_car.lua: the road is a 'table' or a 'function', not '%s'",
    tostring(form)))
end

local g = 9.81
local m_b, m_w = 250, 35 -- body and wheel, kg
local k_s, c_s = 16000, 1000 -- suspension, N/m and N s/m
local k_t = 160000 -- tyre, N/m
local L_s, L_t = 0.5, 0.3 -- free lengths of suspension and tyre, m

local bump = { t0 = 6.3, D = 0.1, h = 0.05 } -- one-minus-cosine
local wash = { t0 = 10, f = 2, A = 0.01, per_period = 40 } -- sinusoid, table points a period
local T_END = 20

-- The road height at t (a number or the hyper-dual t joinery passes).
local function road_fn(t)
  if t >= bump.t0 and t < bump.t0 + bump.D then
    return bump.h / 2 * (1 - M.cos(2 * math.pi / bump.D * (t - bump.t0)))
  elseif t >= wash.t0 then
    return wash.A * M.sin(2 * math.pi * wash.f * (t - wash.t0))
  end
  return 0 * t
end

-- The time table: the road sampled at its points (exact numbers at the bump's ends).
local T, U = { 0 }, { 0 }
local function point(t)
  T[#T + 1] = t
  U[#U + 1] = road_fn(t)
end
for i = 0, 10 do point(bump.t0 + i * bump.D / 10) end
local n_wash = math.floor((T_END - wash.t0) * wash.f * wash.per_period + 0.5)
for i = 0, n_wash do point(wash.t0 + i / (wash.f * wash.per_period)) end

local sys = joinery.system { gravity = { 0, -g } }
if form == "table" then
  sys:input { name = "road", t = T, u = U, interp = "linear", unit = "m" }
else
  sys:input { name = "road", fn = road_fn, breakpoints = { bump.t0, bump.t0 + bump.D, wash.t0 },
    unit = "m" }
end

-- Heights of the static equilibrium on a flat road (y_r = 0).
local y_w0 = L_t - (m_b + m_w) * g / k_t
local y_b0 = y_w0 + L_s - m_b * g / k_s

-- Wheel and body move vertically (nothing moves their x or theta). The tyre is a 1-D
-- spring from the road point (its end a, a massless coordinate) to the wheel's height; the
-- motor "contact" holds that end at the road's height y_r(t) (x0 = 0, gain 1).
local wheel = sys:add("body2d", "wheel", { m = m_w, J = 1, init = { y = y_w0 } })
local body = sys:add("body2d", "body", { m = m_b, J = 10, init = { y = y_b0 } })
local tyre = sys:add("spring", "tyre", { dim = 1, k = k_t, L = L_t, b = wheel.y })
sys:motor { name = "contact", b = tyre.a, position = "road", linear = true }
sys:add("spring", "suspension", { dim = 2, k = k_s, L = L_s, a = wheel.pos, b = body.pos })
sys:add("damper", "shock", { dim = 2, c = c_s, a = wheel.pos, b = body.pos })

-- Displacements from the static equilibrium, m.
sys:channel("body_z", function(s) return s["body.y"] - y_b0 end)
sys:channel("wheel_z", function(s) return s["wheel.y"] - y_w0 end)

sys:settings { t_end = T_END, dt_out = 0.01 }
return sys
