#!/bin/sh
# Runs the Python binding's tests against an installed joinery (meson install): Debian's
# python3 imports the package from PREFIX's package directory (docs/python.md), which opens
# its _joinery_lua.so there, and that finds PREFIX's libjoinery by its RUNPATH (no
# LD_LIBRARY_PATH); the CSV comparison runs PREFIX/bin/joinery. Prints each test's TAP.
# Usage (from the source root): sh python/tests/run-installed.sh PREFIX
set -eu
prefix=${1:?usage: sh python/tests/run-installed.sh PREFIX}
py=/usr/bin/python3
if [ "$prefix" = /usr ]; then
  dir=/usr/lib/python3/dist-packages
else
  dir=$prefix/lib/python$($py -c 'import sys; print("%d.%d" % sys.version_info[:2])')/dist-packages
fi
[ -f "$dir/joinery/__init__.py" ] || { echo "no joinery package in $dir" >&2; exit 1; }
unset JOINERY_PYTHON_LIB LD_LIBRARY_PATH PENDULUM_HOST
status=0
for t in python/tests/test_*.py; do
  echo "# $t against $dir"
  PYTHONPATH=$dir JOINERY_EXE=$prefix/bin/joinery JOINERY_EXPECT_PACKAGE=$dir/joinery \
    "$py" "$t" || status=1
done
exit $status
