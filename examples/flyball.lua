-- A flyball (Watt) governor: a vertical spindle on a hinge to the ground, two arms hinged at
-- its top carrying the balls, and two links from the arms' middles down to a sleeve that
-- slides on the spindle and turns with it. Each arm, its link, the sleeve and the spindle
-- close a loop: the joints form a tree (the spindle, the arms, the links hanging from them)
-- plus two closing joints, which the spatial recursion carries beside the tree.
--
--   spindle: hinge about z at the origin; the arms' pivot P0 = (0, 0, H) on its axis
--   arm k (the ball's body, centre at the ball): hinge at P0 about the horizontal axis
--     normal to its plane; ball at P0 + L (s sin(theta), 0, -cos(theta)), s = +1, -1
--   link k: hinge at the arm's point A at distance a from P0, hinge at the sleeve's point on
--     the axis; length b
--   sleeve: prismatic along z on the spindle
--
-- Started in its steady turn: every part turns about z at omega with the arms at theta0,
-- where gravity and the centrifugal forces balance. With isotropic inertias for the arms and
-- links (their rotation energy does not depend on theta), that balance is the stationary
-- point of V(theta) - omega^2 / 2 sum m_i r_i(theta)^2 over the parts' centres, which gives
-- omega in closed form (below). The spindle is free: the steady turn keeps omega. No method or
-- tolerance is set: it runs at the defaults. The script returns the system and `gov` (the
-- data, the closed form, and gov.build(spin): the governor turning at spin * omega).
-- tests/lua/t_flyball.lua checks the steady turn across methods and tolerances, and energy
-- and angular momentum from a faster start, whose arms swing out.
--
--   joinery run examples/flyball.lua
local joinery = require "joinery"

local g = 9.81
local gov = {
  H = 0.5, L = 0.3, a = 0.15, b = 0.15, -- m: pivot height, arm to ball, arm to link, link
  m_ball = 1.0, I_ball = 1e-3, -- kg, kg m^2 (isotropic)
  m_link = 0.2, I_link = 4e-4,
  m_sleeve = 0.5, I_sleeve = 4e-4,
  m_spindle = 2.0, I_spindle_axial = 0.01, I_spindle = 0.05,
  theta0 = math.rad(40), -- the arms' angle from the downward vertical in the steady turn
  g = g,
}

-- The parts' centres in the arm's plane (radius r, height z) at the arm angle theta, and
-- their derivatives in theta.
function gov.shape(theta)
  local s, c = math.sin(theta), math.cos(theta)
  local xa, za = gov.a * s, gov.H - gov.a * c -- the link's upper hinge
  local root = math.sqrt(gov.b ^ 2 - xa ^ 2)
  local zs = za - root -- the sleeve's hinge on the axis
  local dxa, dza = gov.a * c, gov.a * s
  local dzs = dza + xa * dxa / root
  return {
    ball = { r = gov.L * s, z = gov.H - gov.L * c, dr = gov.L * c, dz = gov.L * s },
    link = { r = xa / 2, z = (za + zs) / 2, dr = dxa / 2, dz = (dza + dzs) / 2 },
    sleeve = { r = 0, z = zs, dr = 0, dz = dzs },
    upper = { r = xa, z = za }, lower_z = zs,
  }
end

-- d/dtheta [g sum m z - omega^2 / 2 sum m r^2] = 0 for omega^2
function gov.steady_omega(theta)
  local p = gov.shape(theta)
  local grav = 2 * gov.m_ball * p.ball.dz + 2 * gov.m_link * p.link.dz + gov.m_sleeve * p.sleeve.dz
  local cent = 2 * gov.m_ball * p.ball.r * p.ball.dr + 2 * gov.m_link * p.link.r * p.link.dr
  return math.sqrt(gov.g * grav / cent)
end

gov.omega = gov.steady_omega(gov.theta0)

-- The governor with every part turning about z at spin * omega (spin = 1: the steady turn).
function gov.build(spin)
  local sys = joinery.system { gravity = { 0, 0, -g } }
  local ground = sys:add("ground3d", "ground", {})
  local w = spin * gov.omega

  -- A body at centre c turning about z at w (v = w e_z x c), identity orientation.
  local function body(name, m, Ixx, Iyy, Izz, c)
    return sys:add("body3d", name, {
      m = m, Ixx = Ixx, Iyy = Iyy, Izz = Izz,
      init = { x = c[1], y = c[2], z = c[3], q0 = 1, q1 = 0, q2 = 0, q3 = 0 },
      vel = { x = -w * c[2], y = w * c[1], z = 0, omega = { 0, 0, w } },
    })
  end

  -- A joint at the space point p between frames of bodies centred at ca and cb (every body
  -- starts at the identity, so one axis n serves both frames).
  local function joint(kind, name, fa, ca, fb, cb, p, n)
    return sys:add(kind, name, {
      rax = p[1] - ca[1], ray = p[2] - ca[2], raz = p[3] - ca[3],
      rbx = p[1] - cb[1], rby = p[2] - cb[2], rbz = p[3] - cb[3],
      nax = n[1], nay = n[2], naz = n[3], nbx = n[1], nby = n[2], nbz = n[3],
      a = fa, b = fb,
    })
  end

  local shape = gov.shape(gov.theta0)
  local origin = { 0, 0, 0 }
  local spindle_c = { 0, 0, gov.H / 2 }
  local spindle = body("spindle", gov.m_spindle, gov.I_spindle, gov.I_spindle,
    gov.I_spindle_axial, spindle_c)
  joint("hinge3d", "base", ground.frame, origin, spindle.frame, spindle_c, origin, { 0, 0, 1 })
  local sleeve_c = { 0, 0, shape.sleeve.z }
  local sleeve = body("sleeve", gov.m_sleeve, gov.I_sleeve, gov.I_sleeve, gov.I_sleeve, sleeve_c)
  -- the prismatic joint's point: the sleeve's centre, on the spindle's axis
  sys:add("prismatic3d", "slide", {
    rax = 0, ray = 0, raz = sleeve_c[3] - spindle_c[3], rbx = 0, rby = 0, rbz = 0,
    nax = 0, nay = 0, naz = 1, a = spindle.frame, b = sleeve.frame,
  })

  local pivot = { 0, 0, gov.H }
  for k, side in ipairs { 1, -1 } do
    local ball_c = { side * shape.ball.r, 0, shape.ball.z }
    local upper = { side * shape.upper.r, 0, shape.upper.z }
    local link_c = { side * shape.link.r, 0, shape.link.z }
    local axis = { 0, 1, 0 }
    local arm = body("arm" .. k, gov.m_ball, gov.I_ball, gov.I_ball, gov.I_ball, ball_c)
    local link = body("link" .. k, gov.m_link, gov.I_link, gov.I_link, gov.I_link, link_c)
    joint("hinge3d", "pivot" .. k, spindle.frame, spindle_c, arm.frame, ball_c, pivot, axis)
    joint("hinge3d", "elbow" .. k, arm.frame, ball_c, link.frame, link_c, upper, axis)
    joint("hinge3d", "collar" .. k, link.frame, link_c, sleeve.frame, sleeve_c, sleeve_c, axis)
  end
  sys:settings { t_end = 5, dt_out = 0.01 }
  return sys
end

return gov.build(1), gov
