-- The spring chain of examples/spring_chain.lua, with the SICM spring-mass part written in
-- Lua by its Lagrangian alone (seed sicm-coordinate-constraints-and-systems-from-parts,
-- eq. 1.207):
--
--   L = 1/2 m (xi' + x')^2 - 1/2 k x^2  (+ m g0 (xi + X + x) when there is gravity)
--
-- Nothing else is typed by hand: the mass matrix M = d2L/dv2 (singular: the base xi carries
-- no mass of its own) and the force Q = dL/dq - (d2L/dv dq) v come from joinery's
-- automatic differentiation, and the terminal `tip` gets its Jacobian the same way. The
-- part is registered once and used by name, in two instances, like the built-in
-- `spring_mass`; tests/lua/t_lua_parts.lua checks that both give the same motion.
--
--   joinery run examples/spring_chain_lua.lua --rtol 1e-10 --atol 1e-12
local joinery = require "joinery"

local function registered(name)
  for _, t in ipairs(joinery.types()) do
    if t == name then return true end
  end
  return false
end

if not registered("lua_spring_mass") then -- a script may be run twice in one Lua state
  joinery.part_type {
    name = "lua_spring_mass",
    doc = "1-D mass m on a spring (k, rest length X) from terminal base (xi) to tip, in Lua",
    params = {
      { name = "m", default = 1, unit = "kg", doc = "mass at the tip", domain = "positive" },
      { name = "k", default = 1, unit = "N/m", doc = "spring stiffness", domain = "nonnegative" },
      { name = "X", default = 1, unit = "m", doc = "rest length of the spring",
        domain = "nonnegative" },
    },
    coords = { "xi", "x" },
    terminals = {
      { name = "base", coords = { "xi" } }, -- the coordinate xi itself
      { name = "tip", dim = 1, fn = function(q, t, p) return { q.xi + p.X + q.x } end },
    },
    lagrangian = function(q, v, t, p)
      local w = v.xi + v.x
      return 0.5 * p.m * w * w - 0.5 * p.k * q.x * q.x + p.m * p.gravity[1] * (q.xi + p.X + q.x)
    end,
    outputs = { tension = function(q, v, t, p) return p.k * q.x end },
  }
end

local sys = joinery.system()
local wall = sys:add("ground", "wall", { dim = 1 })
local left = sys:add("lua_spring_mass", "left", {
  m = 1, k = 100, X = 1, init = { x = 0.1 }, base = wall.pos })
sys:add("lua_spring_mass", "right", {
  m = 2, k = 50, X = 1, init = { x = 0 }, base = left.tip })
sys:settings { t_end = 10, dt_out = 0.01 }
return sys
