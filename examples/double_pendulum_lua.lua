-- The double pendulum of examples/double_pendulum.lua, with the pendulum part written in
-- Lua by its Lagrangian.
--
-- The textbook pendulum Lagrangian L = 1/2 m l^2 theta'^2 + m g l cos(theta) holds for a
-- pivot that does not move. This part owns its pivot coordinates (px, py) so that the pivot
-- can be glued to another part (here: the second pendulum hangs from the first one's bob),
-- and then the pivot's velocity belongs in the kinetic energy. With the bob at
--   b = (px + l sin(theta), py - l cos(theta))
-- the Lagrangian is the bob's
--   L = 1/2 m |b'|^2 + m g . b
-- which is the textbook one when px' = py' = 0 and g = (0, -g). M = d2L/dv2 is then singular
-- (rank 2 of 3: nothing pushes the massless pivot but its glue), exactly like the built-in
-- `pendulum`; tests/lua/t_lua_parts.lua checks that both give the same angles. Like it, the
-- type says `follows_glue`: the pivot carries no mass of its own, so the compile eliminates
-- the glue on it (the pivot follows what it hangs from, px and py are not integrated and
-- have no output columns) and the model runs on the two angles alone.
--
--   joinery run examples/double_pendulum_lua.lua --rtol 1e-11 --atol 1e-12
local joinery = require "joinery"
local M = joinery.math -- sin and cos that also take the values parts are differentiated with

local function registered(name)
  for _, t in ipairs(joinery.types()) do
    if t == name then return true end
  end
  return false
end

local function bob(q, p) return q.px + p.l * M.sin(q.theta), q.py - p.l * M.cos(q.theta) end

if not registered("lua_pendulum") then
  joinery.part_type {
    name = "lua_pendulum",
    doc = "planar pendulum in Lua: bob m on a massless arm l from terminal pivot (px, py)",
    params = {
      { name = "m", default = 1, unit = "kg", doc = "mass of the bob", domain = "positive" },
      { name = "l", default = 1, unit = "m", doc = "length of the arm", domain = "positive" },
    },
    coords = { "px", "py", "theta" },
    follows_glue = true,
    terminals = {
      { name = "pivot", coords = { "px", "py" } },
      { name = "bob", dim = 2, fn = function(q, t, p) return { bob(q, p) } end },
    },
    lagrangian = function(q, v, t, p)
      local bx, by = bob(q, p)
      local c, s = M.cos(q.theta), M.sin(q.theta)
      local vx, vy = v.px + p.l * c * v.theta, v.py + p.l * s * v.theta
      local g = p.gravity
      return 0.5 * p.m * (vx * vx + vy * vy) + p.m * (g[1] * bx + g[2] * by)
    end,
    -- how joinery animate draws it: the arm and the bob
    visuals = {
      { kind = "rod", fn = function(q, v, t, p) return { q.px, q.py }, { bob(q, p) } end },
      { kind = "point", fn = function(q, v, t, p) return { bob(q, p) } end },
    },
  }
end

local sys = joinery.system { gravity = { 0, -9.81 } }
local ground = sys:add("ground", "ground", { dim = 2 })
local p1 = sys:add("lua_pendulum", "p1", { m = 1, l = 1, init = { theta = 2.0 }, pivot = ground.pos })
sys:add("lua_pendulum", "p2", { m = 0.5, l = 0.7, init = { theta = -1.0 }, pivot = p1.bob })
sys:settings { t_end = 10, dt_out = 0.01 }
return sys
