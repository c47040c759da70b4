-- The models of bench/tolerances.lua and their references: each example with a closed form
-- or an independent integration, the same one its test checks it against (the test named in
-- each entry), computed here once. An entry:
--   name, path     the example
--   t_end, dt_out  the span run (shortened from the example's where noted) and the rows
--   reference      what the error is measured against, in words
--   floor          the reference's own error bound (0: a closed form, exact to rounding)
--   error(res)     the global error of a run, in the unit named by `unit`
-- Errors are absolute, in coordinates (m or rad) of size about 1, except the spring chain
-- (amplitudes 0.1 m); velocities are not compared.
local elliptic = dofile("tests/lua/elliptic.lua")

-- Classical Runge-Kutta with a fixed step h from t = 0 for y' = f(t, y), y a list: the
-- states at t = 0, dt_out, 2 dt_out, ..., t_end (dt_out a multiple of h).
local function rk4(f, y0, t_end, h, dt_out)
  local function ahead(y, dt, k)
    local out = {}
    for i = 1, #y do out[i] = y[i] + dt * k[i] end
    return out
  end
  local y, every = { table.unpack(y0) }, math.floor(dt_out / h + 0.5)
  local samples = { { table.unpack(y) } }
  for step = 0, math.floor(t_end / h + 0.5) - 1 do
    local t = step * h
    local k1 = f(t, y)
    local k2 = f(t + h / 2, ahead(y, h / 2, k1))
    local k3 = f(t + h / 2, ahead(y, h / 2, k2))
    local k4 = f(t + h, ahead(y, h, k3))
    for i = 1, #y do y[i] = y[i] + h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]) end
    if (step + 1) % every == 0 then samples[#samples + 1] = { table.unpack(y) } end
  end
  return samples
end

-- The samples of rk4 at steps h and h / 2: Richardson's extrapolation (the h^4 term
-- removed), and the largest error of the h / 2 answer as a bound on the extrapolation's.
local function richardson(coarse, fine)
  local best, floor = {}, 0
  for j, y in ipairs(fine) do
    best[j] = {}
    for i = 1, #y do
      best[j][i] = y[i] + (y[i] - coarse[j][i]) / 15
      floor = math.max(floor, math.abs(y[i] - coarse[j][i]) / 15)
    end
  end
  return best, floor
end

-- The largest of fn(i) over the rows of a run.
local function worst_row(res, fn)
  local worst = 0
  for i = 1, res.rows do worst = math.max(worst, fn(i)) end
  return worst
end

-- The largest difference between columns of a run and the samples of a reference (row i
-- against sample i; the first `#columns` components of each sample).
local function worst_sample(res, columns, want)
  assert(res.rows == #want, "the rows of a run and its reference's samples differ")
  return worst_row(res, function(i)
    local worst = 0
    for c, column in ipairs(columns) do
      worst = math.max(worst, math.abs(res[column][i] - want[i][c]))
    end
    return worst
  end)
end

local models = {}

-- IFToMM A01 (t_a01.lua): sin(theta / 2) = k sn(K - omega t, k), from rest at pi / 2.
do
  local g, k = 9.81, math.sin(math.pi / 4)
  local K, omega = elliptic.ellipk(k), math.sqrt(g)
  models[#models + 1] = {
    name = "pendulum", path = "examples/pendulum.lua", t_end = 10, dt_out = 0.1, floor = 0,
    unit = "m", reference = "A01 elliptic solution, bob x and y, max over rows",
    error = function(res)
      return worst_row(res, function(i)
        local theta = 2 * math.asin(k * elliptic.sn(K - omega * res.t[i], k))
        return math.max(math.abs(res["bob.x"][i] - math.sin(theta)),
          math.abs(res["bob.y"][i] + math.cos(theta)))
      end)
    end,
  }
end

-- t_double_pendulum.lua: minimal coordinates (double_pendulum_reference.lua's equations) by
-- RK4, compared every 0.1 s over the test's 3 s (shortened from 10 s).
do
  local _, deriv = dofile("tests/lua/double_pendulum_reference.lua")
  local p = { m1 = 1, l1 = 1, m2 = 0.5, l2 = 0.7, g = 9.81 }
  local function f(_, y) return deriv(p, y) end
  local want, floor = richardson(rk4(f, { 2.0, -1.0, 0, 0 }, 3, 5e-5, 0.1),
    rk4(f, { 2.0, -1.0, 0, 0 }, 3, 2.5e-5, 0.1))
  models[#models + 1] = {
    name = "double_pendulum", path = "examples/double_pendulum.lua", t_end = 3, dt_out = 0.1,
    floor = floor, unit = "rad", reference = "minimal-coordinate RK4, both angles every 0.1 s",
    error = function(res) return worst_sample(res, { "p1.theta", "p2.theta" }, want) end,
  }
end

-- Not tested against a global reference (t_slider_crank.lua checks the kinematics, which the
-- projection makes exact, and the work balance): the crank angle in its one coordinate,
-- M(theta) theta'' + M'(theta) theta'^2 / 2 = tau_s (1 - theta' / omega_0), by RK4 (the span
-- shortened from 5 s to 2 s).
do
  local r, l, tau_s, omega_0 = 0.1, 0.3, 0.5, 20
  local J_crank, m_rod, m_piston = 0.5 * 0.5 * r * r, 0.2, 0.3
  local J_rod = m_rod * l * l / 12
  local function f(_, y)
    local theta, w = y[1], y[2]
    local s, c = math.sin(theta), math.cos(theta)
    local D = math.sqrt(l * l - r * r * s * s)
    -- d/dtheta of the piston's x (b), the rod's centre (ax, ay) and angle (e), and theirs
    local b = -r * s - r * r * s * c / D
    local db = -r * c - r * r * (c * c - s * s) / D - r ^ 4 * s * s * c * c / D ^ 3
    local ax, ay, dax, day = (b - r * s) / 2, r * c / 2, (db - r * c) / 2, -r * s / 2
    local e, de = -r * c / D, r * s / D - r ^ 3 * s * c * c / D ^ 3
    local M = J_crank + m_rod * (ax * ax + ay * ay) + J_rod * e * e + m_piston * b * b
    local dM = 2 * (m_rod * (ax * dax + ay * day) + J_rod * e * de + m_piston * b * db)
    return { w, (tau_s * (1 - w / omega_0) - dM * w * w / 2) / M }
  end
  local want, floor = richardson(rk4(f, { math.pi / 2, 0 }, 2, 1e-4, 0.1),
    rk4(f, { math.pi / 2, 0 }, 2, 5e-5, 0.1))
  models[#models + 1] = {
    name = "slider_crank", path = "examples/slider_crank.lua", t_end = 2, dt_out = 0.1,
    floor = floor, unit = "rad", reference = "one-coordinate RK4 (written here), crank angle",
    error = function(res) return worst_sample(res, { "crank.theta" }, want) end,
  }
end

-- t_spring_chain.lua: the modal solution (spring_chain_reference.lua).
do
  local exact = dofile("tests/lua/spring_chain_reference.lua")
  models[#models + 1] = {
    name = "spring_chain", path = "examples/spring_chain.lua", t_end = 10, dt_out = 0.1,
    floor = 0, unit = "m", reference = "modal solution, max over rows",
    error = function(res)
      return worst_row(res, function(i)
        local x1, x2 = exact(res.t[i])
        return math.max(math.abs(res["left.x"][i] - x1), math.abs(res["right.x"][i] - x2))
      end)
    end,
  }
end

-- t_constant_speed.lua: theta = gd(u0 - g t / v0) and the position from it.
do
  local g, v0, theta0 = 9.81, 3.0, math.rad(60)
  local function asinh(x) return math.log(x + math.sqrt(x * x + 1)) end
  local function cosh(x) return (math.exp(x) + math.exp(-x)) / 2 end
  local function sinh(x) return (math.exp(x) - math.exp(-x)) / 2 end
  local u0 = asinh(math.tan(theta0))
  models[#models + 1] = {
    name = "constant_speed", path = "examples/constant_speed.lua", t_end = 3, dt_out = 0.1,
    floor = 0, unit = "m", reference = "Gudermannian closed form, position, max over rows",
    error = function(res)
      return worst_row(res, function(i)
        local u = u0 - g * res.t[i] / v0
        local x = -(v0 * v0 / g) * (math.atan(sinh(u)) - theta0)
        local y = -(v0 * v0 / g) * math.log(cosh(u) / cosh(u0))
        return math.max(math.abs(res["ball.x"][i] - x), math.abs(res["ball.y"][i] - y))
      end)
    end,
  }
end

-- t_driven_pendulum.lua: theta'' = -(g - a w^2 cos(w t)) sin(theta) / l by RK4.
do
  local g, l, a, w = 9.81, 1.0, 0.05, 10.0
  local function f(t, y)
    return { y[2], -(g - a * w * w * math.cos(w * t)) * math.sin(y[1]) / l }
  end
  local want, floor = richardson(rk4(f, { 0.5, 0 }, 5, 5e-5, 0.1),
    rk4(f, { 0.5, 0 }, 5, 2.5e-5, 0.1))
  models[#models + 1] = {
    name = "driven_pendulum", path = "examples/driven_pendulum.lua", t_end = 5, dt_out = 0.1,
    floor = floor, unit = "rad", reference = "minimal-coordinate RK4, theta",
    error = function(res) return worst_sample(res, { "pend.theta" }, want) end,
  }
end

-- t_heavy_top.lua: steady precession, the tilt constant and the centre of mass turning at
-- the closed-form rate Omega (shortened from 10 s to 2 s).
do
  local _, top = dofile("examples/heavy_top.lua")
  models[#models + 1] = {
    name = "heavy_top", path = "examples/heavy_top.lua", t_end = 2, dt_out = 0.01, floor = 0,
    unit = "rad", reference = "steady precession: tilt and precession angle, max over rows",
    error = function(res)
      local az0, az_prev, turns = math.atan(res["top.y"][1], res["top.x"][1]), nil, 0
      return worst_row(res, function(i)
        local q = { res["top.q0"][i], res["top.q1"][i], res["top.q2"][i], res["top.q3"][i] }
        local tilt = math.acos((q[1] ^ 2 - q[2] ^ 2 - q[3] ^ 2 + q[4] ^ 2)
          / (q[1] ^ 2 + q[2] ^ 2 + q[3] ^ 2 + q[4] ^ 2))
        local az = math.atan(res["top.y"][i], res["top.x"][i]) -- unwrapped below
        if az_prev and az - az_prev < -math.pi then turns = turns + 1 end
        if az_prev and az - az_prev > math.pi then turns = turns - 1 end
        az_prev = az
        return math.max(math.abs(tilt - top.theta0),
          math.abs(az + 2 * math.pi * turns - az0 - top.Omega * res.t[i]))
      end)
    end,
  }
end

-- t_free_body.lua: Euler's equations by RK4, the body angular velocity over the test's 6 s
-- (shortened from 30 s; the motion is unstable, errors grow ~ e^(0.9 t), and the multiple
-- here includes that growth).
do
  local _, body = dofile("examples/free_body.lua")
  local I = body.I
  local function f(_, w)
    return { (I[2] - I[3]) * w[2] * w[3] / I[1], (I[3] - I[1]) * w[3] * w[1] / I[2],
             (I[1] - I[2]) * w[1] * w[2] / I[3] }
  end
  local want, floor = richardson(rk4(f, body.omega, 6, 2.5e-4, 0.1),
    rk4(f, body.omega, 6, 1.25e-4, 0.1))
  local omega = { "b.omega_x", "b.omega_y", "b.omega_z" }
  models[#models + 1] = {
    name = "free_body", path = "examples/free_body.lua", t_end = 6, dt_out = 0.1, floor = floor,
    unit = "rad/s", reference = "Euler's equations by RK4, body omega",
    error = function(res) return worst_sample(res, omega, want) end,
  }
end

-- t_bricard.lua: the linkage in its hinge angles (bricard_reference.lua), integrated here at
-- rtol 1e-14 (its floor: the difference to rtol 1e-13), P3 every 0.1 s (shortened to 2 s).
do
  local ref_sys, P3 = dofile("tests/lua/bricard_reference.lua")
  local ref_model = ref_sys:compile()
  local function reference(rtol)
    local res = ref_model:simulate { t_end = 2, dt_out = 0.1, rtol = rtol, atol = rtol / 100,
      method = "adams", drift = "baumgarte" }
    local points = {}
    for i = 1, res.rows do
      points[i] = P3 { res["chain.th1"][i], res["chain.th2"][i], res["chain.th3"][i],
                       res["chain.th4"][i], res["chain.th5"][i] }
    end
    return points
  end
  local want, check = reference(1e-14), reference(1e-13)
  local floor = 0
  for i = 1, #want do
    for c = 1, 3 do floor = math.max(floor, math.abs(want[i][c] - check[i][c])) end
  end
  models[#models + 1] = {
    name = "bricard", path = "examples/bricard.lua", t_end = 2, dt_out = 0.1, floor = floor,
    unit = "m", reference = "hinge-angle model at rtol 1e-14, P3 every 0.1 s",
    error = function(res)
      return worst_row(res, function(i)
        local p = want[i]
        return math.max(math.abs(res["P3.x"][i] - p[1]), math.abs(res["P3.y"][i] - p[2]),
          math.abs(res["P3.z"][i] - p[3]))
      end)
    end,
  }
end

-- t_tracking.lua: theta = theta_d = (pi / 4) cos(2 t), prescribed (the reported state is
-- projected onto it, so this error is near rounding at any tolerance).
models[#models + 1] = {
  name = "tracking", path = "examples/tracking.lua", t_end = 10, dt_out = 0.1, floor = 0,
  unit = "rad", reference = "the prescribed theta_d, max over rows",
  error = function(res)
    return worst_row(res, function(i)
      return math.abs(res["pend.theta"][i] - math.pi / 4 * math.cos(2 * res.t[i]))
    end)
  end,
}

return models
