-- examples/tracking.lua: the constraint force is the control torque of exact tracking,
-- tau = m l^2 theta_d'' + m g l sin(theta_d), to 1e-8 N m over 10 s, and the pendulum
-- follows theta_d = (pi/4) cos(2 t).
local tap = dofile("tests/lua/tap.lua")
tap.plan(5)
local m, l, g = 1, 1, 9.81
local model = dofile("examples/tracking.lua"):compile()
local q, v = model:initial()
local names = model:coords()
local theta_dot0
for i, name in ipairs(names) do
  if name == "pend.theta" then theta_dot0 = v[i] end
end
tap.is_near(theta_dot0, 0, 1e-15, "initial theta' = theta_d'(0) = 0 (projected)")
local res = model:simulate { columns = "*" } -- force.track.t1: an eliminated glue's
local n = #res.t
local torque, track, glue = 0, 0, 0
for i = 1, n do
  local t = res.t[i]
  local th_d, th_dd = math.pi / 4 * math.cos(2 * t), -math.pi * math.cos(2 * t)
  local tau = m * l * l * th_dd + m * g * l * math.sin(th_d)
  torque = math.max(torque, math.abs(res["force.track.r1"][i] - tau))
  track = math.max(track, math.abs(res["pend.theta"][i] - th_d))
  glue = math.max(glue, math.abs(res["force.track.t1"][i] - res["force.track.r1"][i]))
end
tap.ok(res.t[n] == 10, "ran 10 s")
-- 1e-8 N m: the issue's bound; the torque is computed at the integrated state, off the
-- trajectory by the integration error (~1e-11 rad at rtol 1e-11) times m g l.
tap.ok(torque < 1e-8, string.format("force.track.r1 = m l^2 theta_d'' + m g l sin(theta_d): "
  .. "max error %.2e N m", torque))
tap.ok(track < 1e-9, string.format("theta follows theta_d: max error %.2e rad", track))
tap.ok(glue < 1e-12, "the glue to pend.theta carries the same torque (force.track.t1)")
tap.done()
