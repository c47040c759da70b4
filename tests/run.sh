#!/usr/bin/env bash
# Installs what is missing, builds joinery twice (plain, and with AddressSanitizer +
# UndefinedBehaviorSanitizer), and runs the whole suite through prove, whose closing
# line says whether everything passed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/install-deps

configure() { # dir, meson options...
  local dir=$1; shift
  if [ -d "$dir" ]; then meson setup --reconfigure "$dir" "$@" >/dev/null
  else meson setup "$dir" "$@" >/dev/null; fi
  meson compile -C "$dir" >/dev/null
}
configure build
configure build-asan -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug

export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=detect_leaks=1
export OPENBLAS_NUM_THREADS=1
status=0
for dir in build build-asan; do
  echo "== tests in $dir"
  JOINERY="$PWD/$dir/lua/joinery" BUILD_DIR="$PWD/$dir" \
    JOINERY_PLUGIN_DIR="$PWD/$dir/examples/plugin" JOINERY_TEST_PLUGIN_DIR="$PWD/$dir/tests/plugins" \
    prove --exec tests/tap-exec $(find "$dir/tests" -maxdepth 1 -type f -name 't_*' -perm -u+x | sort) tests/lua/t_*.lua tests/lua/t_*.sh \
    || status=1
done
exit $status
