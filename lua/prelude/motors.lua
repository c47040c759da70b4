-- lua/prelude/motors.lua — sys:motor and sys:actuator: driven joints (components/motor.c,
-- docs/parts.md "Motors and actuators").
--
--   sys:motor { name =, joint = part | a =, b = [, axis =, linear = true],
--               position = r | velocity = w | torque = f | force = f [, speed =, gain =] }
--     joint: a hinge3d, prismatic3d or slider2d part (the motor takes its axis and the frames
--     its terminals a and b are glued to); a, b: two planar frames (3-D: a pin motor, or with
--     linear = true a slider motor along axis = angle), two angles (1-D), or two spatial frames
--     (7-D, axis = {x, y, z} in a's axes, a hinge motor, or with linear = true a prismatic one).
--     Without a, b alone is a 1-D coordinate (an angle or length) driven against the ground.
--     r, w, f: a number (position r + speed t; velocity w; effort f), the name of a model
--     input (sys:input) scaled by gain, or a function of t (made the input "<name>_<key>",
--     with spec.breakpoints). Exactly one of position, velocity, torque / force.
--   sys:actuator { name =, on = part.coord, input = name | force = number [, gain = 1] }
--     the generalized force force + gain u on a 1-D coordinate terminal.
--
-- Each adds one part (pin_motor2d, slider_motor2d, hinge_motor3d, prismatic_motor3d or
-- actuator) named `name`; its outputs <name>.angle (or displacement), .rate (speed), .torque
-- (force) and .power; the drive's row force is force.<name>.drive. Errors at the script line.
local common, host = ...
local describe = common.describe

-- Every error is raised at level 0 and re-raised by the method at the script's line.
local function fail(what, name, fmt, ...)
  error(string.format("%s '%s': " .. fmt, what, name, ...), 0)
end

local function is_terminal(t)
  return host.owner(t) ~= nil and pcall(function() return t.dim end)
    and type(t.dim) == 'number'
end

-- The index of input `input` of sys, or an error naming the motor and the key.
local function input_index(sys, what, name, key, input)
  local k = host.find_input(sys, input)
  if k == nil then
    error(string.format("%s '%s': %s = '%s' is no input of this system (declare it with "
      .. 'sys:input { name = "%s", ... } before the motor)', what, name, key, input, input), 0)
  end
  return k
end

-- The terminal t's joint end is glued to (the body's frame), or t itself.
local function target(t)
  local other = host.glued_to(t, 1)
  if other ~= nil and host.glued_to(t, 2) == nil then return other end
  return t
end

local modes = { position = 0, velocity = 1, torque = 2, force = 2 }

