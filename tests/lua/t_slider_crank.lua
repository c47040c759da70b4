-- examples/slider_crank.lua: a slider-crank driven by a motor torque that is a Lua function
-- of the state. The piston follows the exact kinematics x = r cos(theta) + sqrt(l^2 -
-- r^2 sin^2(theta)); with no friction the kinetic energy grows by exactly the motor's work
-- (its power channel integrated by Simpson's rule); the crank approaches the no-load speed.
local tap = dofile("tests/lua/tap.lua")
tap.plan(7)
local r, l, omega_0 = 0.1, 0.3, 20

local sys = dofile("examples/slider_crank.lua")
local model = sys:compile()
tap.ok(model:num_coords() == 9 and model:num_rows() == 8,
  "3 bodies, 5 markers, 3 pins, a slider and the Lua motor: 9 coordinates, 8 rows (" .. tostring(model) .. ")")
-- Baumgarte drift control: with Adams, projection restarts the integrator at every output,
-- which costs ~3e-7 of energy accuracy here (docs/numerics.md); the residuals stay ~1e-9.
-- Adams with Baumgarte, at which the work balance's 1e-7 was measured (BDF damps 1.5e-7).
local res = model:simulate { method = "adams", t_end = 5, dt_out = 0.001, drift = "baumgarte" }
local n, kin = res.rows, 0
for i = 1, n do
  local th = res["crank.theta"][i]
  local want = r * math.cos(th) + math.sqrt(l * l - (r * math.sin(th)) ^ 2)
  kin = math.max(kin, math.abs(res["piston.x"][i] - want), math.abs(res["cylinder.slide"][i] - want))
end
tap.ok(kin < 1e-8, string.format("piston x = r cos(theta) + sqrt(l^2 - r^2 sin^2 theta) to 1e-8 m (worst %.2g m)", kin))
tap.ok(math.abs(res["piston.theta"][n]) < 1e-12 and math.abs(res["piston.y"][n]) < 1e-12,
  "the slider keeps the piston on its axis, unturned")

-- Work of the motor, Simpson's rule over an even number of intervals.
local h, m = res.t[2] - res.t[1], n - 1
if m % 2 == 1 then m = m - 1 end
local work = res["motor.power"][1] + res["motor.power"][m + 1]
for i = 2, m do work = work + (i % 2 == 0 and 4 or 2) * res["motor.power"][i] end
work = work * h / 3
local gain = res.kinetic[m + 1] - res.kinetic[1]
tap.is_near(gain / work, 1, 1e-7, "kinetic energy gained = the motor's work")
tap.diag(string.format("work %.9f J, kinetic energy gained %.9f J", work, gain))
local worst = 0
for k = 1, n do worst = math.max(worst, res["residual.pos"][k]) end
tap.ok(worst < 1e-8, string.format("position residual below 1e-8 m (worst %.2g)", worst))
tap.ok(res.energy[n] > res.energy[1] and res["motor.power"][n] > 0, "the motor keeps driving")

-- Over the last revolution the crank's mean speed is near omega_0: a little below, because
-- the speed fluctuates with the mechanism's inertia and the motor's net work over a
-- revolution vanishes when mean(omega) = mean(omega^2) / omega_0.
local th_end, t_end = res["crank.theta"][n], res.t[n]
local i = n
while i > 1 and res["crank.theta"][i] > th_end - 2 * math.pi do i = i - 1 end
local mean = (th_end - res["crank.theta"][i]) / (t_end - res.t[i])
tap.ok(mean < omega_0 and mean > 0.95 * omega_0, string.format("mean crank speed %.4f rad/s, no-load speed %g", mean, omega_0))
tap.done()
