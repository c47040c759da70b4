-- Parts written in Lua (joinery.part_type): the SICM spring-mass by its Lagrangian alone
-- and the pendulum by its Lagrangian reproduce the built-in parts; constraints written as
-- phi(q, t) and psi(q, v, t) give A and b equal to the analytic ones; the derivatives of M,
-- Q and the terminals agree with the built-in pendulum's hand-written ones.
local tap = dofile("tests/lua/tap.lua")
local joinery = require "joinery"
local M = joinery.math
-- both pendulum angles, 32 single checks
tap.plan(2 + 32)

-- 1. examples/spring_chain_lua.lua against examples/spring_chain.lua, 10 s.
do
  local opts = { rtol = 1e-10, atol = 1e-12, t_end = 10 }
  local lua = dofile("examples/spring_chain_lua.lua"):simulate(opts)
  local ref = dofile("examples/spring_chain.lua"):simulate(opts)
  tap.is(lua.rows, ref.rows, "spring chain: as many output rows")
  local err = 0
  for i = 1, math.min(lua.rows, ref.rows) do
    err = math.max(err, math.abs(lua["left.x"][i] - ref["left.x"][i]),
      math.abs(lua["right.x"][i] - ref["right.x"][i]))
  end
  tap.ok(err <= 1e-10, "spring chain in Lua: left.x, right.x within 1e-10 m of the built-in over 10 s")
  tap.diag(string.format("max |difference| %.3g m (%d rows)", err, lua.rows))
  tap.is_near(lua["right.tension"][lua.rows], ref["right.tension"][ref.rows], 1e-8,
    "the Lua part's output channel right.tension")
end

-- 2. examples/double_pendulum_lua.lua against examples/double_pendulum.lua at t = 3 s.
do
  -- Two integrations of the same chaotic motion differ by the integrator's error: at
  -- rtol 1e-11 up to 6.4e-10 rad in p2.theta (4e-11 to 6.4e-10 across OpenBLAS kernels, too
  -- close to 1e-9); at rtol 1e-13 at most 6.5e-12 (default/Cooperlake, Haswell, Prescott),
  -- so 1e-9 leaves a margin of 150. Same cost (0.3 s).
  local opts = { method = "adams", rtol = 1e-13, atol = 1e-14, t_end = 3 }
  local lua = dofile("examples/double_pendulum_lua.lua"):simulate(opts)
  local ref = dofile("examples/double_pendulum.lua"):simulate(opts)
  local n = lua.rows
  assert(math.abs(lua.t[n] - 3) < 1e-12 and math.abs(ref.t[ref.rows] - 3) < 1e-12)
  for _, c in ipairs { "p1.theta", "p2.theta" } do
    tap.is_near(lua[c][n], ref[c][ref.rows], 1e-9, "double pendulum in Lua: " .. c .. " at t = 3 s")
  end
  -- follows_glue = true: both pivots follow what they hang from, as the built-in pendulum's
  -- do, so the Lua model integrates the two angles (6 coordinates with every glue as rows)
  local script = "examples/double_pendulum_lua.lua"
  tap.is(dofile(script):compile():num_coords(), 2, "follows_glue: the Lua pendulums' pivots are eliminated")
  tap.is(dofile(script):compile { eliminate_glue = false }:num_coords(), 6,
    "follows_glue: with eliminate_glue = false every pivot stays")
  local e0, drift = lua.energy[1], 0
  for i = 1, n do drift = math.max(drift, math.abs(lua.energy[i] - e0)) end
  tap.ok(drift < 1e-7 * math.abs(e0), "the Lua pendulums' energy (from L) is conserved")
  tap.diag(string.format("energy drift %.3g J of %.6f J", drift, e0))
end

-- 3. The Lua pendulum's M, Q and terminals (by AD) against the built-in pendulum's
-- (hand-written) at random states.
local rng_state = 12345
local function rand(a, b) -- a small LCG: the same numbers on every run
  rng_state = (rng_state * 1103515245 + 12345) % 2147483648
  return a + (b - a) * rng_state / 2147483648
