-- lua/prelude/common.lua — what the other prelude chunks share (lua/prelude.c runs this one
-- first and passes the table it returns to each of them, with the host table of C
-- functions described there).
local host = ...
local common = {}

-- A message of a joinery call without the position inside a prelude chunk, so that the
-- caller can raise it again at the script's line.
function common.strip(msg)
  return (tostring(msg):gsub('^joinery/[%w_]+%.lua:%d+: ', ''))
end

-- x as a message shows it: a string quoted, a short list by its items, a joinery object by
-- its name, anything else by its type.
function common.describe(x)
  if type(x) == 'string' then return "'" .. x .. "'" end
  if type(x) == 'table' then
    local items = {}
    for i = 1, math.min(#x, 4) do items[i] = tostring(x[i]) end
    return '{' .. table.concat(items, ', ') .. (#x > 4 and ', ...}' or '}')
  end
  if type(x) == 'userdata' then return tostring(x) end
  return type(x)
end

function common.is_identifier(x)
  return type(x) == 'string' and x:match('^[%a_][%w_]*$') ~= nil
end

-- body:marker, body:point and body:frame_at from make(body, name, r, extra, what), which
-- adds the marker part (its errors at level 3: the script's call of the method).
function common.marker_methods(make)
  local methods = {}
  for method, terminal in pairs { marker = false, point = 'pos', frame_at = 'frame' } do
    methods[method] = function(body, name, r, extra)
      local marker = make(body, name, r, extra, 'body:' .. method)
      if terminal then return marker[terminal] end
      return marker
    end
  end
  return methods
end

-- Adds the marker part "<body>_<name>" of type marker_type, its terminal body glued to the
-- body's frame. Called by a make of marker_methods: errors at level 4 (here, make, the
-- method, the script).
function common.add_marker(sys, marker_type, body, name, params)
  params.body = body.frame
  local ok, res = pcall(sys.add, sys, marker_type, body.name .. '_' .. name, params)
  if not ok then error(common.strip(res), 4) end
  return res
end

-- A Part __index giving parts of type part_type the methods (a table by name) and every
-- other key as previous (the __index before it) does; its errors are raised at the line
-- of the script's indexing.
function common.part_methods(previous, part_type, methods)
  return function(part, key)
    local m = methods[key]
    if m then
      local ok, kind = pcall(previous, part, 'type')
      if ok and kind == part_type then return m end
    end
    local ok, res = pcall(previous, part, key)
    if not ok then error(common.strip(res), 2) end
    return res
  end
end

-- sys:<kind>(a, b[, name]): the glue of two terminals of dimension dim (hint says which
-- terminals the joint joins); errors at the script line of the call.
function common.joint(kind, dim, hint)
  return function(sys, a, b, name)
    for i, t in ipairs { a, b } do
      if host.owner(t) == nil or type(t.dim) ~= 'number' then
        error(string.format('sys:%s: argument %d must be a terminal, got %s', kind, i,
          common.describe(t)), 2)
      end
    end
    if a.dim ~= dim or b.dim ~= dim then
      error(string.format('sys:%s: terminals %s (%d-D) and %s (%d-D): %s', kind, a.name,
        a.dim, b.name, b.dim, hint), 2)
    end
    local ok, err = pcall(sys.glue, sys, a, b, name)
    if not ok then error(common.strip(err), 2) end
  end
end

-- ---- internal part types: one per kind, the per-call functions held by the system ------
-- sys:load and sys:constrain register a Lua part type once per kind (per environment) and
-- give each part they add a `slot` parameter; the part's functions are found in its type's
-- box as box[slot]. The box holds them weakly: the strong reference is in the
-- system's table that its models share (host.held), so they go when the system and its
-- models are collected. Any other slot (the default 0, the conformance suite's random
-- values) stands for the type's latest part still alive: joinery.check_part(type) checks it.
local slots = 0

common.slot_param = { name = 'slot', default = 0, unit = '1',
  doc = 'which sys:load or sys:constrain call the part belongs to (set by that call)' }

-- A type's box: its parts' records by slot and its latest part's (box.latest), all weakly.
function common.new_box() return setmetatable({}, { __mode = 'v' }) end

-- Keeps record, a part of the type with this box, for as long as sys or a model of it
-- lives; returns its slot.
function common.hold(sys, box, record)
  slots = slots + 1
  box[slots] = record
  box.latest = record
  local held = host.held(sys)
  held[#held + 1] = record
  return slots
end

-- The record of the part whose parameters are p, of the type with this box.
function common.held(p, box)
  local record = box[p.slot] or box.latest
  if record == nil then
    error('this internal part type is added by sys:load or sys:constrain, not by sys:add', 0)
  end
  return record
end

-- Registers def through part_type under the first free name of base_1, base_2, ...
-- (numbered) or base, base_2, ...; returns the name.
function common.register(part_type, base, numbered, def)
  local k = 1
  while true do
    local name = (numbered or k > 1) and base .. '_' .. k or base
    def.name = name
    local ok, err = pcall(part_type, def)
    if ok then return name end
    if not tostring(err):find('is already registered', 1, true) then error(err, 0) end
    k = k + 1
  end
end

return common
