#!/bin/sh
# require "joinery" from the stock lua5.4 interpreter through LUA_CPATH.
# Usage: sh tests/lua/t_stock_lua.sh [MODULE_DIR]   (default: $BUILD_DIR/lua, else build/lua)
dir=${1:-${BUILD_DIR:-build}/lua}
echo "1..3"
skip() {
  echo "ok 1 # SKIP $1"
  echo "ok 2 # SKIP $1"
  echo "ok 3 # SKIP $1"
  exit 0
}
command -v lua5.4 >/dev/null 2>&1 || skip "no lua5.4 interpreter"
[ -f "$dir/joinery.so" ] || { echo "not ok 1 - $dir/joinery.so exists"; echo "not ok 2 - simulate"; echo "not ok 3 - no sandbox"; exit 1; }
# A sanitized module needs the sanitizer runtime loaded first: not the stock interpreter.
if ldd "$dir/joinery.so" 2>/dev/null | grep -q 'lib[at]san'; then skip "sanitized build"; fi
out=$(LUA_CPATH="$dir/?.so;;" lua5.4 -e '
local j = require "joinery"
print((type(j.system) == "function" and "ok" or "not ok") .. " 1 - require \"joinery\" from stock lua5.4")
local sys = j.system { gravity = { 0, -9.81 } }
local pivot = sys:add("ground", "pivot", { dim = 2 })
local bob = sys:add("mass", "bob", { dim = 2, init = { x = 1, y = 0 } })
sys:add("rod", "rod", { dim = 2, L = 1, a = pivot.pos, b = bob.pos })
local res = sys:simulate { t_end = 0.1, dt_out = 0.05 }
print((#res.t == 3 and res["bob.y"][3] < 0 and "ok" or "not ok") .. " 2 - simulate a pendulum")
-- the module a host opens is not sandboxed (lua/binding.h: only jyl_sandbox does that)
local ok, err = pcall(j.load_plugin, "/nonexistent/x.so")
print((not ok and err:find("cannot load plugin", 1, true) and type(io.popen) == "function"
  and "ok" or "not ok") .. " 3 - the module opened by lua5.4 leaves load_plugin and io.popen alone")
' 2>&1)
status=$?
echo "$out" | sed '/^\(not \)\{0,1\}ok /!s/^/# /'
case "$out" in
  *"not ok"*) exit 1 ;;
esac
[ $status -eq 0 ] && [ "$(echo "$out" | grep -c '^ok ')" -eq 3 ] || exit 1
