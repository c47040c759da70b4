-- examples/crank_motor.lua: a crank-rocker driven at 2 pi rad/s by a pin_motor2d in position
-- mode. The crank angle is pi/2 + omega t exactly; the drive torque (the row's multiplier,
-- channel drive.torque) does the work that changes the mechanism's energy: the integral of
-- drive.power = torque * omega from 0 to t (Simpson over output rows 0.0025 s apart)
-- equals E(t) - E(0) at every even row, under every method; over each whole turn the
-- energy and the crank angle come back and the net work is zero.
local tap = dofile("tests/lua/tap.lua")
tap.plan(8)

local omega = 2 * math.pi
for _, method in ipairs { "bdf", "adams", "erk", "auto" } do
  local sys = dofile("examples/crank_motor.lua")
  local res = sys:simulate { method = method }
  local n, h = #res.t, res.t[2] - res.t[1]
  local P, E = res["drive.power"], res.energy
  local work, worst, span = 0, 0, 0
  for i = 3, n, 2 do
    work = work + h / 3 * (P[i - 2] + 4 * P[i - 1] + P[i])
    worst = math.max(worst, math.abs(work - (E[i] - E[1])))
    span = math.max(span, math.abs(E[i] - E[1]))
  end
  local angle = 0
  for i = 1, n do
    angle = math.max(angle, math.abs(res["crank.theta"][i] - (math.pi / 2 + omega * res.t[i])))
  end
  -- What is left is Simpson's own error: 1.6e-6 J at h = 0.005 s, 1.03e-7 J at 0.0025 s,
  -- 6.4e-9 J at 0.00125 s (16 times less each halving, as h^4), whatever the method; the
  -- bound is 2e-8 of the energy's swing (2.8e-7 J).
  tap.ok(worst < 2e-8 * span and angle < 1e-12, string.format(
    "%s: integral of torque * omega = E(t) - E(0) to %.2e J (energy swing %.3f J); crank "
    .. "angle = pi/2 + omega t to %.1e rad", method, worst, span, angle))
  if method == "auto" then
    -- a whole turn later (row 401, t = 1 s) the state and the energy repeat
    local i = 401
    tap.ok(math.abs(res.t[i] - 1) < 1e-12 and math.abs(E[i] - E[1]) < 1e-9 * span,
      string.format("after one turn the energy repeats: E(1) - E(0) = %.2e J", E[i] - E[1]))
    local peak, where = 0, 0
    for k = 1, n do
      if math.abs(res["drive.torque"][k]) > peak then peak, where = math.abs(res["drive.torque"][k]), res.t[k] end
    end
    tap.diag(string.format("peak drive torque %.6f N m at t = %.4f s; E swing %.6f J", peak, where, span))
    tap.ok(peak > 1 and peak < 100, string.format("the peak drive torque %.4f N m is finite", peak))
    local t1 = res["drive.torque"][1]
    tap.ok(math.abs(t1 - 1.1520129659871) < 1e-8,
      string.format("drive.torque at t = 0 = %.12f N m (the reference value, 1e-8)", t1))
  end
end
-- joinery describe lists the motor's channels
local model = dofile("examples/crank_motor.lua"):compile()
local names = {}
for _, c in ipairs(model:channels()) do names[c] = true end
tap.ok(names["drive.torque"] and names["drive.power"] and names["force.drive.drive"],
  "channels drive.torque, drive.power and force.drive.drive exist")
tap.done()
