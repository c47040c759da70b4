-- A 14-body humanoid-like tree (issue 44's workload): a torso on a ball joint at its base, a
-- head, arms (upper arm, forearm, hand) and legs (thigh, shin, foot) on hinge3d joints whose
-- axes turn between x, y and z, under gravity, released at rest from a pose whose centre of mass is off the ball, so it falls and swings.
-- Used by bench/joint_rows/run.sh to count the instructions of a fixed short run.
local joinery = require "joinery"
local sys = joinery.system { gravity = { 0, 0, -9.81 } }
local ground = sys:add("ground3d", "ground", {})

-- A slender box of mass m and length L along its local axis `along` (1, 2 or 3).
local function body(name, m, L, along, pos)
  local I = {}
  for i = 1, 3 do I[i] = (i == along) and m * 0.02 ^ 2 / 6 or m * (L * L + 0.02 ^ 2) / 12 end
  return sys:add("body3d", name, {
    m = m, Ixx = I[1], Iyy = I[2], Izz = I[3],
    init = { x = pos[1], y = pos[2], z = pos[3] - 1.0, -- the ball at the origin
             q0 = 1, q1 = 0, q2 = 0, q3 = 0 },
  })
end

-- A hinge at the space point p between two bodies at centres ca and cb (identity start).
local function hinge(name, a, ca, b, cb, p, n)
  sys:add("hinge3d", name, {
    rax = p[1] - ca[1], ray = p[2] - ca[2], raz = p[3] - ca[3],
    rbx = p[1] - cb[1], rby = p[2] - cb[2], rbz = p[3] - cb[3],
    nax = n[1], nay = n[2], naz = n[3], nbx = n[1], nby = n[2], nbz = n[3],
    a = a.frame, b = b.frame,
  })
end

local torso_c = { 0, 0, 1.3 }
local torso = body("torso", 30, 0.6, 3, torso_c)
sys:ball(torso:point("base", { 0, 0, -0.3 }), ground.pos, "hip")
local head_c = { 0, 0, 1.75 }
local head = body("head", 5, 0.3, 3, head_c)
hinge("neck", torso, torso_c, head, head_c, { 0, 0, 1.6 }, { 0, 0, 1 })

-- A limb of three segments hanging from the torso at `root`, sideways by `side`.
local function limb(prefix, root, lengths, masses, axes, dir)
  local parent, pc, p = torso, torso_c, root
  for k = 1, 3 do
    local L = lengths[k]
    local c = { p[1] + dir[1] * L / 2, p[2] + dir[2] * L / 2, p[3] + dir[3] * L / 2 }
    local b = body(prefix .. k, masses[k], L, 3, c)
    hinge(prefix .. "_j" .. k, parent, pc, b, c, p, axes[k])
    parent, pc = b, c
    p = { p[1] + dir[1] * L, p[2] + dir[2] * L, p[3] + dir[3] * L }
  end
end
local s = math.sqrt(0.5)
limb("larm", { 0.25, 0, 1.55 }, { 0.3, 0.28, 0.1 }, { 2, 1.5, 0.5 },
  { { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } }, { s, 0, -s })
limb("rarm", { -0.25, 0, 1.55 }, { 0.3, 0.28, 0.1 }, { 2, 1.5, 0.5 },
  { { 0, 1, 0 }, { 1, 0, 0 }, { 0, 0, 1 } }, { -s, 0, -s })
limb("lleg", { 0.12, 0, 1.0 }, { 0.45, 0.42, 0.12 }, { 8, 4, 1 },
  { { 1, 0, 0 }, { 0, 1, 0 }, { 1, 0, 0 } }, { 0.2, 0.1, -0.97 })
limb("rleg", { -0.12, 0, 1.0 }, { 0.45, 0.42, 0.12 }, { 8, 4, 1 },
  { { 0, 1, 0 }, { 1, 0, 0 }, { 0, 0, 1 } }, { -0.2, -0.1, -0.97 })

sys:settings { t_end = 0.5 }
return sys
