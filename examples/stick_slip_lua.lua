-- Stick-slip with a friction law written in Lua: the block of stick_slip.lua (1 kg, spring
-- k = 100 N/m to a wall at the origin, released at rest at x = 0.5 m), in 1-D, on a Coulomb
-- brake defined here as a part type with modes (docs/events.md, "Parts with modes in Lua").
-- The brake presses with a normal force N; while the block slides forward or backward its
-- law pushes mu N against the motion (the mode, not the sign of a velocity near zero, says
-- which way), and while it is stuck a velocity row v = 0 holds it with the force f.stick.
-- Its one guard is the velocity while sliding (zero: the block stops) and mu_s N - |f.stick|
-- while stuck (zero: the spring needs more than the brake holds). Same closed form as
-- stick_slip.lua: turning points x_k = (-1)^k (0.5 - 2 k mu N / k_s) at t_k = k pi / 10,
-- stuck at x_8 = 0.02912 m from t_8 = 0.8 pi s.
--
--   joinery run examples/stick_slip_lua.lua --rtol 1e-10 --atol 1e-12
local joinery = require "joinery"

local function registered(name)
  for _, t in ipairs(joinery.types()) do
    if t == name then return true end
  end
  return false
end

if not registered("lua_brake") then -- a script may be run twice in one Lua state
  joinery.part_type {
    name = "lua_brake",
    doc = "a 1-D Coulomb brake that slides and sticks (mu_s >= mu)",
    params = {
      { name = "N", default = 1, unit = "N", doc = "normal force", domain = "positive" },
      { name = "mu", default = 0.3, unit = "1", doc = "kinetic coefficient", domain = "nonnegative" },
      { name = "mu_s", default = 0.3, unit = "1", doc = "static coefficient", domain = "nonnegative" },
    },
    coords = { "x" },
    terminals = { { name = "pos", coords = { "x" } } },
    constraints = { { name = "stick", psi = function(q, v, t, p) return v.x end } },
    -- every row the part can have is listed above; each mode says which are active
    modes = {
      { name = "forward", rows = {} },
      { name = "backward", rows = {} },
      { name = "stuck", rows = { "stick" } },
    },
    initial_mode = function(q, v, t, p)
      if v.x > 0 then return "forward" elseif v.x < 0 then return "backward" end
      return "stuck" -- `admissible` releases it if the brake cannot hold
    end,
    nonideal_law = function(q, v, t, p, f, a, mode)
      if mode == "forward" then return { x = -p.mu * p.N } end
      if mode == "backward" then return { x = p.mu * p.N } end
      return { x = 0 }
    end,
    nguards = 1,
    guards = function(q, v, t, p, f, a, mode)
      if mode == "stuck" then return p.mu_s * p.N - math.abs(f.stick) end
      return v.x
    end,
    transition = function(q, v, t, p, f, guard, direction, mode)
      if mode == "forward" and direction < 0 then return "stuck" end
      if mode == "backward" and direction > 0 then return "stuck" end
      -- the holding force f.stick points against the way the block is pushed
      if mode == "stuck" and direction < 0 then return f.stick > 0 and "backward" or "forward" end
    end,
    admissible = function(q, v, t, p, f, a, mode)
      if mode == "stuck" and math.abs(f.stick) > p.mu_s * p.N then
        return f.stick > 0 and "backward" or "forward"
      end
    end,
  }
end

local sys = joinery.system { gravity = { 0, 0, 0 } }
local wall = sys:add("ground", "wall", { dim = 1, x = 0 })
local block = sys:add("mass", "block", { dim = 1, m = 1, init = { x = 0.5 } })
sys:add("lua_brake", "brake", { N = 9.81, mu = 0.3, mu_s = 0.3, pos = block.pos })
sys:add("spring", "spring", { dim = 1, k = 100, L = 0, a = wall.pos, b = block.pos })
sys:settings { t_end = 5, dt_out = 0.01 }
return sys
