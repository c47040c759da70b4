-- A thin disk rolling upright without slipping on a horizontal plane: two nonholonomic
-- constraints written in Lua with sys:constrain.
--
-- Coordinates: the contact point (x, y), the heading phi (the direction the disk rolls in)
-- and the spin angle theta. Held upright (no tilt), the disk has
--   T = 1/2 m (x'^2 + y'^2) + 1/2 I_a phi'^2 + 1/2 I_s theta'^2
-- (I_a = m R^2 / 4 about a diameter, I_s = m R^2 / 2 about its axle) and no potential energy
-- that changes. Rolling without slipping says the contact point moves with the rim:
--   x' = R theta' cos(phi),   y' = R theta' sin(phi)
-- — velocity constraints that are not derivatives of any position constraint (the disk can
-- reach every (x, y, phi, theta) by rolling and turning). Their forces keep phi' and theta'
-- constant, so the contact point runs round a circle of radius R theta' / phi' at the
-- constant speed R theta'. tests/lua/t_rolling_disk.lua checks both to 1e-8 over 20 s.
--
-- The script sets the two rates it cares about; compiling the model projects the velocities
-- onto the constraints, computing x' and y' (the model report lists them).
--
--   joinery run examples/rolling_disk.lua --out disk.csv
local joinery = require "joinery"
local M = joinery.math

local m, R = 1.0, 0.5
local phi0, phi_rate, spin_rate = 0.3, 0.8, 4.0 -- rad, rad/s, rad/s

local function registered(name)
  for _, t in ipairs(joinery.types()) do
    if t == name then return true end
  end
  return false
end

if not registered("upright_disk") then
  joinery.part_type {
    name = "upright_disk",
    doc = "a thin disk held upright: contact point (x, y), heading phi, spin theta",
    params = {
      { name = "m", default = 1, unit = "kg", doc = "mass", domain = "positive" },
      { name = "R", default = 0.5, unit = "m", doc = "radius", domain = "positive" },
    },
    coords = { "x", "y", "phi", "theta" },
    kinetic = function(q, v, t, p)
      local Ia, Is = p.m * p.R ^ 2 / 4, p.m * p.R ^ 2 / 2
      return 0.5 * p.m * (v.x * v.x + v.y * v.y) + 0.5 * Ia * v.phi * v.phi
        + 0.5 * Is * v.theta * v.theta
    end,
    constant_mass = true,
    -- how joinery animate draws it: the disk's frame at its centre (turned by the heading
    -- phi about z, then by the spin theta about its axle), a spoke down to the contact point
    visuals = {
      { kind = "frame", fn = function(q, v, t, p)
        local c1, s1, c2, s2 = M.cos(q.phi / 2), M.sin(q.phi / 2), M.cos(q.theta / 2), M.sin(q.theta / 2)
        return { q.x, q.y, p.R }, nil, { c1 * c2, -s1 * s2, c1 * s2, s1 * c2 }
      end },
      { kind = "rod", fn = function(q, v, t, p) return { q.x, q.y, 0 }, { q.x, q.y, p.R } end },
      { kind = "point", size = 0.02, fn = function(q, v, t, p) return { q.x, q.y, 0 } end },
    },
  }
end

local sys = joinery.system { gravity = { 0, 0, -9.81 } }
local disk = sys:add("upright_disk", "disk", { m = m, R = R,
  init = { x = 0, y = 0, phi = phi0, theta = 0 },
  vel = { phi = phi_rate, theta = spin_rate } })

-- x = { x, y, phi, theta } and xd their rates, in the order of `on`.
sys:constrain {
  name = "roll",
  on = { disk.x, disk.y, disk.phi, disk.theta },
  rows = 2,
  psi = function(x, xd, t)
    return { xd[1] - R * xd[4] * M.cos(x[3]), xd[2] - R * xd[4] * M.sin(x[3]) }
  end,
}

sys:settings { t_end = 20, dt_out = 0.05, rtol = 1e-11, atol = 1e-12 }
return sys
