-- A box (3 kg, 0.4 x 0.3 x 0.2 m) sliding on a rough plane (mu = 0.3) on its four bottom
-- corners, each a 3-D floor with friction glued to a marker3d on the body3d. It starts at
-- 1.3 m/s along (1.2, -0.5) and slides to rest; the four normal rows are redundant (three
-- would hold it) and so are the eight stick rows, so the Udwadia-Kalaba equation's
-- minimum-norm forces share the load (docs/events.md, "Friction on a 3-D floor").
--
-- Closed form (g = 9.81): the total friction is mu m g against the velocity, so the box
-- decelerates at mu g along a straight line and sticks at t = v0 / (mu g) = 0.441726 s after
-- v0^2 / (2 mu g) = 0.287122 m, at (0.265036, -0.110432) m; it then stays.
--
--   joinery run examples/sliding_box.lua
local joinery = require "joinery"

local g, mu = 9.81, 0.3
local a, b, c, m = 0.2, 0.15, 0.1, 3 -- half extents (m), mass (kg)
local sys = joinery.system { gravity = { 0, 0, -g } }
local box = sys:add("body3d", "box", { m = m, Ixx = m * (b * b + c * c) / 3,
  Iyy = m * (a * a + c * c) / 3, Izz = m * (a * a + b * b) / 3,
  init = { x = 0, y = 0, z = c }, vel = { x = 1.2, y = -0.5 } })
local k = 0
for _, sx in ipairs { -1, 1 } do
  for _, sy in ipairs { -1, 1 } do
    k = k + 1
    local corner = sys:add("marker3d", "corner" .. k, { rx = sx * a, ry = sy * b, rz = -c,
      body = box.frame })
    sys:add("floor", "floor" .. k, { dim = 3, nx = 0, ny = 0, nz = 1, mu = mu, e = 0,
      pos = corner.pos })
  end
end
sys:settings { t_end = 1, dt_out = 0.01 }
return sys
