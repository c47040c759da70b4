local joinery = require "joinery"
joinery.part_type {
  name = "osc",
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
local r = joinery.eval_part { type = "osc", q = { 0.3 }, v = { -0.7 } }
local sys = joinery.system { gravity = { -9.81 } }
local g = sys:add("ground", "g", { dim = 1 })
local a = sys:add("osc", "a", { m = 1, k = 10, init = { x = 0.1 } })
local b = sys:add("osc", "b", { m = 2, k = 5 })
sys:add("spring", "s", { dim = 1, a = a.pos, b = b.pos, k = 3, L = 1 })
sys:constrain { name = "tie", on = { a.pos, b.pos }, phi = function(x, t) return { x[1] - x[2] + 1 } end }
return sys
