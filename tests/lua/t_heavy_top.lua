-- examples/heavy_top.lua: a symmetric heavy top on a ball joint, started in steady
-- precession. Conserved over 10 s to 1e-9 relative: energy, the vertical angular momentum
-- about the tip and the spin about the symmetry axis. Steady precession: the tilt stays
-- at theta0 to 1e-8 rad, the centre of mass turns about the vertical at exactly the
-- closed-form rate Omega, and the ball joint carries the weight plus the centripetal force.
local tap = dofile("tests/lua/tap.lua")
tap.plan(10)

local sys, top = dofile("examples/heavy_top.lua")
local model = sys:compile()
tap.ok(model:num_coords() == 7 and model:num_rows() == 4,
  string.format("the marker is eliminated: 7 coordinates (x, y, z, q0..q3), 4 rows (norm, ball); got %d, %d",
    model:num_coords(), model:num_rows()))

local res = model:simulate {}
local n = #res.t
tap.ok(math.abs(res.t[n] - 10) < 1e-12, "runs to t = 10 s")
tap.diag(string.format("%d steps, %d restarts, %.2f s (erk, rtol 1e-10, atol 1e-11, projection)",
  res.stats.steps, res.stats.restarts, res.seconds or -1))

local m, l, g, Omega = top.m, top.l, top.g, top.Omega
local function col(name, i) return res[name][i] end
-- Angular momentum about the tip (at the origin): about the centre of mass, plus m x X v.
local function Lz(i)
  return col("top.Lz", i) + m * (col("top.x", i) * col("der(top.y)", i)
    - col("top.y", i) * col("der(top.x)", i))
end
-- Tilt: the angle between the symmetry axis R(q) e_z and the vertical, R_33 = q0^2 - q1^2 - q2^2 + q3^2.
local function tilt(i)
  local q0, q1, q2, q3 = col("top.q0", i), col("top.q1", i), col("top.q2", i), col("top.q3", i)
  return math.acos((q0 * q0 - q1 * q1 - q2 * q2 + q3 * q3) / (q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3))
end

local e0, L0, w0 = res.energy[1], Lz(1), col("top.omega_z", 1)
local de, dl, dw, dtilt, dphi, dforce, dnorm = 0, 0, 0, 0, 0, 0, 0
local az0, az_prev, turns = math.atan(col("top.y", 1), col("top.x", 1)), nil, 0
for i = 1, n do
  de = math.max(de, math.abs(res.energy[i] - e0) / math.abs(e0))
  dl = math.max(dl, math.abs(Lz(i) - L0) / math.abs(L0))
  dw = math.max(dw, math.abs(col("top.omega_z", i) - w0) / math.abs(w0))
  dtilt = math.max(dtilt, math.abs(tilt(i) - top.theta0))
  -- precession angle of the centre of mass, unwrapped
  local az = math.atan(col("top.y", i), col("top.x", i))
  if az_prev and az - az_prev < -math.pi then turns = turns + 1 end
  if az_prev and az - az_prev > math.pi then turns = turns - 1 end
  az_prev = az
  dphi = math.max(dphi, math.abs(az + 2 * math.pi * turns - az0 - Omega * res.t[i]))
  -- The ball's force on the tip (the glue's first terminal): the weight, m g up, plus the
  -- centripetal force -m Omega^2 (x, y) of the centre of mass going round its circle.
  local want = { -m * Omega ^ 2 * col("top.x", i), -m * Omega ^ 2 * col("top.y", i), m * g }
  for k, c in ipairs { "x", "y", "z" } do
    dforce = math.max(dforce, math.abs(col("force.ball." .. c, i) - want[k]) / (m * g))
  end
  local q0, q1, q2, q3 = col("top.q0", i), col("top.q1", i), col("top.q2", i), col("top.q3", i)
  dnorm = math.max(dnorm, math.abs(q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3 - 1))
end

tap.ok(de < 1e-9, string.format("energy conserved to 1e-9 relative over 10 s (%.3g, E0 = %.6g J)", de, e0))
tap.ok(dl < 1e-9, string.format("vertical angular momentum about the tip conserved to 1e-9 relative (%.3g, L0 = %.6g kg m^2/s)", dl, L0))
tap.ok(dw < 1e-9, string.format("spin about the symmetry axis conserved to 1e-9 relative (%.3g, w3 = %.6g rad/s)", dw, w0))
tap.ok(math.abs(w0 - top.w3) < 1e-12 * top.w3, "the initial spin is the one asked for")
tap.ok(dtilt < 1e-8, string.format("steady precession: the tilt stays at %.6g rad to 1e-8 (%.3g)", top.theta0, dtilt))
tap.ok(dphi < 1e-8 and turns >= 3, string.format(
  "the centre of mass precesses at the closed-form rate Omega = %.9g rad/s (%d turns; angle error %.3g rad)",
  Omega, turns, dphi))
tap.ok(dforce < 1e-8, string.format("the ball carries m g plus the centripetal force (%.3g of m g)", dforce))
tap.ok(dnorm < 1e-10, string.format("the quaternion stays unit to 1e-10 (%.3g)", dnorm))
tap.done()
