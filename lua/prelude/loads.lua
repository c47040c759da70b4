-- lua/prelude/loads.lua — sys:load(name, frame, fn): a force and torque on a frame, given
-- as a Lua function of time and the frame's state (docs/bodies2d.md, docs/bodies3d.md).
--
--   planar frame (x, y, theta):   fn(t, q, v) -> { fx =, fy =, tau = }   (space axes, N, N m)
--   spatial frame (x, y, z, q0..q3): fn(t, q, v) -> { fx =, fy =, fz =, tx =, ty =, tz = }
--     v also carries the space angular velocity wx, wy, wz = 2 E(q) q' / |q|^2; the torque
--     enters as Q_q = 2 E(q)^T tau / |q|^2, the force at the frame origin. Both maps are
--     torque3d's own (host.quaternion_maps, lua/loads.c).
--
-- A load is a part of one of two Lua part types (a load on a planar frame, on a spatial
-- one), registered once per environment: a massless copy of the frame as a coordinate-block
-- terminal, so glue elimination substitutes it away like torque2d and torque3d (a load
-- costs no coordinates and no rows). The call's function is held by the system
-- (common.hold) and found through the part's slot. Omitted components are zero.
local common, host = ...

local planar = { fx = 'x', fy = 'y', tau = 'theta' }
local spatial = { fx = true, fy = true, fz = true, tx = true, ty = true, tz = true }

local function components(name, r, allowed, list)
  if type(r) ~= 'table' then
    error(string.format("sys:load '%s': the function must return a table such as "
      .. '{ %s }, got %s', name, list, type(r)), 0)
  end
  for k in pairs(r) do
    if not allowed[k] then
      error(string.format("sys:load '%s': unknown component '%s' (this frame takes %s)",
        name, tostring(k), list), 0)
    end
  end
  return r
end

-- The model's inputs by name for a load's function: a read-only view of p.inputs (by index,
-- declaration order), the names taken from sys at the first read.
local function inputs_view(sys, name)
  local index, values
  local view = setmetatable({}, {
    __index = function(_, key)
      if not index then
        index = {}
        for i, n in ipairs(sys:inputs()) do index[n] = i end
      end
      local i = index[key]
      if not i then error(string.format("sys:load '%s': no input '%s'", name, tostring(key)), 2) end
      return values[i]
    end,
    __newindex = function() error(string.format("sys:load '%s': inputs are read-only here", name), 2) end,
  })
  return function(u) values = u; return view end
end

local function planar_force(name, fn, inputs)
  return function(q, v, t, u)
    local r = components(name, fn(t, q, v, inputs(u)), planar, 'fx, fy, tau')
    return { x = r.fx or 0, y = r.fy or 0, theta = r.tau or 0 }
  end
end

local function spatial_force(name, fn, rate, torque, inputs)
  return function(q, v, t, u)
    local q0, q1, q2, q3 = q.q0, q.q1, q.q2, q.q3
    local wx, wy, wz = rate(q0, q1, q2, q3, v.q0, v.q1, v.q2, v.q3)
    local state_v = { x = v.x, y = v.y, z = v.z, q0 = v.q0, q1 = v.q1, q2 = v.q2, q3 = v.q3,
      wx = wx, wy = wy, wz = wz }
    local r = components(name, fn(t, q, state_v, inputs(u)), spatial, 'fx, fy, fz, tx, ty, tz')
    local Q0, Q1, Q2, Q3 = torque(q0, q1, q2, q3, r.tx or 0, r.ty or 0, r.tz or 0)
    return { x = r.fx or 0, y = r.fy or 0, z = r.fz or 0, q0 = Q0, q1 = Q1, q2 = Q2, q3 = Q3 }
  end
end

local kinds = {
  [3] = { base = 'load_planar', frame = 'planar', coords = { 'x', 'y', 'theta' } },
  [7] = { base = 'load_spatial', frame = 'spatial',
          coords = { 'x', 'y', 'z', 'q0', 'q1', 'q2', 'q3' } },
}
-- environment -> { [dim] = { name =, box = } }
local registered = setmetatable({}, { __mode = 'k' })

-- The load type for frames of dimension dim in sys's environment: its name and box.
local function load_type(sys, dim)
  local env, part_type = host.part_type_of(sys)
  local names = registered[env] or {}
  registered[env] = names
  if not names[dim] then
    local kind, box = kinds[dim], common.new_box()
    local name = common.register(part_type, kind.base, false, {
      doc = 'internal: a load on a ' .. kind.frame .. ' frame, given by a function (sys:load)',
      params = { common.slot_param },
      coords = kind.coords,
      terminals = { { name = 'frame', coords = kind.coords } },
      force = function(q, v, t, p) return common.held(p, box)(q, v, t, p.inputs) end,
    })
    names[dim] = { name = name, box = box }
  end
  return names[dim]
end

host.system_methods.load = function(sys, name, frame, fn)
  if not common.is_identifier(name) then
    error(string.format('sys:load: the name must be an identifier (letters, digits, _), '
      .. 'got %s', type(name) == 'string' and "'" .. name .. "'" or type(name)), 2)
  end
  local ok, dim = pcall(function() return frame.dim end)
  if not ok or type(dim) ~= 'number' then
    error(string.format("sys:load '%s': the frame must be a frame terminal (body.frame, "
      .. 'body:frame_at(...)), got %s', name, type(frame)), 2)
  end
  if dim ~= 3 and dim ~= 7 then
    error(string.format("sys:load '%s': %s is a %d-D terminal, a point where a frame is "
      .. 'needed (a planar frame is 3-D: x, y, theta; a spatial one 7-D: x, y, z, q0..q3); '
      .. 'body:frame_at(...) gives the frame at a body point', name, frame.name, dim), 2)
  end
  if type(fn) ~= 'function' then
    error(string.format("sys:load '%s': the load must be a function (t, q, v) returning "
      .. 'its components, got %s', name, type(fn)), 2)
  end
  local load = load_type(sys, dim)
  local inputs = inputs_view(sys, name)
  local force
  if dim == 3 then
    force = planar_force(name, fn, inputs)
  else
    local rate, torque = host.quaternion_maps(sys)
    force = spatial_force(name, fn, rate, torque, inputs)
  end
  local added, res = pcall(sys.add, sys, load.name, name,
    { frame = frame, slot = common.hold(sys, load.box, force) })
  if not added then error(common.strip(res), 2) end
  return res
end
