local joinery = require "joinery"
local sys = joinery.system { gravity = { 0, -9.81 } }
local ground = sys:add("ground", "ground", { dim = 2 })
local bob = sys:add("mass", "bob", { dim = 2, m = 1, init = { x = 1, y = 0 } })
sys:add("rod", "rod", { dim = 2, a = ground.pos, b = bob.pos, L = 1 })
local model = sys:compile()
local res = model:simulate { t_end = 0.02, dt_out = 0.01, method = "erk" }
local sim = model:sim { rtol = 1e-8 }
sim:advance(0.01)
local q = sim:state()
local ch = sim:channels()
sim:close()
model:close()
local e = joinery.eval_part { type = "pendulum", params = { m = 2, l = 0.5 }, q = { 0, 0, 1 },
  v = { 0, 0, 0.5 }, t = 0, gravity = { 0, -9.81 } }
sys:settings { t_end = 0.05, dt_out = 0.01, method = "bdf", drift = "projection" }
return sys
