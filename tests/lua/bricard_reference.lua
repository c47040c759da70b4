-- An independent model of the Bricard linkage of examples/bricard.lua, for t_bricard.lua:
-- relative coordinates instead of spatial bodies. One Lua part whose coordinates are the
-- angles th1..th5 of the first five hinges (the open chain O -> bar 1 -> ... -> bar 5);
-- its kinetic and potential energy come from the forward kinematics of the five bricks
-- written out here (rotation matrices, angular velocities summed along the chain), and the
-- loop closes with five position rows: bar 5's end at Q and its hinge axis along space x.
-- Nothing of body3d, hinge3d, quaternions or glue is shared with the example: only the
-- geometry, the masses and the engine's integrator and solve. (The closure rows are again
-- redundant, rank 4 of 5: Bricard's linkage has one degree of freedom in any coordinates.)
--
-- Returns the system and a function P3(th) giving the point (1, -1, 0) of bar 2 from the
-- angles (plain numbers).
local joinery = require "joinery"
local M = joinery.math

local g, mass, L, w = 9.81, 1.0, 1.0, 0.1
local I_axial, I_transverse = mass * (w * w + w * w) / 12, mass * (L * L + w * w) / 12
-- bar k runs from corner k along d[k] (space axes at the start); hinge k turns about n[k]
local d = { { 1, 0, 0 }, { 0, -1, 0 }, { 0, 0, 1 }, { -1, 0, 0 }, { 0, 1, 0 } }
local n = { 2, 3, 1, 2, 3 } -- hinge axes: y, z, x, y, z (index of the axis)
local inertia = {}
for k = 1, 5 do
  inertia[k] = {}
  for i = 1, 3 do inertia[k][i] = d[k][i] ~= 0 and I_axial or I_transverse end
end

local function rotation(axis, c, s) -- about a coordinate axis, by the angle with cos c, sin s
  if axis == 1 then return { { 1, 0, 0 }, { 0, c, -s }, { 0, s, c } } end
  if axis == 2 then return { { c, 0, s }, { 0, 1, 0 }, { -s, 0, c } } end
  return { { c, -s, 0 }, { s, c, 0 }, { 0, 0, 1 } }
end
local function matmul(a, b)
  local r = {}
  for i = 1, 3 do
    r[i] = {}
    for j = 1, 3 do r[i][j] = a[i][1] * b[1][j] + a[i][2] * b[2][j] + a[i][3] * b[3][j] end
  end
  return r
end
local function apply(a, x)
  return { a[1][1] * x[1] + a[1][2] * x[2] + a[1][3] * x[3],
           a[2][1] * x[1] + a[2][2] * x[2] + a[2][3] * x[3],
           a[3][1] * x[1] + a[3][2] * x[2] + a[3][3] * x[3] }
end
local function cross(a, b)
  return { a[2] * b[3] - a[3] * b[2], a[3] * b[1] - a[1] * b[3], a[1] * b[2] - a[2] * b[1] }
end

-- Orientations R[k] of the bars and the corners J[k] (J[1] = O) for angles th (Jets or
-- numbers; sin and cos from `trig`).
local function chain(th, trig)
  local R, J = {}, { { 0, 0, 0 } }
  local prev = { { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } }
  for k = 1, 5 do
    R[k] = matmul(prev, rotation(n[k], trig.cos(th[k]), trig.sin(th[k])))
    local e = apply(R[k], d[k])
    J[k + 1] = { J[k][1] + e[1], J[k][2] + e[2], J[k][3] + e[3] }
    prev = R[k]
  end
  return R, J
end

local names = { "th1", "th2", "th3", "th4", "th5" }
local function angles(q) return { q.th1, q.th2, q.th3, q.th4, q.th5 } end

if not (function() for _, t in ipairs(joinery.types()) do if t == "bricard_chain" then return true end end end)() then
  joinery.part_type {
    name = "bricard_chain", doc = "Bricard's linkage in the angles of its first five hinges",
    coords = names,
    kinetic = function(q, v)
      local R, J = chain(angles(q), M)
      local th_dot = angles(v)
      local omega, u, T = { 0, 0, 0 }, { 0, 0, 0 }, 0 -- angular velocity, velocity of corner k
      for k = 1, 5 do
        local axis = { R[k][1][n[k]], R[k][2][n[k]], R[k][3][n[k]] } -- hinge k in space
        for i = 1, 3 do omega[i] = omega[i] + axis[i] * th_dot[k] end
        local e = apply(R[k], d[k])
        local half = cross(omega, { e[1] / 2, e[2] / 2, e[3] / 2 })
        local vc = { u[1] + half[1], u[2] + half[2], u[3] + half[3] }
        local body = { -- R^T omega: the angular velocity in the bar's axes
          R[k][1][1] * omega[1] + R[k][2][1] * omega[2] + R[k][3][1] * omega[3],
          R[k][1][2] * omega[1] + R[k][2][2] * omega[2] + R[k][3][2] * omega[3],
          R[k][1][3] * omega[1] + R[k][2][3] * omega[2] + R[k][3][3] * omega[3] }
        T = T + mass / 2 * (vc[1] * vc[1] + vc[2] * vc[2] + vc[3] * vc[3])
        for i = 1, 3 do T = T + inertia[k][i] / 2 * body[i] * body[i] end
        local full = cross(omega, e)
        u = { u[1] + full[1], u[2] + full[2], u[3] + full[3] }
      end
      return T
    end,
    potential = function(q)
      local R, J = chain(angles(q), M)
      local V = 0
      for k = 1, 5 do V = V + mass * g * (J[k][2] + J[k + 1][2]) / 2 end -- centre at mid-bar
      return V
    end,
    constraints = {
      { name = "closure", rows = 5, phi = function(q)
        local R, J = chain(angles(q), M)
        -- bar 5 ends at Q = (0, 0, 1); its x axis (hinge 6's) stays along space x
        return { J[6][1], J[6][2], J[6][3] - 1, R[5][2][1], R[5][3][1] }
      end },
    },
  }
end

local sys = joinery.system { gravity = { 0, -g, 0 } }
sys:add("bricard_chain", "chain", {})
local function P3(th)
  local _, J = chain(th, math)
  return J[3]
end
return sys, P3
