#!/usr/bin/env bash
# joinery beside MuJoCo 2.2, Simbody 3.7 and the hand-written floor (docs/bench.md):
#   bash bench/peers/run.sh [--quick] [run.py's options]
#   bash bench/peers/run.sh spatial [--quick] [spatial.py's options]   (issue 44's workloads)
# builds joinery and the drivers (installing libmujoco-dev and libsimbody-dev if missing, as
# root), then runs every workload; the full run takes hours, --quick a few minutes.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash .ci/install-deps
bash bench/peers/build.sh
[ -d build ] || meson setup build >/dev/null
meson compile -C build >/dev/null
if [ "${1:-}" = spatial ]; then
  shift
  exec python3 bench/peers/spatial.py "$@"
fi
exec python3 bench/peers/run.py "$@"
