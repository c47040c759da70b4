#!/bin/sh
# bench/joint_rows/run.sh BUILD_DIR [LABEL] — instruction counts (valgrind's callgrind:
# repeatable on a loaded machine, unlike times) of three fixed short spatial runs: the
# 14-body tree (tree.lua, 0.5 s), the Bricard linkage (examples/bricard.lua, 1 s) and the
# tree with its twelve limb hinges driven by motors (driven_tree.lua, 0.5 s). For
# each: the whole run, the part inside the joints' `constraints` (inclusive), the
# right-hand side (jy_sim_rhs, inclusive: the part's rows, the assembly and the KKT solve)
# and that per evaluation, the steps and right-hand-side evaluations joinery reports, and
# the last output row (the physics must not change). Run it before and after a change
# with the same build type (the default, debugoptimized) and compare.
#   bench/joint_rows/run.sh build before
set -eu
build=${1:?usage: run.sh BUILD_DIR [LABEL]}
label=${2:-run}
out=${TMPDIR:-/tmp}/joint_rows.$$
mkdir -p "$out"
for case in "tree bench/joint_rows/tree.lua 0.5" "bricard examples/bricard.lua 1" \
  "driven bench/joint_rows/driven_tree.lua 0.5"; do
  set -- $case
  valgrind --tool=callgrind --callgrind-out-file="$out/$1.cg" \
    "$build/lua/joinery" run "$2" --t-end "$3" --out "$out/$1.csv" >"$out/$1.log" 2>&1
  total=$(callgrind_annotate "$out/$1.cg" | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
  incl() { # inclusive Ir of the function matching $2 in profile $1
    callgrind_annotate --inclusive=yes "$1" | awk -v f="$2" '$0 ~ f {gsub(",", "", $1); print $1; exit}'
  }
  rows=$(incl "$out/$1.cg" 'joint3d.c:constraints')
  rhs=$(incl "$out/$1.cg" 'sim_step.c:jy_sim_rhs')
  evals=$(grep -o '([0-9]* steps, [0-9]* right-hand-side evaluations)' "$out/$1.log")
  n=$(echo "$evals" | awk '{print $3}')
  echo "$label $1: total Ir $total, joint constraints Ir ${rows:-0}, jy_sim_rhs Ir $rhs" \
    "($((rhs / n)) an evaluation) $evals"
  tail -n 1 "$out/$1.csv" | cut -d, -f1-7 | sed "s/^/$label $1 end: /"
done
rm -rf "$out"