end

local function maxdiff(a, b)
  if type(a) == "number" then return math.abs(a - b) end
  local d = 0
  for i = 1, #a do d = math.max(d, maxdiff(a[i], b[i])) end
  return d
end

do
  local worst = 0
  for _ = 1, 20 do
    local args = {
      params = { m = rand(0.5, 2), l = rand(0.3, 1.5) },
      q = { rand(-1, 1), rand(-1, 1), rand(-4, 4) },
      v = { rand(-2, 2), rand(-2, 2), rand(-5, 5) },
      t = rand(0, 10), gravity = { rand(-3, 3), rand(-12, -5) } }
    args.type = "lua_pendulum"
    local a = joinery.eval_part(args)
    args.type = "pendulum"
    local b = joinery.eval_part(args)
    local d = math.max(maxdiff(a.M, b.M), maxdiff(a.Q, b.Q), maxdiff(a.kinetic, b.kinetic),
      maxdiff(a.potential, b.potential))
    for _, term in ipairs { "pivot", "bob" } do
      local ta, tb = a.terminals[term], b.terminals[term]
      d = math.max(d, maxdiff(ta.value, tb.value), maxdiff(ta.J, tb.J),
        maxdiff(ta.acc_bias, tb.acc_bias), maxdiff(ta.vel_bias, tb.vel_bias))
    end
    worst = math.max(worst, d)
  end
  tap.ok(worst < 1e-12, "Lua pendulum: M, Q, energies, terminal J and biases equal the built-in's")
  tap.diag(string.format("largest difference %.3g over 20 random states", worst))
end

-- 4. Constraints: a point on a (rheonomic) ellipse, a knife edge and a nonlinear speed
-- constraint, against the analytic A, b, residual and rate.
joinery.part_type {
  name = "test_constrained_point",
  doc = "a point mass on an ellipse whose x semi-axis grows, with two velocity constraints",
  params = {
    { name = "m", default = 1, unit = "kg", doc = "mass", domain = "positive" },
    { name = "a", default = 2, unit = "m", doc = "x semi-axis at t = 0", domain = "positive" },
    { name = "rate", default = 0.3, unit = "m/s", doc = "growth of the x semi-axis" },
    { name = "b", default = 1, unit = "m", doc = "y semi-axis", domain = "positive" },
  },
  coords = { "x", "y", "theta" },
  kinetic = function(q, v, t, p) return 0.5 * p.m * (v.x * v.x + v.y * v.y + v.theta * v.theta) end,
  constraints = {
    { name = "on_ellipse", kind = "position", phi = function(q, t, p)
      local a = p.a + p.rate * t
      return (q.x / a) ^ 2 + (q.y / p.b) ^ 2 - 1
    end },
    { name = "knife_edge", psi = function(q, v, t, p)
      return -M.sin(q.theta) * v.x + M.cos(q.theta) * v.y
    end },
    { name = "speed", kind = "velocity", psi = function(q, v, t, p)
      return v.x * v.x + v.y * v.y - (1 + t) ^ 2
    end },
  },
}

