-- docs/lua-api.md against the module, both ways: every function, method, setting and result
-- field the module registers is documented there, and every one documented exists. The
-- registered names come from walking the module table and the objects' metatables (and, for
-- the result fields that only some runs set, lua/simulation.c's own lua_setfield calls).
local here = arg[0]:match("^(.*[/\\])") or ""
local tap = dofile(here .. "tap.lua")
local joinery = require "joinery"
local root = here .. "../../"

local function read(path)
  local f = assert(io.open(root .. path))
  local text = f:read("a")
  f:close()
  return text
end

local doc = read("docs/lua-api.md")

-- The doc's code spans (`...`), all of them, and those of one "## " section.
local function spans(text)
  local list = {}
  for s in text:gmatch("`([^`\n]+)`") do list[#list + 1] = s end
  return list
end
local function section(title)
  local start = doc:find("\n## " .. title .. "\n", 1, true)
  assert(start, "docs/lua-api.md has no section '" .. title .. "'")
  local stop = doc:find("\n## ", start + 1, true) or #doc + 1
  return doc:sub(start, stop - 1)
end

-- The names the doc writes as prefix .. name inside code spans ("sys:" -> {add = true, ...}).
local function documented(prefix, text)
  local names, pattern = {}, "%f[%w_.:]" .. prefix:gsub("[%.:]", "%%%0") .. "([%a_][%w_]*)"
  for _, s in ipairs(spans(text or doc)) do
    for name in s:gmatch(pattern) do names[name] = true end
  end
  return names
end
-- The names in the first column of the tables of a text ("| `rtol` | ...").
local function table_names(text)
  local names = {}
  for name in text:gmatch("\n| `([%a_][%w_]*)` |") do names[name] = true end
  return names
end

local function keys(t, filter)
  local set = {}
  for k, v in pairs(t) do
    if type(k) == "string" and (not filter or filter(k, v)) then set[k] = true end
  end
  return set
end
local function missing(want, have)
  local list = {}
  for k in pairs(want) do
    if not have[k] then list[#list + 1] = k end
  end
  table.sort(list)
  return list
end
-- Two checks: every registered name is documented, every documented name registered.
local function both_ways(what, registered, docs)
  local undocumented, unknown = missing(registered, docs), missing(docs, registered)
  tap.ok(#undocumented == 0, what .. ": every registered name is in docs/lua-api.md")
  if #undocumented > 0 then tap.diag("not documented: " .. table.concat(undocumented, ", ")) end
  tap.ok(#unknown == 0, what .. ": every documented name exists")
  if #unknown > 0 then tap.diag("documented but not registered: " .. table.concat(unknown, ", ")) end
end

tap.plan(22)

-- ---- a model with every kind of object ---------------------------------------------------
local sys = joinery.system { gravity = { 0, -9.81 } }
local pivot = sys:add("ground", "pivot", { dim = 2 })
local bob = sys:add("mass", "bob", { dim = 2, init = { x = 1, y = 0 } })
sys:add("rod", "rod", { dim = 2, L = 1, a = pivot.pos, b = bob.pos })
local body = sys:add("body2d", "body", { m = 1, J = 0.1 })
local event_methods = {}
sys:event { name = "low", when = function(s) return s["bob.y"] + 0.01 end, direction = "down",
  action = function(s)
    for _, m in ipairs { "set", "set_param", "set_input", "apply", "stop" } do
      if type(s[m]) == "function" then event_methods[m] = true end
    end
    s:stop()
  end }
local model = sys:compile()
local sim = model:sim()
local out = os.tmpname()
local res = sys:simulate { t_end = 1, out = out }
os.remove(out)

-- ---- the module ---------------------------------------------------------------------------
local classes = {}
for _, obj in ipairs { sys, bob, bob.pos, model, sim } do
  classes[getmetatable(obj).__name:match("^joinery%.(.*)$")] = true
end
local module_names = keys(joinery)
for name in pairs(classes) do module_names[name] = true end -- joinery.System, ... in the doc
both_ways("module (joinery.*) and its classes", module_names, documented("joinery."))
both_ways("joinery.math", keys(joinery.math),
  (function()
    local names = documented("joinery.math.")
    -- the section lists the rest by bare name: `cos`, `atan(y[, x])`, ...
    for _, s in ipairs(spans(doc:match("### `joinery%.math`\n(.-)\n## "))) do
      local name = s:match("^([%a_][%w_]*)")
      if name and joinery.math[name] ~= nil then names[name] = true end
    end
    return names
  end)())

-- ---- methods -----------------------------------------------------------------------------
local function methods(obj) return keys(getmetatable(obj).__index) end
both_ways("System methods (sys:*)", methods(sys), documented("sys:"))
both_ways("Model methods (model:*)", methods(model), documented("model:"))
both_ways("Sim methods (sim:*)", methods(sim), documented("sim:"))
local body_methods = {}
for name in pairs(documented("body:")) do
  if type(body[name]) == "function" then body_methods[name] = true end
end
for _, name in ipairs { "marker", "point", "frame_at" } do
  if type(body[name]) == "function" then body_methods[name] = true end
end
both_ways("body2d methods (body:*)", body_methods, documented("body:"))
tap.ok(res.stopped_by == "low", "the event ran its action (" .. tostring(res.stopped_by) .. ")")
both_ways("an event's state (s:*)", event_methods, documented("s:", section("System: the builder")))

-- ---- results, counters, settings ---------------------------------------------------------
-- Every field lua/simulation.c sets on a result (res.out_note only some runs get), and the
-- per-channel arrays, which the doc writes as res[<channel>].
local result_fields = {}
for name in read("lua/simulation.c"):gmatch('lua_setfield%(L, res, "([%a_][%w_]*)"%)') do
  result_fields[name] = true
end
local channel = {}
for _, name in ipairs(res.channels) do channel[name] = true end
local seen = keys(res, function(k) return not channel[k] end)
tap.ok(#missing(seen, result_fields) == 0, "the result fields of a run are the ones simulation.c sets")
local documented_fields = documented("res.")
for name in pairs(channel) do documented_fields[name] = nil end -- res.t, res.energy: channels
both_ways("result fields (res.*)", result_fields, documented_fields)
local results = section("The result of a run")
local counters = results:sub((results:find("The counters", 1, true)))
both_ways("counters (res.stats, sim:stats())", keys(res.stats), table_names(counters))
local settings = keys(sys:settings())
settings.out = true -- a run's output file: sys:simulate and model:simulate only
both_ways("settings", settings, table_names(section("Settings")))

tap.done()
