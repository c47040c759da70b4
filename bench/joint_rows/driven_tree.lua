-- The 14-body tree of tree.lua with its twelve limb hinges driven at set speeds by motors
-- (sys:motor, velocity drives of 0.2 to 0.7 rad/s, alternating in sign): twelve velocity rows
-- beside the tree, as a robot's joint drives would be. The torso stays free on its ball.
local sys = dofile("bench/joint_rows/tree.lua")
local k = 0
for _, limb in ipairs { "larm", "rarm", "lleg", "rleg" } do
  for j = 1, 3 do
    k = k + 1
    local speed = (0.15 + 0.05 * k) * (k % 2 == 0 and -1 or 1)
    sys:motor { name = limb .. "_m" .. j, joint = sys:part(limb .. "_j" .. j), velocity = speed }
  end
end
return sys