do
  local worst, worst_res = 0, 0
  for _ = 1, 20 do
    local pa, rate, pb = rand(1, 3), rand(-0.5, 0.5), rand(0.5, 2)
    local x, y, th = rand(-2, 2), rand(-2, 2), rand(-4, 4)
    local vx, vy, w = rand(-3, 3), rand(-3, 3), rand(-3, 3)
    local t = rand(0, 2)
    local r = joinery.eval_part { type = "test_constrained_point",
      params = { a = pa, rate = rate, b = pb }, q = { x = x, y = y, theta = th },
      v = { x = vx, y = vy, theta = w }, t = t }
    local a = pa + rate * t
    -- phi = x^2/a(t)^2 + y^2/b^2 - 1
    local A1 = { 2 * x / a ^ 2, 2 * y / pb ^ 2, 0 }
    local phi_t = -2 * x * x * rate / a ^ 3
    local phi_xt = -4 * x * rate / a ^ 3
    local phi_tt = 6 * x * x * rate ^ 2 / a ^ 4
    local b1 = -(2 * vx * vx / a ^ 2 + 2 * vy * vy / pb ^ 2 + 2 * phi_xt * vx + phi_tt)
    local res1 = x * x / a ^ 2 + y * y / pb ^ 2 - 1
    local rate1 = A1[1] * vx + A1[2] * vy + phi_t
    -- psi = -sin(th) vx + cos(th) vy
    local A2 = { -math.sin(th), math.cos(th), 0 }
    local b2 = w * (math.cos(th) * vx + math.sin(th) * vy)
    -- psi = vx^2 + vy^2 - (1 + t)^2
    local A3 = { 2 * vx, 2 * vy, 0 }
    local b3 = 2 * (1 + t)
    local want_A, want_b = { A1, A2, A3 }, { b1, b2, b3 }
    local scale = 1
    for i = 1, 3 do scale = math.max(scale, math.abs(want_b[i])) end
    worst = math.max(worst, maxdiff(r.A, want_A), maxdiff(r.b, want_b) / scale)
    worst_res = math.max(worst_res, math.abs(r.residual[1] - res1), math.abs(r.rate[1] - rate1),
      math.abs(r.residual[2] - (-math.sin(th) * vx + math.cos(th) * vy)),
      math.abs(r.residual[3] - (vx * vx + vy * vy - (1 + t) ^ 2)))
  end
  tap.ok(worst < 1e-12, "holonomic (rheonomic ellipse) and nonholonomic rows: A and b are the analytic ones")
  tap.diag(string.format("largest difference %.3g (b relative to its size) over 20 random states", worst))
  tap.ok(worst_res < 1e-12, "residuals phi, psi and the rate phi' are the analytic ones")
  tap.diag(string.format("largest difference %.3g", worst_res))
end

-- 5. A point on an ellipse moves: the position constraint holds along a simulation and the
-- row appears under its name.
joinery.part_type {
  name = "test_ellipse_point",
  doc = "a point mass on the ellipse (x/a)^2 + (y/b)^2 = 1",
  params = { { name = "m", default = 1, unit = "kg", doc = "mass", domain = "positive" },
             { name = "a", default = 2, unit = "m", doc = "x semi-axis", domain = "positive" },
             { name = "b", default = 1, unit = "m", doc = "y semi-axis", domain = "positive" } },
  coords = { "x", "y" },
  terminals = { { name = "pos", coords = { "x", "y" } } },
  lagrangian = function(q, v, t, p)
    return 0.5 * p.m * (v.x * v.x + v.y * v.y) + p.m * (p.gravity[1] * q.x + p.gravity[2] * q.y)
  end,
  constraints = { { name = "on_ellipse", phi = function(q, t, p)
    return (q.x / p.a) ^ 2 + (q.y / p.b) ^ 2 - 1 end } },
}
do
  local sys = joinery.system { gravity = { 0, -9.81 } }
  sys:add("test_ellipse_point", "pt", { init = { x = 2, y = 0 }, vel = { x = 0, y = 1 } })
  local model = sys:compile()
  tap.has(table.concat(model:rows(), " "), "pt.on_ellipse", "constraint rows are named part.constraint")
  local res = model:simulate { t_end = 2, dt_out = 0.05, rtol = 1e-10, atol = 1e-12 }
  local worst, e0, drift = 0, res.energy[1], 0
  for i = 1, res.rows do
    local x, y = res["pt.x"][i], res["pt.y"][i]
    worst = math.max(worst, math.abs(x * x / 4 + y * y - 1))
    drift = math.max(drift, math.abs(res.energy[i] - e0))
  end
  tap.ok(worst < 1e-7, "the point stays on the ellipse")
  tap.ok(drift < 1e-7, "and its energy is conserved (ideal constraint)")
  tap.diag(string.format("max |phi| %.3g, energy drift %.3g J", worst, drift))
end

