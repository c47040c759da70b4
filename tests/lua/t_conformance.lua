-- The conformance suite (joinery.check_part, joinery/conformance.h) over every registered
-- part type: the built-ins, the C plugin's (examples/plugin/cubic_spring.c) and Lua-defined
-- ones (the examples' parts and one with a holonomic and a nonholonomic row, below). Each
-- must pass every non-advisory check; the worst finite-difference errors are printed.
local tap = dofile((arg and arg[0] and arg[0]:match("^(.*[/\\])") or "") .. "tap.lua")
local joinery = require "joinery"

local dir = os.getenv("JOINERY_PLUGIN_DIR") or "build/examples/plugin"
joinery.load_plugin(dir .. "/cubic_spring.so")

-- Lua-defined parts (issue 4, item 2): the examples register theirs by name. Each
-- registration is reported once the plan, which counts the types, is out.
local lua_types, registered = {}, {}
do
  for _, script in ipairs { "examples/spring_chain_lua.lua", "examples/double_pendulum_lua.lua" } do
    local before = #joinery.types()
    local good, err = pcall(dofile, script)
    registered[#registered + 1] = { good, err, "registers its Lua parts: " .. script }
    for i = before + 1, #joinery.types() do lua_types[#lua_types + 1] = joinery.types()[i] end
  end
  local M = joinery.math
  -- A skate on a tilted ellipse: a point (x, y) held on x^2/a^2 + y^2/b^2 = 1 (position row)
  -- with a blade at angle th that cannot slip sideways (velocity row), under gravity.
  local good, err = pcall(joinery.part_type, {
    name = "lua_test_skate",
    doc = "a skate on an ellipse whose blade cannot slip sideways (test part)",
    params = {
      { name = "m", default = 1, unit = "kg", doc = "mass", domain = "positive" },
      { name = "a", default = 2, unit = "m", doc = "semi-axis along x", domain = "positive" },
      { name = "b", default = 1, unit = "m", doc = "semi-axis along y", domain = "positive" },
    },
    coords = { "x", "y", "th" },
    terminals = { { name = "pos", coords = { "x", "y" } } },
    kinetic = function(q, v, t, p) return 0.5 * p.m * (v.x * v.x + v.y * v.y) + 0.05 * v.th * v.th end,
    potential = function(q, t, p) return -p.m * (p.gravity[1] * q.x + p.gravity[2] * q.y) end,
    constraints = {
      { name = "on_ellipse", phi = function(q, t, p) return q.x * q.x / (p.a * p.a) + q.y * q.y / (p.b * p.b) - 1 end },
      { name = "no_slip", psi = function(q, v, t, p) return -M.sin(q.th) * v.x + M.cos(q.th) * v.y end },
    },
  })
  registered[#registered + 1] = { good, err, "a Lua part with a position and a velocity row registers" }
  if good then lua_types[#lua_types + 1] = "lua_test_skate" end
end

-- Parts whose Q is exactly Lagrange's equations of their energy. Each carries
-- JY_PART_CONSERVATIVE (a Lua type defined by its energies alone gets it), so the report
-- checks Q against the energy; a type that lost the flag has no such check and fails here.
local conservative = { ground = true, mass = true, spring = true, spring_mass = true,
  pendulum = true, rod = true, guide = true, cubic_spring = true, lua_spring_mass = true,
  lua_pendulum = true, lua_test_skate = true }

local fd_checks = { "terminal_jacobian", "terminal_vel_bias", "terminal_acc_bias", "constraint_A",
  "constraint_b", "constraint_rate", "lagrange", "rest_force" }
local types = joinery.types()
local listed = 0
for _, name in ipairs(types) do if conservative[name] then listed = listed + 1 end end
-- the registrations, the count of types, each type (and its energy when listed), the report
tap.plan(#registered + 1 + #types + listed + 1)
for _, r in ipairs(registered) do
  tap.ok(r[1], r[3])
  if not r[1] then tap.diag(tostring(r[2])) end
end
tap.ok(#types >= 9 + #lua_types, string.format("%d registered types: built-in, plugin (cubic_spring), Lua (%s)",
  #types, table.concat(lua_types, ", ")))
for _, name in ipairs(types) do
  local r = joinery.check_part(name, nil, { seed = 7 })
  tap.ok(r.passed and r.instances > 0,
    string.format("%s conforms (%d instances, %d rejected)", name, r.instances, r.rejected))
  if not r.passed then tap.diag(r.log) end
  if conservative[name] then
    local moves = r.checks.mass_symmetric.count > 0 -- it has coordinates
    tap.ok(r.checks.lagrange.failed == 0 and (r.checks.lagrange.count > 0 or not moves),
      string.format("%s: Q = Lagrange's equations of its energy (worst %.2g)", name, r.checks.lagrange.worst))
  end
  local parts = {}
  for _, c in ipairs(fd_checks) do
    if r.checks[c].count > 0 then parts[#parts + 1] = string.format("%s %.2g", c, r.checks[c].worst) end
  end
  tap.diag(name .. ": worst FD errors: " .. (#parts > 0 and table.concat(parts, ", ") or "(none to check)"))
end

-- The report's shape.
local r = joinery.check_part("pendulum", { m = 2 }, { seed = 3, states = 2, random_params = false })
tap.ok(r.instances == 1 and r.states == 2 and r.checks.terminal_acc_bias.count > 0
  and type(r.checks.terminal_acc_bias.worst) == "number" and r.checks.terminal_acc_bias.tol == 1e-6
  and type(r.failed) == "table" and #r.failed == 0 and r.log:find("pendulum (defaults) [m=2", 1, true),
  "check_part honours params and opts; the report has checks, failed and log")
tap.done()
