#!/bin/sh
# joinery installed as a user installs it, and used as a user would: configured with a
# temporary prefix (no tests), `meson install`ed, then, with nothing of the build tree on
# any path: the installed command runs without LD_LIBRARY_PATH; the README's C example and
# examples/embed/ build with pkg-config alone, linked to the shared library and statically;
# Debian's lua5.4 requires the installed module and simulates with it; Debian's python3
# imports the installed Python binding and its tests pass; the man pages are there and name
# every flag of `joinery --help`; and the Lua module's directory for the
# prefixes /usr and /usr/local is one Debian's lua5.4 searches. Prints TAP.
# Usage: sh tests/install/check.sh   (run by tests/run.sh from the source root)
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
n=0
failed=0
check() { # condition-status, description
  n=$((n + 1))
  if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi
}
diag() { sed 's/^/# /' "$@"; }

meson setup "$tmp/build" "$root" --prefix="$prefix" >"$tmp/setup.out" 2>&1 &&
  meson install -C "$tmp/build" >"$tmp/install.out" 2>&1
check $? "meson setup --prefix and meson install"
[ $failed -eq 0 ] || { diag "$tmp/setup.out" "$tmp/install.out"; echo "1..$n"; exit 1; }
libdir=$(dirname "$(find "$prefix" -name 'libjoinery.so.0' | head -1)")
unset LD_LIBRARY_PATH
export PKG_CONFIG_PATH="$libdir/pkgconfig"
export OPENBLAS_NUM_THREADS=1

# The command, from any directory, finding libjoinery.so.0 through its RUNPATH.
version=$(cd "$tmp" && "$prefix/bin/joinery" --version 2>&1)
[ "$version" = "joinery $(pkg-config --modversion joinery) (Lua 5.4.4)" ] ||
  echo "$version" | grep -q "^joinery $(pkg-config --modversion joinery) "
check $? "the installed command runs without LD_LIBRARY_PATH: $version"
(cd "$tmp" && "$prefix/bin/joinery" run "$root/examples/pendulum.lua" --t-end 0.5 --out p.csv) \
  >"$tmp/run.out" 2>&1 && [ -s "$tmp/p.csv" ]
check $? "the installed command runs examples/pendulum.lua"
diag "$tmp/run.out" | tail -3

# C programs with pkg-config only: the README's example and the embedding examples.
awk -v dir="$tmp" '
  /^<!-- t_readme\.sh: [^ ]+ -->$/ { name = $3; next }
  name != "" && /^```/ { if (inside) { inside = 0; name = "" } else inside = 1; next }
  inside { print > (dir "/" name) }
' "$root/README.md"
for src in "$tmp/example.c" "$root/examples/embed/pendulum_host.c" "$root/examples/embed/cart_pole_host.c"; do
  name=$(basename "$src" .c)
  # shellcheck disable=SC2046
  # -lm: the hosts call libm themselves (lround).
  cc -std=c11 -Wall -Wextra -Werror "$src" -o "$tmp/$name" $(pkg-config --cflags --libs joinery) -lm \
    -Wl,-rpath,"$libdir" 2>"$tmp/cc.err" && "$tmp/$name" >"$tmp/$name.out" 2>&1
  check $? "$name.c builds with pkg-config --cflags --libs joinery alone and runs"
  diag "$tmp/cc.err"
  tail -2 "$tmp/$name.out" | diag
done
# Statically: libjoinery.a and the private libraries pkg-config --static lists.
# shellcheck disable=SC2046
cc -std=c11 "$root/examples/embed/pendulum_host.c" -o "$tmp/static_host" $(pkg-config --cflags joinery) \
  $(pkg-config --static --libs joinery | sed 's/-ljoinery/-Wl,-Bstatic -ljoinery -Wl,-Bdynamic/') \
  2>"$tmp/cc.err" && ! ldd "$tmp/static_host" | grep -q libjoinery &&
  "$tmp/static_host" >"$tmp/static_host.out" 2>&1 && cmp -s "$tmp/static_host.out" "$tmp/pendulum_host.out"
check $? "pendulum_host linked statically (pkg-config --static) prints what the shared one does"
diag "$tmp/cc.err"

# Debian's lua5.4 and the installed module (LUA_CPATH: this prefix is not a standard one).
cmod=$(find "$prefix" -name joinery.so | head -1)
LUA_CPATH="$(dirname "$cmod")/?.so;;" lua5.4 -e '
  local joinery = require "joinery"
  local sys = joinery.system { gravity = { 0, -9.81 } }
  local g = sys:add("ground", "g", { dim = 2 })
  sys:add("pendulum", "p", { m = 1, l = 1, init = { theta = 0.3 }, pivot = g.pos })
  local res = sys:simulate { t_end = 0.1 }
  assert(res.rows > 1, "no rows")
  print(joinery.version)' >"$tmp/lua.out" 2>&1
check $? "lua5.4 requires the installed module and simulates"
diag "$tmp/lua.out"

# The Python binding's tests, with Debian's python3 importing the installed package.
(cd "$root" && sh python/tests/run-installed.sh "$prefix") >"$tmp/python.out" 2>&1
check $? "the Python binding's tests pass against the installed package ($(grep -c '^ok' "$tmp/python.out") checks)"
grep -v '^ok' "$tmp/python.out" | diag

# The man pages, naming every flag the usage text lists.
missing=""
for flag in $("$prefix/bin/joinery" --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
  grep -q -- "$(echo "$flag" | sed 's/-/\\\\-/g')\|$flag" "$prefix/share/man/man1/joinery.1" ||
    missing="$missing $flag"
done
[ -z "$missing" ] && head -3 "$prefix/share/man/man1/joinery.1" | grep -q '^\.TH "joinery" "1"' &&
  [ -s "$prefix/share/man/man7/joinery-lua.7" ] && [ -s "$prefix/share/doc/joinery/cli.md" ]
check $? "joinery(1) names every --help flag${missing:+ (missing:$missing)}; joinery-lua(7) and share/doc/joinery"

# Where the module goes under /usr and /usr/local: a directory Debian's lua5.4 searches.
cpath=$(lua5.4 -e 'print(package.cpath)')
for p in /usr /usr/local; do
  meson setup "$tmp/b$p" "$root" --prefix="$p" >/dev/null 2>&1
  dir=$(meson introspect "$tmp/b$p" --installed | python3 -c '
import json, sys
print(next(v for k, v in json.load(sys.stdin).items() if k.endswith("lua/joinery.so")).rsplit("/", 1)[0])')
  echo "$cpath" | tr ';' '\n' | grep -qx "$dir/?.so"
  check $? "prefix $p: the module goes to $dir, on lua5.4's package.cpath"
done

echo "1..$n"
exit $failed
