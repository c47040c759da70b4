local joinery = require "joinery"
joinery.part_type {
  name = "lpend",
  doc = "pendulum by its Lagrangian",
  params = { { name = "m", default = 1, unit = "kg", doc = "bob", domain = "positive" },
             { name = "l", default = 1, unit = "m", doc = "length", domain = "positive" } },
  coords = { "th" },
  terminals = { { name = "bob", dim = 2, fn = function(q, t, p)
    return { p.l * joinery.math.sin(q.th), -p.l * joinery.math.cos(q.th) } end } },
  lagrangian = function(q, v, t, p)
    return 0.5 * p.m * p.l * p.l * v.th * v.th + p.m * p.gravity[2] * p.l * joinery.math.cos(q.th)
  end,
}
local sys = joinery.system { gravity = { 0, -9.81 } }
local p = sys:add("lpend", "p", { m = 1, l = 2, init = { th = 1 } })
local b = sys:add("mass", "b", { dim = 2, m = 0.5 })
sys:add("spring", "s", { dim = 2, a = p.bob, b = b.pos, k = 100, L = 0.5 })
return sys
