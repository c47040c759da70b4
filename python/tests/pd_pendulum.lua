-- The compound pendulum of examples/embed/pendulum_host.c (a uniform rod, 1 kg, 1 m, pinned at
-- one end, starting level with the pivot) with an actuator whose torque is the input "u".
-- With the argument "controller" the PD loop of that host runs in the script instead, as a
-- sampled controller (python/tests/test_inputs.py compares the two).
local mode = ...
local joinery = require "joinery"
local KP, KD, REF, DT = 40, 4, -1, 0.01

local sys = joinery.system { gravity = { 0, -9.81 } }
local rod = sys:add("body2d", "rod", { m = 1, J = 1 / 12, init = { x = 0.5, y = 0, theta = 0 } })
local pivot = sys:add("ground", "pivot", { dim = 2 })
local top = sys:add("marker2d", "rod_top", { rx = -0.5, body = rod.frame })
sys:glue(top.pos, pivot.pos, "hinge")
sys:input { name = "u", value = 0, unit = "N m" }
sys:add("actuator", "motor", { mode = 2, input = 0, coord = rod.theta })
if mode == "controller" then
  sys:controller { name = "pd", period = DT, fn = function(s)
    s:set_input("u", -KP * (s["rod.theta"] - REF) - KD * s["der(rod.theta)"])
  end }
end
sys:settings { t_end = 2 }
return sys
