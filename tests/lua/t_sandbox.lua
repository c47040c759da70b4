-- The sandbox the joinery command runs model scripts in (lua/sandbox.c): every refused
-- function refused by name with how to allow it, and nothing done; --trust allows them;
-- bytecode refused (a patched .luac is an error, not a crash); reading a data file next to
-- the model and writing joinery run's --out file work; every example runs in the sandbox.
-- This test runs with --trust (tests/meson.build); the commands it spawns run without it.
local tap = dofile((arg and arg[0] and arg[0]:match("^(.*[/\\])") or "") .. "tap.lua")

local cmd = tap.command()
local quote, joinery = cmd.quote, cmd.run
local root, tmp = cmd.root, cmd.tmp

local write = cmd.write

local exists = tap.exists
local hint = "run with --trust to allow it"
local pendulum = root .. "/examples/pendulum.lua"

-- ---- each refused function: the message names it and says how to allow it --------------
local victim = write("victim.txt", "keep me\n")
local marker = tmp .. "/marker"
local bytecode = string.dump(function() return 42 end)
write("dumped.luac", bytecode)
write("lfs.so", "") -- a C module on package.cpath: found, and refused by name
write("bytemod.lua", bytecode) -- a Lua module that is bytecode
-- name, code to run (refused in the sandbox), what it would leave behind if it ran
local refusals = {
  { "os.execute", "os.execute('touch " .. marker .. "')", marker },
  { "io.popen", "io.popen('touch " .. marker .. "'):close()", marker },
  { "package.loadlib", "package.loadlib('" .. tmp .. "/lfs.so', 'luaopen_lfs')" },
  { "os.remove", "os.remove('" .. victim .. "')" },
  { "os.rename", "os.rename('" .. victim .. "', '" .. marker .. "')", marker },
  { "os.exit", "os.exit(3)" },
  { "os.tmpname", "os.tmpname()" },
  { "io.tmpfile", "io.tmpfile()" },
  { "os.setlocale", "os.setlocale('C.UTF-8', 'numeric')" },
  { "io.open: writing", "io.open('" .. marker .. "', 'w')", marker },
  { "io.open: writing", "io.open('" .. victim .. "', 'a'):write('x')" },
  { "io.open: writing", "io.open('" .. victim .. "', 'r+'):write('x')" },
  { "io.output: writing", "io.output('" .. marker .. "')", marker },
  -- a number is a name to io.open and io.output: it names a file in the working directory
  { "io.output: writing '12345'", "io.output(12345)", "12345" },
  { "io.open: writing '12345'", "io.open(12345, 'w')", "12345" },
  { "debug.getinfo with option 'f'", "debug.getinfo(1, 'f')" },
  { "joinery.load_plugin", "require('joinery').load_plugin('" .. tmp .. "/lfs.so')" },
  { "require 'lfs' (the C module", "package.cpath = '" .. tmp .. "/?.so'; require 'lfs'" },
  { "precompiled Lua bytecode", "assert(load(" .. string.format("%q", bytecode) .. "))" },
  { "precompiled Lua bytecode", "assert(loadfile('" .. tmp .. "/dumped.luac'))" },
  { "precompiled Lua bytecode", "dofile('" .. tmp .. "/dumped.luac')" },
  { "precompiled Lua bytecode", "package.path = '" .. tmp .. "/?.lua'; require 'bytemod'" },
  { "attempt to call a nil value (field 'getregistry')", "debug.getregistry()" },
  { "attempt to call a nil value (field 'setupvalue')", "debug.setupvalue(io.open, 1, nil)" },
}
-- every example, each run in the sandbox below
local examples = {}
local ls = io.popen("ls " .. quote(root .. "/examples") .. "/*.lua")
for path in ls:lines() do examples[#examples + 1] = path end
ls:close()

-- Each refusal: 3 checks, one more for how to allow it (not for a function that is not
-- there) and one more when it would leave a file behind; the bytecode 13 (or 13 skips);
-- each example (plugin_model also refused without --trust); 4 outputs over an input (4
-- checks each); 15 single checks.
local planned = 13 + 4 * 4 + 15
for _, r in ipairs(refusals) do
  planned = planned + 3 + (r[1]:find("nil value") and 0 or 1) + (r[3] and 1 or 0)
end
for _, path in ipairs(examples) do planned = planned + (path:find("/plugin_model.lua$") and 2 or 1) end
tap.plan(planned)

for i, r in ipairs(refusals) do
  local script = write("refuse" .. i .. ".lua", r[2] .. "\nprint('ran')\n")
  local code, out, err = joinery(quote(script))
  local name = string.format("sandbox refuses %s", (r[2]:sub(1, 60):gsub("[^%%g ]", "?")))
  tap.ok(code == 1 and not out:find("ran", 1, true), name .. ": status 1, the script stops")
  tap.has(err, string.format("refuse%d.lua:1: ", i), name .. ": the message names the line")
  tap.has(err, r[1], name .. ": the message names what")
  if not r[1]:find("nil value") then tap.has(err, hint, name .. ": and how to allow it") end
  if r[3] then tap.ok(not exists(r[3]), name .. ": nothing was done") end
  os.remove(marker)
end
local f = io.open(victim)
tap.is(f:read("a"), "keep me\n", "the file the sandboxed scripts tried to change is intact")
f:close()

-- ---- --trust gives the full library back ----------------------------------------------
local trusted = write("trusted.lua", [[
os.execute("touch ]] .. marker .. [[")
local f = assert(io.open("]] .. tmp .. [[/written.txt", "w")); f:write("w"); f:close()
print(load(]] .. string.format("%q", bytecode) .. [[)(), io.popen("echo popen"):read("l"))
]])
for _, args in ipairs { "--trust " .. quote(trusted), "run --trust " .. quote(trusted) } do
  os.remove(marker)
  local code, out, err = joinery(args)
  if args:find("^run") then -- the script returns no system: run says so after running it
    tap.ok(code == 1 and err:find("must return a system", 1, true), "joinery " .. args:sub(1, 11)
      .. " runs the script with the full library")
  else
    tap.ok(code == 0 and out:find("42\tpopen", 1, true), "joinery --trust SCRIPT: bytecode, "
      .. "io.popen, os.execute and io.open for writing work")
  end
  tap.ok(exists(marker) and exists(tmp .. "/written.txt"), args:sub(1, 11) .. ": it ran")
  if code ~= (args:find("^run") and 1 or 0) then tap.diag(err) end
end

-- ---- what stays allowed: reading data next to the model, writing the --out file ---------
write("data.txt", "2.5\n")
local model = write("reads_data.lua", [[
local dir = arg[0]:match("^(.*/)") or "./"
local f = assert(io.open(dir .. "data.txt"))
local length = f:read("n")
f:close()
for line in io.lines(dir .. "data.txt") do assert(tonumber(line) == length) end
local sys = dofile("]] .. pendulum .. [[")
-- the file joinery run writes may be opened by the script too (under another spelling)
local out = assert(io.open("]] .. tmp .. [[/./pendulum_out.csv", "w"))
out:close()
-- but a run of the script's own may write no other file
local ok, err = pcall(function() sys:simulate { t_end = 0.01, out = "]] .. tmp .. [[/other.csv" } end)
print("other:", ok, err)
print("length", length)
return sys
]])
local out_csv = tmp .. "/pendulum_out.csv"
local code, out, err = joinery("run " .. quote(model) .. " --t-end 0.1 --out " .. quote(out_csv))
tap.ok(code == 0 and out:find("length\t2.5", 1, true), "a model reads a data file next to it")
if code ~= 0 then tap.diag(err) end
tap.ok(exists(out_csv) and out:find("wrote 11 rows", 1, true), "joinery run writes the --out file")
tap.has(out, "setting 'out': writing '" .. tmp .. "/other.csv' is disabled for model scripts "
  .. "(they may write only '" .. out_csv .. "')", "sys:simulate{out = another file} is refused")
tap.ok(not exists(tmp .. "/other.csv"), "and that file is not written")

-- ---- bytecode: refused as a script, a patched one too (no crash) ------------------------
local luac = tmp .. "/pendulum.luac"
local p = io.popen("luac5.4 -o " .. quote(luac) .. " " .. quote(pendulum) .. " 2>&1 && echo done")
local compiled = p:read("a"):find("done", 1, true)
p:close()
if compiled then
  -- a chunk whose LOADK reads constant 100000 of a function that has one: without the
  -- sandbox, joinery ran it and died of SIGSEGV (exit 139)
  local dumped = string.dump(function() local a = "hello" return a end)
  local at = dumped:find("\3\0\0\0", 1, true) -- LOADK A=0 Bx=0 (Lua 5.4: opcode 3)
  write("patched.luac", dumped:sub(1, at - 1) .. string.pack("<I4", 3 | (100000 << 15))
    .. dumped:sub(at + 4))
  for _, file in ipairs { luac, tmp .. "/patched.luac" } do
    for _, mode in ipairs { "run ", "" } do
      code, out, err = joinery(mode .. quote(file) .. " --out " .. quote(tmp .. "/b.csv"))
      local name = string.format("joinery %s%s", mode, file:match("[^/]+$"))
      if not tap.ok(code == 1, name .. ": status 1, no crash") then
        tap.diag("exit status " .. tostring(code))
      end
      tap.has(err, "is precompiled Lua bytecode, which model scripts may not load", name
        .. ": says why")
      tap.has(err, hint, name .. ": and how to allow it")
    end
  end
  code, out, err = joinery("run --trust " .. quote(luac) .. " --t-end 0.1 --out "
    .. quote(tmp .. "/b.csv"))
  tap.ok(code == 0, "joinery run --trust runs a precompiled model")
else
  for _ = 1, 13 do tap.ok(true, "# SKIP no luac5.4") end
end

-- ---- every example runs in the sandbox (plugin_model needs --trust: it loads native code)
for _, path in ipairs(examples) do
  local name = path:match("([^/]+)%.lua$")
  local args = string.format("run %s --t-end 0.01 --dt-out 0.01 --out %s", quote(path),
    quote(tmp .. "/" .. name .. ".csv"))
  if name == "plugin_model" then
    code, out, err = joinery(args)
    tap.ok(code == 1 and err:find("joinery.load_plugin is disabled", 1, true),
      "examples/plugin_model.lua is refused without --trust")
    args = "--trust " .. args
  end
  code, out, err = joinery(args)
  tap.ok(code == 0 and exists(tmp .. "/" .. name .. ".csv"), "examples/" .. name
    .. ".lua runs" .. (name == "plugin_model" and " with --trust" or " in the sandbox"))
  if code ~= 0 then tap.diag(err) end
end


-- ---- no frame leaks an original -----------------------------------------------------------
-- The guards once called the original io.open, io.output, load and loadfile through Lua
-- frames, and debug.getinfo(level, "f") handed any Lua code running meanwhile (a message
-- handler, a reader given to load, a finalizer) the unguarded function; at a script's top
-- level it handed out the command's own main function, whose call crashed the process.
-- The script below tries every such route, then uses whatever it got to write a file and
-- to load bytecode.
local routes = write("routes.lua", [=[
local marker, dumped = ...
local f = assert(io.open(dumped, "rb"))
local bytecode = f:read("a")
f:close()
local stolen = {}
local function steal()
  for level = 0, 12 do
    for _, what in ipairs { "f", "fS", "Sf", "flnSrtuL" } do
      local ok, info = pcall(debug.getinfo, level, what)
      if ok and info and info.func then stolen[#stolen + 1] = info.func end
    end
    local ok, info = pcall(debug.getinfo, level)
    if ok and info and info.func then stolen[#stolen + 1] = info.func end
    local co = coroutine.running()
    ok, info = pcall(debug.getinfo, co, level)
    if ok and info and info.func then stolen[#stolen + 1] = info.func end
  end
end
local function handler(m) steal() return m end
xpcall(io.open, handler, "x", "bad mode")
xpcall(io.output, handler, {})
xpcall(io.input, handler, {})
xpcall(io.lines, handler, {})
xpcall(load, handler, {})
xpcall(loadfile, handler, {})
xpcall(dofile, handler, {})
xpcall(require, handler, {})
local n = 0
load(function() steal(); n = n + 1; if n == 1 then return "return 1" end end)
for i = 1, 3000 do -- finalizers run by collections that start inside the guards
  setmetatable({}, { __gc = steal })
  pcall(io.open, string.rep("x", 200) .. i)
  pcall(load, "return " .. i)
end
collectgarbage()
local co = coroutine.wrap(function() pcall(io.open, {}) steal() coroutine.yield() end)
co()
steal() -- the top level: the command's own main function is one level up
for _, f in ipairs(stolen) do
  pcall(f, marker, "w")
  pcall(f, marker)
  local ok, chunk = pcall(f, bytecode, "b", "b")
  if ok and type(chunk) == "function" then print("bytecode loaded") end
end
print("stolen " .. #stolen)
]=])
os.remove(marker)
code, out, err = joinery(quote(routes) .. " " .. quote(marker) .. " " .. quote(tmp .. "/dumped.luac"))
tap.ok(code == 0 and out:find("stolen 0", 1, true), "no frame hands a script a function: "
  .. "message handlers, a load reader, finalizers, coroutines, the top level")
if code ~= 0 then tap.diag(err) end
tap.ok(not out:find("bytecode loaded", 1, true) and not exists(marker),
  "and nothing was written or loaded as bytecode")
os.remove(marker)
-- under --trust the full debug library reaches the command's main function: calling it is
-- an error, not a crash (it was SIGSEGV)
local main_again = write("main_again.lua",
  "local f = debug.getinfo(2, 'f').func\nprint(pcall(f))\nprint(pcall(f, {}))\n")
code, out, err = joinery("--trust " .. quote(main_again))
tap.ok(code == 0, "--trust: the command's main function called from a script: no crash")
tap.has(out, "the joinery command's main function is not for scripts to call",
  "--trust: and an error that says so")
if code ~= 0 then tap.diag(err) end

-- ---- an output over an input is refused ---------------------------------------------------
local self_out = write("self_out.lua", "return dofile('" .. pendulum .. "')\n")
for _, args in ipairs {
  { "run " .. quote(self_out) .. " --t-end 0.01 --out " .. quote(self_out), "is the model script '" .. self_out .. "'" },
  { "run " .. quote(self_out) .. " --t-end 0.01 --out " .. quote(tmp .. "/./self_out.lua"), "the model script" },
  { "run --trust " .. quote(self_out) .. " --t-end 0.01 --out " .. quote(self_out), "the model script" },
  { "run " .. quote(self_out) .. " --t-end 0.01 --out " .. quote(pendulum), "which the model script read" },
} do
  local before = io.open(self_out):read("a")
  code, out, err = joinery(args[1])
  tap.ok(code == 1, "joinery " .. args[1]:gsub(tmp, "TMP"):gsub(root, "ROOT") .. ": refused")
  tap.has(err, args[2], "  and the message names the input")
  tap.has(err, "choose another output file", "  and says what to do")
  tap.is(io.open(self_out):read("a"), before, "  the script is intact")
end

-- ---- usage ----------------------------------------------------------------------------
code, out = joinery("--help")
tap.ok(code == 0 and out:find("--trust", 1, true), "--help lists --trust")
code, out, err = joinery("--trust")
tap.ok(code == 2 and err:find("--trust needs a SCRIPT", 1, true), "--trust alone: a usage error")

if tap.failed == 0 then os.execute("rm -rf " .. quote(tmp)) end
tap.done()