-- 6. kinetic/potential, mass/force, nonideal and outputs: a damped oscillator three ways.
joinery.part_type {
  name = "test_osc_energy",
  doc = "mass on a spring, by T and V, with a viscous force",
  params = { { name = "m", default = 2, unit = "kg", doc = "mass", domain = "positive" },
             { name = "k", default = 3, unit = "N/m", doc = "stiffness" },
             { name = "c", default = 0.1, unit = "N s/m", doc = "damping" } },
  coords = { { name = "x", default = 0.5 } },
  terminals = { pos = { coords = { "x" } } },
  kinetic = function(q, v, t, p) return 0.5 * p.m * v.x * v.x end,
  potential = function(q, t, p) return 0.5 * p.k * q.x * q.x end,
  force = function(q, v, t, p) return { -p.c * v.x } end,
  outputs = { { name = "spring_force", fn = function(q, v, t, p) return -p.k * q.x end } },
}
joinery.part_type {
  name = "test_osc_direct",
  doc = "mass on a spring, by M and Q",
  params = { { name = "m", default = 2, unit = "kg", doc = "mass", domain = "positive" },
             { name = "k", default = 3, unit = "N/m", doc = "stiffness" },
             { name = "c", default = 0.1, unit = "N s/m", doc = "damping" } },
  coords = { { name = "x", default = 0.5 } },
  constant_mass = true,
  mass = function(q, t, p) return { { p.m } } end,
  force = function(q, v, t, p) return { x = -p.k * q.x - p.c * v.x } end,
}
do
  local a = joinery.eval_part { type = "test_osc_energy", q = { 0.3 }, v = { -0.7 } }
  local b = joinery.eval_part { type = "test_osc_direct", q = { 0.3 }, v = { -0.7 } }
  tap.ok(maxdiff(a.M, b.M) == 0 and maxdiff(a.Q, b.Q) < 1e-15,
    "kinetic/potential + force give the M and Q of mass/force")
  tap.is_near(a.potential, 0.5 * 3 * 0.09, 1e-15, "potential energy from `potential`")
  tap.is_near(a.kinetic, 0.5 * 2 * 0.49, 1e-15, "kinetic energy from `kinetic`")
  tap.is_near(a.outputs.spring_force, -0.9, 1e-15, "an output function")
  local function run(typ)
    local sys = joinery.system()
    sys:add(typ, "osc", {})
    return sys:simulate { t_end = 5, dt_out = 0.5, rtol = 1e-10, atol = 1e-12 }
  end
  local ra, rb = run("test_osc_energy"), run("test_osc_direct")
  tap.is_near(ra["osc.x"][ra.rows], rb["osc.x"][rb.rows], 1e-9, "both oscillators move alike")
  -- the exact damped oscillator: x'' = -(k x + c x')/m
  local wn, z = math.sqrt(3 / 2), 0.1 / (2 * math.sqrt(3 * 2))
  local wd = wn * math.sqrt(1 - z * z)
  local t = 5
  local x = 0.5 * math.exp(-z * wn * t) * (math.cos(wd * t) + z * wn / wd * math.sin(wd * t))
  tap.is_near(ra["osc.x"][ra.rows], x, 1e-8, "and as the closed form says")
  tap.ok(ra["osc.spring_force"] ~= nil, "output channel osc.spring_force")
end

-- 7. Jets in joinery.math: every wrapped function differentiates right inside a part, in
-- each of the three evaluation layouts (a potential: gradient with Hessian rows; phi:
-- gradient and the second derivative along (v, 1); psi: gradient over q, v).
do
  local fns = {
    { "sin", math.sin, math.cos, function(x) return -math.sin(x) end, 0.7 },
    { "cos", math.cos, function(x) return -math.sin(x) end, function(x) return -math.cos(x) end, 0.7 },
    { "exp", math.exp, math.exp, math.exp, 0.3 },
    { "log", math.log, function(x) return 1 / x end, function(x) return -1 / (x * x) end, 1.7 },
    { "sqrt", math.sqrt, function(x) return 0.5 / math.sqrt(x) end,
      function(x) return -0.25 / (x * math.sqrt(x)) end, 1.3 },
    { "tan", math.tan, function(x) return 1 / math.cos(x) ^ 2 end,
      function(x) return 2 * math.tan(x) / math.cos(x) ^ 2 end, 0.4 },
    { "atan", math.atan, function(x) return 1 / (1 + x * x) end,
      function(x) return -2 * x / (1 + x * x) ^ 2 end, 0.6 },
    { "asin", math.asin, function(x) return 1 / math.sqrt(1 - x * x) end,
      function(x) return x / (1 - x * x) ^ 1.5 end, 0.3 },
    { "acos", math.acos, function(x) return -1 / math.sqrt(1 - x * x) end,
      function(x) return -x / (1 - x * x) ^ 1.5 end, 0.3 },
    { "sinh", function(x) return (math.exp(x) - math.exp(-x)) / 2 end,
      function(x) return (math.exp(x) + math.exp(-x)) / 2 end,
      function(x) return (math.exp(x) - math.exp(-x)) / 2 end, 0.8 },
    { "abs", math.abs, function() return -1 end, function() return 0 end, -0.8 },
  }
  local worst = 0
  local function rel(got, want) return math.abs(got - want) / math.max(1, math.abs(want)) end
  for _, f in ipairs(fns) do
    local name, f0, f1, f2, x0 = f[1], f[2], f[3], f[4], f[5]
    local tname = "test_fn_" .. name
    joinery.part_type { name = tname, doc = "one function", coords = { "x" },
      potential = function(q) return M[name](q.x) end,
      constraints = { { name = "pos", phi = function(q) return M[name](q.x) end },
                      { name = "vel", psi = function(q, v) return M[name](v.x) end } } }
    local r = joinery.eval_part { type = tname, q = { x0 }, v = { 0.5 } }
    local r2 = joinery.eval_part { type = tname, q = { x0 }, v = { x0 } }
    worst = math.max(worst, rel(r.Q[1], -f1(x0)), rel(r.potential, f0(x0)),
      rel(r.A[1][1], f1(x0)), rel(r.b[1], -0.25 * f2(x0)), rel(r.residual[1], f0(x0)),
      rel(r2.A[2][1], f1(x0)), rel(r2.residual[2], f0(x0)))
  end
  -- two arguments: the gradient and the Hessian along (v, 1) = (1, 1, 1)
  local x, y = 0.9, 1.4
  local r2, h = x * x + y * y, math.sqrt(x * x + y * y)
  local lx = math.log(x)
  local two = {
    { "atan2", function(a, b) return M.atan2(a, b) end, y, x,
      { -y / r2, x / r2 }, { 2 * x * y / r2 ^ 2, (y * y - x * x) / r2 ^ 2, -2 * x * y / r2 ^ 2 } },
    { "hypot", function(a, b) return M.hypot(b, a) end, h, nil,
      { x / h, y / h }, { y * y / h ^ 3, -x * y / h ^ 3, x * x / h ^ 3 } },
    { "pow", function(a, b) return b ^ a end, x ^ y, nil,
      { y * x ^ (y - 1), x ^ y * lx },
      { y * (y - 1) * x ^ (y - 2), x ^ (y - 1) * (1 + y * lx), x ^ y * lx * lx } },
    { "div", function(a, b) return a / b end, y / x, nil,
      { -y / x ^ 2, 1 / x }, { 2 * y / x ^ 3, -1 / x ^ 2, 0 } },
  }
  for _, c in ipairs(two) do
    local name, f, want, g, H = c[1], c[2], c[3], c[5], c[6]
    joinery.part_type { name = "test_fn2_" .. name, doc = "one function of two", coords = { "x", "y" },
      constraints = { { name = "pos", phi = function(q) return f(q.y, q.x) end } } }
    local r = joinery.eval_part { type = "test_fn2_" .. name, q = { x, y }, v = { 1, 1 } }
    worst = math.max(worst, rel(r.residual[1], c[4] and math.atan(y, x) or want),
      rel(r.A[1][1], g[1]), rel(r.A[1][2], g[2]), rel(r.b[1], -(H[1] + 2 * H[2] + H[3])))
  end
  tap.ok(worst < 1e-14, "joinery.math functions on Jets: first and second derivatives exact")
  tap.diag(string.format("largest relative difference %.3g", worst))
end

-- 8. Types are registered once, listed and described like built-ins.
do
  local found = false
  for _, t in ipairs(joinery.types()) do found = found or t == "test_osc_energy" end
  tap.ok(found, "joinery.types() lists a Lua part type")
  local d = joinery.describe("test_osc_energy")
  tap.is(d.params[2].unit, "N/m", "describe: a parameter's unit")
  tap.is(d.terminals[1].name, "pos", "describe: a terminal from the map form")
  tap.is(d.outputs[1], "spring_force", "describe: outputs")
  local ok, err = pcall(joinery.part_type, { name = "test_osc_energy", coords = { "x" } })
  tap.ok(not ok and tostring(err):find("already registered", 1, true) ~= nil,
    "registering a type name twice is an error")
  local sys = joinery.system()
  ok, err = pcall(sys.add, sys, "test_osc_energy", "bad", { m = -1 })
  tap.ok(not ok and tostring(err):find("must be > 0", 1, true) ~= nil,
    "the engine validates a Lua part's parameters against its schema")
  tap.diag(tostring(err))
end

-- An output marked angle = true (known modulo 2 pi, here an atan2) is reported continuous;
-- the same value unmarked stays in (-pi, pi]. A body spinning at 5 rad/s for 3 s turns
-- 15 rad, reported every 0.05 s.
do
  joinery.part_type {
    name = "angle_meter", doc = "the frame's orientation as atan2(sin, cos)",
    coords = { "x", "y", "theta" },
    terminals = { { name = "frame", coords = { "x", "y", "theta" } } },
    outputs = {
      { name = "phi", angle = true, fn = function(q) return math.atan(math.sin(q.theta), math.cos(q.theta)) end },
      { name = "wrapped", fn = function(q) return math.atan(math.sin(q.theta), math.cos(q.theta)) end },
    },
  }
  local sys = joinery.system { gravity = { 0, 0 } }
  local b = sys:add("body2d", "b", { m = 1, J = 0.1, vel = { theta = 5 } })
  sys:add("angle_meter", "meter", { frame = b.frame })
  local res = sys:simulate { t_end = 3, dt_out = 0.05, rtol = 1e-12, atol = 1e-14 }
  local cont, wrapped = 0, 0
  for i = 1, #res.t do
    cont = math.max(cont, math.abs(res["meter.phi"][i] - res["b.theta"][i]))
    wrapped = math.max(wrapped, math.abs(res["meter.wrapped"][i]))
  end
  -- rounding of atan2 and of the whole turns added: a few ulps of 15 rad
  tap.ok(cont < 1e-13, string.format("an angle output follows theta over 2.4 turns (%.2g rad)", cont))
  tap.ok(wrapped <= math.pi, "the unmarked output stays in (-pi, pi]")
  -- Only a simulation continues angles: model:evaluate reports each state on its own, so
  -- theta = 3.5 after theta = 3.0 reads 3.5 - 2 pi, as the part computes it.
  local model = sys:compile()
  local s1 = model:evaluate({ 0, 0, 3.0 }, { 0, 0, 0 })
  local s2 = model:evaluate({ 0, 0, 3.5 }, { 0, 0, 0 })
  tap.ok(model:num_coords() == 3 and math.abs(s1["meter.phi"] - 3.0) < 1e-15
    and math.abs(s2["meter.phi"] - (3.5 - 2 * math.pi)) < 1e-15,
    string.format("model:evaluate does not carry angles from call to call (%.6f, %.6f)",
      s1["meter.phi"], s2["meter.phi"]))
  tap.raises(function() joinery.part_type { name = "bad_angle", coords = { "x" }, outputs = { { name = "a", fn = function() return 0 end, angle = 1 } } } end,
    { "output 'a'", "angle must be true or false" }, "angle must be a boolean")
end

tap.done()
