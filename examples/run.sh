#!/usr/bin/env bash
# Installs what is missing, builds joinery, and runs one example model:
#   bash examples/run.sh [SCRIPT] [joinery run flags...]
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/install-deps
[ -d build ] || meson setup build >/dev/null
meson compile -C build >/dev/null
script=${1:-examples/pendulum.lua}
[ $# -gt 0 ] && shift
exec build/lua/joinery run "$script" "$@"
