#!/bin/sh
# The README's code, as a reader would run it: the blocks marked "<!-- t_readme.sh: NAME -->"
# are extracted into files named NAME. The C embedding example is compiled against the
# build and run (a mass on a spring back at its start after one period); the first model is
# run by `joinery run` (its quarter period and the rod's tension at the bottom, from the
# CSV) and by the script that simulates it itself.
# Usage: sh tests/lua/t_readme.sh   (BUILD_DIR: default build; JOINERY: $BUILD_DIR/lua/joinery)
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-build}
case "$build" in /*) ;; *) build="$root/$build" ;; esac
joinery=${JOINERY:-$build/lua/joinery}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "1..6"
n=0
check() { # condition-status, description
  n=$((n + 1))
  if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi
}
diag() { sed 's/^/# /' "$@"; }
failed=0

# Every marked block into $tmp/NAME.
awk -v dir="$tmp" '
  /^<!-- t_readme\.sh: [^ ]+ -->$/ { name = $3; next }
  name != "" && /^```/ { if (inside) { inside = 0; name = "" } else inside = 1; next }
  inside { print > (dir "/" name) }
' "$root/README.md"
[ -s "$tmp/first.lua" ] && [ -s "$tmp/first_run.lua" ] && [ -s "$tmp/example.c" ]
check $? "README.md has the marked blocks first.lua, first_run.lua and example.c"

# ---- the C embedding example -------------------------------------------------------------
if ldd "$build/libjoinery.so" 2>/dev/null | grep -q 'lib[at]san'; then
  # A sanitized library needs the sanitizer runtime and flags: the plain build checks this.
  n=$((n + 2)); echo "ok $((n - 1)) # SKIP sanitized build"; echo "ok $n # SKIP sanitized build"
else
  ${CC:-cc} -std=c11 -Wall -Wextra -Werror -I "$root/engine/include" "$tmp/example.c" \
    -L "$build" -Wl,-rpath,"$build" -ljoinery -lm -o "$tmp/example" 2>"$tmp/cc.err"
  check $? "the C example compiles against the build"
  diag "$tmp/cc.err"
  "$tmp/example" >"$tmp/c.out" 2>&1
  status=$?
  diag "$tmp/c.out"
  # x back at 0.1 m after one period, to the tolerances (rtol 1e-11)
  [ $status -eq 0 ] && awk '/^t = / { x = $(NF - 1); ok = (x - 0.1 < 1e-7 && 0.1 - x < 1e-7) }
    END { exit !ok }' "$tmp/c.out"
  check $? "the C example runs: x = 0.1 m after one period"
fi

# ---- the first model ---------------------------------------------------------------------
(cd "$tmp" && "$joinery" run first.lua --out first.csv) >"$tmp/run.out" 2>&1
check $? "joinery run first.lua"
diag "$tmp/run.out"
# The bob released level with the pivot passes below it at a quarter period,
# 4 K(1/sqrt 2) sqrt(L/g) / 4 = 1.8540747 * sqrt(1 / 9.81) = 0.5919591 s (bob.x crossing 0,
# interpolated between rows), with the rod's tension 3 m g = 29.43 N there.
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
  { t = $col["t"]; x = $col["bob.x"]; f = $col["rod.tension"] }
  NR > 2 && !found && px > 0 && x <= 0 { found = 1; quarter = pt + (t - pt) * px / (px - x) }
  { pt = t; px = x; if (f > fmax) fmax = f }
  END {
    printf "# quarter period %.7f s, largest tension %.6f N\n", quarter, fmax
    d = quarter - 0.5919591; if (d < 0) d = -d
    e = fmax - 29.43; if (e < 0) e = -e
    exit !(found && d < 1e-4 && e < 0.01)
  }' "$tmp/first.csv" >"$tmp/period.out" 2>&1
status=$?
cat "$tmp/period.out"
check $status "first.lua: a quarter period of 0.59196 s and a tension of 3 m g at the bottom"
(cd "$tmp" && "$joinery" first_run.lua) >"$tmp/self.out" 2>&1
status=$?
diag "$tmp/self.out"
# t = 0.6 s, just past the bottom: bob.y near -1 m, the tension near 3 m g
[ $status -eq 0 ] && awk '{ ok = ($1 == 0.6 && $2 < -0.999 && $3 > 29.3 && $3 < 29.5) }
  END { exit !ok }' "$tmp/self.out"
check $? "first_run.lua simulates the model itself and prints t, bob.y, rod.tension"
exit $failed
