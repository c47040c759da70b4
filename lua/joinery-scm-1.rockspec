-- A LuaRocks rock of the Lua module (require "joinery") for Lua 5.4, built by meson with the
-- engine linked into the module (one file to deploy). Debian 12's luarocks runs Lua 5.1 by
-- default: build it with
--   luarocks --lua-version=5.4 make lua/joinery-scm-1.rockspec      (from the source root)
-- after .ci/install-deps (meson, SUNDIALS, SuiteSparse, LAPACK). The `joinery` command, the C
-- library and the man pages come from `meson install` (README.md, "Install").
rockspec_format = "3.0"
package = "joinery"
version = "scm-1"
source = { url = "git+file://." }
description = {
  summary = "Constrained mechanical systems composed from parts, simulated exactly",
  license = "MIT",
}
dependencies = { "lua >= 5.4, < 5.5" }
build = {
  type = "command",
  build_command = [[meson setup _rock -Dmodule_self_contained=true -Dbuildtype=release >/dev/null && meson compile -C _rock lua/joinery:shared_module >/dev/null]],
  install_command = [[mkdir -p "$(LIBDIR)" && cp _rock/lua/joinery.so "$(LIBDIR)/joinery.so"]],
}
