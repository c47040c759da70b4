-- lua/prelude/constrain.lua — the Lua half of sys:constrain{...} (lua/constrain.c has the
-- C half, which checks the `on` list, and the user's summary; docs/constraints.md is the
-- user's guide). It sets host.constrain_impl(sys, spec, on, dims, part_type, env), which
-- sys:constrain calls so that an error raised at level 3 points at the script's call of
-- sys:constrain (level 1 is impl, 2 the C method). Errors of the functions it calls are
-- located in this chunk: they are caught and raised again at the script's line.
--
-- The constraint is a part of a Lua part type with one massless coordinate x<i> per entry
-- of x, one coordinate-block terminal t<i> per `on` item and the rows r1 .. rk. Types are
-- registered once and reused: one per shape (the terminals' dimensions, rows, kind, a law
-- or not) and per place in the script where the functions are defined, since the engine's
-- messages name a function by the type's label "phi (model.lua:84)" — so the type's
-- functions are stand-ins carrying the script function's source and line. The call's own
-- functions are held by the system (common.hold) and found through the part's slot.
local common, host = ...
local strip = common.strip

local fields = { name = true, on = true, phi = true, psi = true, accel = true,
                 rows = true, kind = true, nonideal = true }
local valid = 'name, on, phi, psi, accel, rows, kind, nonideal'
local kind_of = { phi = 'position', psi = 'velocity', accel = 'acceleration' }
local signature = { phi = 'phi = function(x, t)', psi = 'psi = function(x, xd, t)',
                    accel = 'accel = function(x, xd, t) returning A, b' }

-- A read-only array of the values of q at names, refilled by fill(q) (what: its name in
-- the message a write raises). Reused between calls, as docs/constraints.md says.
local function array_view(names, what)
  local n, backing = #names, {}
  local view = setmetatable({}, {
    __index = backing,
    __newindex = host.read_only(what),
    __len = function() return n end,
    __metatable = false,
  })
  return function(q)
    for i = 1, n do backing[i] = q[names[i]] end
    return view
  end
end

-- A function calling target whose debug information (source, line defined) is fn's: the
-- part type takes its label from it.
local function stand_in(fn, target)
  local source, line = host.function_site(fn)
  local code = string.rep('\n', math.max(line, 1) - 1)
    .. 'local target = ... return function(...) return target(...) end'
  return assert(load(code, source, 't'))(target)
end

-- The part type's functions for coordinates `names`: they pass the script's functions the
-- arrays x, xd (and xdd for the law), as the `flat` form of joinery.part_type would.
local function dispatchers(names, box)
  local x, xd, xdd = array_view(names, 'q'), array_view(names, 'v'), array_view(names, 'a')
  local held = common.held
  return {
    phi = function(q, t, p) return held(p, box).fn(x(q), t) end,
    psi = function(q, v, t, p) return held(p, box).fn(x(q), xd(v), t) end,
    accel = function(q, v, t, p) return held(p, box).fn(x(q), xd(v), t) end,
    law = function(q, v, t, p, f, a) return held(p, box).law(x(q), xd(v), t, f, xdd(a)) end,
  }
end

local function site(fn)
  if fn == nil then return '-' end
  local source, line = host.function_site(fn)
  return source .. ':' .. line
end

-- environment -> { [shape key] = { name =, box = } }
local registered = setmetatable({}, { __mode = 'k' })

-- The type for this shape and these functions' sites in env: its name and box.
local function constraint_type(part_type, env, dims, rows, field, fn, law)
  local key = table.concat(dims, ',') .. '|' .. rows .. '|' .. field .. '|' .. site(fn) .. '|'
    .. site(law)
  local names = registered[env] or {}
  registered[env] = names
  if names[key] then return names[key] end
  local coords, terminals, n = {}, {}, 0
  for i, d in ipairs(dims) do
    local block = {}
    for c = 1, d do
      n = n + 1
      coords[n] = 'x' .. n
      block[c] = coords[n]
    end
    terminals[i] = { name = 't' .. i, coords = block }
  end
  local box = common.new_box()
  local calls = dispatchers(coords, box)
  local entry = { name = 'r', rows = rows, kind = kind_of[field],
                  [field] = stand_in(fn, calls[field]) }
  local name = common.register(part_type, 'constrain', true, {
    doc = string.format('internal: a %s constraint on %d coordinates, %d row%s (sys:constrain)',
      kind_of[field], n, rows, rows == 1 and '' or 's'),
    params = { common.slot_param }, coords = coords, terminals = terminals,
    constraints = { entry }, nonideal_law = law and stand_in(law, calls.law),
  })
  names[key] = { name = name, box = box }
  return names[key]
end

host.constrain_impl = function(sys, spec, on, dims, part_type, env)
  local name = spec.name
  if not common.is_identifier(name) then
    error('sys:constrain needs name = an identifier (it names the part and the rows: '
      .. 'force.<name>.r1, ...), got ' .. (type(name) == 'string' and ("'" .. name .. "'")
      or type(name)), 3)
  end
  local function bad(fmt, ...)
    error(string.format("constraint '%s': " .. fmt, name, ...), 4)
  end
  for k in pairs(spec) do
    if not fields[k] then bad("unknown field '%s' (valid: %s)", tostring(k), valid) end
  end
  local field
  for _, f in ipairs { 'phi', 'psi', 'accel' } do
    if spec[f] ~= nil then
      if field then
        bad('give one of phi, psi and accel, not both %s and %s', field, f)
      end
      field = f
    end
  end
  if not field then
    bad('needs phi = function(x, t) (position), psi = function(x, xd, t) (velocity) or '
      .. 'accel = function(x, xd, t) returning A, b (acceleration level)')
  end
  local fn = spec[field]
  if type(fn) ~= 'function' then bad('%s must be a function, got %s', field, type(fn)) end
  local kind = spec.kind
  if kind ~= nil then
    if kind ~= 'position' and kind ~= 'velocity' and kind ~= 'acceleration' then
      bad("kind must be 'position', 'velocity' or 'acceleration', got %s", tostring(kind))
    end
    if kind ~= kind_of[field] then
      bad("kind = '%s' needs %s, but %s gives a %s constraint%s", kind,
        kind == 'position' and 'phi = function(x, t)' or signature[kind == 'velocity' and
        'psi' or 'accel'], field, kind_of[field], kind == 'position' and
        ': a velocity-level constraint cannot stand where a position constraint is '
        .. 'required (a position constraint depends on x and t only)' or '')
    end
  end
  local rows = spec.rows
  if rows == nil then rows = 1 end
  if math.type(rows) ~= 'integer' or rows < 1 or rows > host.max_part_rows then
    bad('rows must be a whole number from 1 to %d, got %s (the constraint is a part, and %s; '
      .. 'split it into several constraints)', host.max_part_rows, tostring(rows),
      host.part_limit_why)
  end
  if spec.nonideal ~= nil and type(spec.nonideal) ~= 'function' then
    bad('nonideal must be a function(x, xd, t, lambda, xdd) returning C, got %s',
      type(spec.nonideal))
  end
  local okp, existing = pcall(sys.part, sys, name)
  if not okp then bad('%s', strip(existing)) end
  if existing then bad('a part named %s already exists', name) end
  local ok, ctype = pcall(constraint_type, part_type, env, dims, rows, field, fn,
    spec.nonideal)
  if not ok then bad('%s', strip(ctype)) end
  local slot = common.hold(sys, ctype.box, { fn = fn, law = spec.nonideal })
  local part
  ok, part = pcall(sys.add, sys, ctype.name, name, { slot = slot })
  if not ok then bad('%s', strip(part)) end
  for i = 1, #on do
    local err
    ok, err = pcall(sys.glue, sys, on[i], part['t' .. i], name .. '.t' .. i)
    if not ok then bad('%s', strip(err)) end
  end
  return part
end
