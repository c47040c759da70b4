local joinery = require "joinery"
joinery.part_type {
  name = "fz_brake", coords = { "x" }, terminals = { { name = "pos", coords = { "x" } } },
  params = { { name = "N", default = 1, unit = "N" } },
  constraints = { { name = "stick", psi = function(q, v, t, p) return v.x end } },
  modes = { { name = "slide", rows = {} }, { name = "stuck", rows = { "stick" } } },
  nonideal_law = function(q, v, t, p, f, a, mode) return { x = mode == "slide" and -0.3 * p.N or 0 } end,
  nguards = 1,
  guards = function(q, v, t, p, f, a, mode) return mode == "stuck" and 0.3 * p.N - math.abs(f.stick) or v.x end,
  transition = function(q, v, t, p, f, guard, direction, mode) return mode == "slide" and "stuck" or "slide", nil end,
  admissible = function(q, v, t, p, f, a, mode) if mode == "stuck" and math.abs(f.stick) > 0.3 * p.N then return "slide" end end,
}
local sys = joinery.system { gravity = { 0 } }
local m = sys:add("mass", "m", { dim = 1, m = 1, init = { x = 0.01 }, vel = { x = 0.05 } })
sys:add("fz_brake", "brake", { N = 1, pos = m.pos })
sys:settings { t_end = 0.2, dt_out = 0.05 }
return sys
