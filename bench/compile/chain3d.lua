-- A spatial chain of N rigid rods (body3d) on ball joints (issue 44, item 3): rod k lies
-- along x from the end of rod k-1, the first from a ground point, released horizontally under
-- gravity along -z. (Hanging straight down it is at rest with q'' = 0 exactly, which the sparse
-- acceleration solve's relative residual cannot judge: see bench/results/2026-11-27-compile.md.)
-- N from arg[1] (default 1000); returns the system and the builder.
-- Used by bench/compile/run.lua, which times sys:compile() alone.
local joinery = require "joinery"

local function build(N)
  local sys = joinery.system { gravity = { 0, 0, -9.81 } }
  local ground = sys:add("ground3d", "ground", {})
  local L, m, r = 0.1, 0.1, 0.01
  local Iaxis, Iside = m * r * r / 2, m * (3 * r * r + L * L) / 12
  local prev_end = ground.pos
  for k = 1, N do
    local rod = sys:add("body3d", "rod" .. k, {
      m = m, Ixx = Iaxis, Iyy = Iside, Izz = Iside,
      init = { x = (k - 0.5) * L, y = 0, z = 0, q0 = 1 },
    })
    sys:ball(rod:point("a", { -L / 2, 0, 0 }), prev_end, "j" .. k)
    prev_end = rod:point("b", { L / 2, 0, 0 })
  end
  return sys
end

local N = tonumber(arg and arg[1]) or 1000
return build(N), build
