#!/bin/sh
# bench/joint_rows/ball_chain.sh BUILD_DIR [LABEL] — instruction counts (callgrind) of the ball
# chain (bench/peers/models/ball_chain.lua) at N = 20 and 100 rods, 0.5 s: the whole run, the
# right-hand side (jy_sim_rhs, inclusive) and that per evaluation, the marker terminals (a
# ball joint glues two marker3d pos terminals: inclusive, all calls), the steps and
# evaluations joinery reports, and the last output row (the physics must not change). Run it
# before and after a change with the same build type (the default, debugoptimized).
#   bench/joint_rows/ball_chain.sh build before
set -eu
build=${1:?usage: ball_chain.sh BUILD_DIR [LABEL]}
label=${2:-run}
out=${TMPDIR:-/tmp}/ball_chain.$$
mkdir -p "$out"
incl() { # inclusive Ir of the function matching $2 in profile $1
  callgrind_annotate --inclusive=yes "$1" | awk -v f="$2" '$0 ~ f {gsub(",", "", $1); print $1; exit}'
}
for n in 20 100; do
  N=$n OPENBLAS_NUM_THREADS=1 valgrind --tool=callgrind --callgrind-out-file="$out/$n.cg" \
    "$build/lua/joinery" run bench/peers/models/ball_chain.lua --t-end 0.5 --out "$out/$n.csv" \
    >"$out/$n.log" 2>&1
  total=$(callgrind_annotate "$out/$n.cg" | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
  rhs=$(incl "$out/$n.cg" 'sim_step.c:jy_sim_rhs')
  markers=$(incl "$out/$n.cg" 'marker3d.c:terminal')
  evals=$(grep -o '([0-9]* steps, [0-9]* right-hand-side evaluations)' "$out/$n.log")
  k=$(echo "$evals" | awk '{print $3}')
  echo "$label N=$n: total Ir $total, jy_sim_rhs Ir $rhs ($((rhs / k)) an evaluation)," \
    "marker terminals Ir ${markers:-0} $evals"
  tail -n 1 "$out/$n.csv" | cut -d, -f1-7 | sed "s/^/$label N=$n end: /"
done
rm -rf "$out"