-- The drive parameters of spec: mode, input, gain, the constant part.
local function drive(sys, spec, name, rotary)
  local given = {}
  for _, key in ipairs { 'position', 'velocity', 'torque', 'force' } do
    if spec[key] ~= nil then given[#given + 1] = key end
  end
  local effort = rotary and 'torque' or 'force'
  if #given == 0 then
    fail('sys:motor', name, 'give one of position, velocity or %s (the drive)', effort)
  end
  if #given > 1 then
    fail('sys:motor', name, '%s and %s given: a motor drives in one mode (position, '
      .. 'velocity or %s)', given[1], given[2], effort)
  end
  local key = given[1]
  if (key == 'torque' or key == 'force') and key ~= effort then
    fail('sys:motor', name, '%s is a %s motor: its effort is %s = ..., not %s', name,
      rotary and 'rotary' or 'linear', effort, key)
  end
  local value = spec[key]
  local p = { mode = modes[key], gain = spec.gain or 1 }
  if type(p.gain) ~= 'number' then
    fail('sys:motor', name, 'gain must be a number, got %s', describe(p.gain))
  end
  if spec.speed ~= nil and key ~= 'position' then
    fail('sys:motor', name, 'speed = ... goes with position = ... (the reference angle0 + '
      .. 'speed t); for a velocity drive write velocity = %s', tostring(spec.speed))
  end
  if spec.speed ~= nil and type(spec.speed) ~= 'number' then
    fail('sys:motor', name, 'speed must be a number, got %s', describe(spec.speed))
  end
  local x0 = rotary and 'angle0' or 'x0'
  if type(value) == 'number' then
    if key == 'position' then
      p[x0], p.speed = value, spec.speed or 0
    elseif key == 'velocity' then
      p.speed = value
    else
      p[effort] = value
    end
  elseif type(value) == 'string' then
    p.input = input_index(sys, 'sys:motor', name, key, value)
    if key == 'position' then p.speed = spec.speed or 0 end
  elseif type(value) == 'function' then
    -- a signal input of its own, "<motor>_<key>": its derivatives come from hyper-dual
    -- evaluation (joinery.math inside fn), its breakpoints from spec.breakpoints
    local input = name .. '_' .. key
    local ok, err = pcall(sys.input, sys, { name = input, fn = value,
      breakpoints = spec.breakpoints })
    if not ok then fail('sys:motor', name, '%s = function(t): %s', key, common.strip(err)) end
    p.input = input_index(sys, 'sys:motor', name, key, input)
    if key == 'position' then p.speed = spec.speed or 0 end
  else
    fail('sys:motor', name, '%s must be a number, an input name or a function of t, got %s',
      key, describe(value))
  end
  return p
end

local function vector3(what, name, key, v)
  if type(v) ~= 'table' or #v ~= 3 or type(v[1]) ~= 'number' or type(v[2]) ~= 'number'
      or type(v[3]) ~= 'number' then
    error(string.format("%s '%s': %s must be {x, y, z} (in frame a's axes), got %s", what,
      name, key, describe(v)), 0)
  end
  return v
end

local function add(sys, part_type, name, p)
  local ok, res = pcall(sys.add, sys, part_type, name, p)
  if not ok then error(common.strip(res), 0) end
  return res
end

-- The part type and its geometry parameters for a, b (and spec.axis, spec.linear).
local function from_terminals(spec, name, a, b)
  local linear = spec.linear == true
  if a.dim ~= b.dim then
    fail('sys:motor', name, 'terminals %s (%d-D) and %s (%d-D) differ: a motor drives two '
      .. 'planar frames (3-D), two angles (1-D) or two spatial frames (7-D)', a.name, a.dim,
      b.name, b.dim)
  end
  if a.dim == 1 then
    if linear or spec.axis ~= nil then
      fail('sys:motor', name, 'terminals %s and %s are 1-D (angles): no axis or linear', a.name,
        b.name)
    end
    return 'pin_motor2d', { dim = 1 }, true
  elseif a.dim == 3 then
    if linear then
      local angle = spec.axis or 0
      if type(angle) ~= 'number' then
        fail('sys:motor', name, 'a planar slider motor takes axis = angle (rad, in frame a), '
          .. 'got %s', describe(angle))
      end
      return 'slider_motor2d', { angle = angle }, false
    end
    if spec.axis ~= nil then
      fail('sys:motor', name, 'planar frames %s and %s turn about z: a pin motor takes no '
        .. 'axis (linear = true and axis = angle make a slider motor)', a.name, b.name)
    end
    return 'pin_motor2d', { dim = 3 }, true
  elseif a.dim == 7 then
    if spec.axis == nil then
      fail('sys:motor', name, 'spatial frames %s and %s: give axis = {x, y, z} (in frame a\'s '
        .. 'axes), the %s axis', a.name, b.name, linear and 'sliding' or 'hinge')
    end
    local n = vector3('sys:motor', name, 'axis', spec.axis)
    if linear then
      local ra = spec.ra and vector3('sys:motor', name, 'ra', spec.ra) or { 0, 0, 0 }
      local rb = spec.rb and vector3('sys:motor', name, 'rb', spec.rb) or { 0, 0, 0 }
      return 'prismatic_motor3d', { nax = n[1], nay = n[2], naz = n[3], rax = ra[1],
        ray = ra[2], raz = ra[3], rbx = rb[1], rby = rb[2], rbz = rb[3] }, false
    end
    local nb = spec.axis_b and vector3('sys:motor', name, 'axis_b', spec.axis_b) or n
    return 'hinge_motor3d', { nax = n[1], nay = n[2], naz = n[3], nbx = nb[1], nby = nb[2],
      nbz = nb[3] }, true
  end
  fail('sys:motor', name, 'terminals %s and %s are %d-D points: a motor drives frames (a pin '
    .. 'joins the points; drive the bodies\' frames or angles)', a.name, b.name, a.dim)
end

local joint_params = {
  hinge3d = { 'hinge_motor3d', { 'nax', 'nay', 'naz', 'nbx', 'nby', 'nbz' }, true },
  prismatic3d = { 'prismatic_motor3d',
    { 'rax', 'ray', 'raz', 'rbx', 'rby', 'rbz', 'nax', 'nay', 'naz' }, false },
  slider2d = { 'slider_motor2d', { 'angle' }, false },
}

local function motor(sys, spec)
  if type(spec) ~= 'table' then
    error('sys:motor: give a table { name =, a =, b = (or joint =), position | velocity | '
      .. 'torque = ... }, got ' .. describe(spec), 0)
  end
  local name = spec.name
  if not common.is_identifier(name) then
    error('sys:motor: name must be an identifier (letters, digits, _), got '
      .. describe(name), 0)
  end
  for k in pairs(spec) do
    local known = { name = 1, joint = 1, a = 1, b = 1, axis = 1, axis_b = 1, linear = 1,
      ra = 1, rb = 1, position = 1, velocity = 1, torque = 1, force = 1, speed = 1, gain = 1,
      breakpoints = 1 }
    if not known[k] then
      fail('sys:motor', name, 'unknown key %s (keys: name, joint or a and b, axis, linear, '
        .. 'position, velocity, torque, force, speed, gain)', describe(k))
    end
  end
  local part_type, geom, rotary, a, b
  if spec.joint ~= nil then
    local joint = spec.joint
    if spec.a ~= nil or spec.b ~= nil or spec.axis ~= nil then
      fail('sys:motor', name, 'joint = ... takes the frames and the axis from the joint: no '
        .. 'a, b or axis with it')
    end
    local ok, kind = pcall(function() return joint.type end)
    if host.owner(joint) == nil or not ok or is_terminal(joint) then
      fail('sys:motor', name, 'joint must be a hinge3d, prismatic3d or slider2d part, got %s',
        describe(joint))
    end
    local entry = joint_params[kind]
    if not entry then
      fail('sys:motor', name, "joint '%s' is a %s: a motor drives a hinge3d, prismatic3d or "
        .. 'slider2d part (a planar pin is a glue: give a = and b =, the two frames or angles)',
        joint.name, kind)
    end
    part_type, rotary = entry[1], entry[3]
    geom = {}
    for _, key in ipairs(entry[2]) do geom[key] = host.part_param(joint, key) end
    a, b = target(joint.a), target(joint.b)
  else
    b = spec.b
    a = spec.a
    if not is_terminal(b) then
      fail('sys:motor', name, 'b must be a terminal (the frame or angle the motor turns), '
        .. 'got %s', describe(b))
    end
    if a == nil then
      if b.dim ~= 1 then
        fail('sys:motor', name, 'without a, b must be a 1-D coordinate (such as body.theta), '
          .. 'got %s (%d-D); give a = the frame b turns against', b.name, b.dim)
      end
      if spec.axis ~= nil then
        fail('sys:motor', name, 'b = %s is a coordinate: no axis', b.name)
      end
      part_type, geom, rotary = 'actuator', {}, not spec.linear
    else
      if not is_terminal(a) then
        fail('sys:motor', name, 'a must be a terminal (the frame b turns against), got %s',
          describe(a))
      end
      part_type, geom, rotary = from_terminals(spec, name, a, b)
    end
  end
  local p = drive(sys, spec, name, rotary)
  if part_type == 'actuator' then
    p.x0, p.angle0, p.force, p.torque = p.x0 or p.angle0, nil, p.force or p.torque, nil
  end
  for k, v in pairs(geom) do p[k] = v end
  if part_type == 'actuator' then
    p.coord = b
  else
    p.a, p.b = a, b
  end
  return add(sys, part_type, name, p)
end

local function actuator(sys, spec)
  if type(spec) ~= 'table' then
    error('sys:actuator: give a table { name =, on = part.coord, input = name }, got '
      .. describe(spec), 0)
  end
  local name = spec.name
  if not common.is_identifier(name) then
    error('sys:actuator: name must be an identifier (letters, digits, _), got '
      .. describe(name), 0)
  end
  for k in pairs(spec) do
    if not ({ name = 1, on = 1, input = 1, gain = 1, force = 1 })[k] then
      fail('sys:actuator', name, 'unknown key %s (keys: name, on, input, gain, force)',
        describe(k))
    end
  end
  local on = spec.on
  if not is_terminal(on) or on.dim ~= 1 then
    fail('sys:actuator', name, 'on must be a 1-D coordinate terminal (such as cart.x), got %s',
      is_terminal(on) and string.format('%s (%d-D)', on.name, on.dim) or describe(on))
  end
  local p = { mode = 2, gain = spec.gain or 1, force = spec.force or 0, coord = on }
  if type(p.gain) ~= 'number' or type(p.force) ~= 'number' then
    fail('sys:actuator', name, 'gain and force must be numbers')
  end
  if spec.input ~= nil then
    if type(spec.input) ~= 'string' then
      fail('sys:actuator', name, 'input must be the name of a model input, got %s',
        describe(spec.input))
    end
    p.input = input_index(sys, 'sys:actuator', name, 'input', spec.input)
  elseif spec.force == nil then
    fail('sys:actuator', name, 'give input = name (the force is gain * input) or force = '
      .. 'a constant')
  end
  return add(sys, 'actuator', name, p)
end

-- The methods: each error at the line of the script's call.
local function at_call(impl)
  return function(sys, spec)
    local ok, res = pcall(impl, sys, spec)
    if not ok then error(res, 2) end
    return res
  end
end
host.system_methods.motor = at_call(motor)
host.system_methods.actuator = at_call(actuator)
