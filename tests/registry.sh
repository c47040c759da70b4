#!/bin/sh
# Every test file under tests/ (a t_* file in a folder of it) is registered in
# tests/meson.build, which runs this last with the names it registered: the files' paths
# under tests/. Run from the source root; prints TAP.
# Usage: sh tests/registry.sh REGISTERED_NAME...
echo "1..1"
missing=""
for file in tests/*/t_*.*; do
  name=${file#tests/}
  case " $* " in
    *" $name "*) ;;
    *) missing="$missing $name" ;;
  esac
done
if [ -z "$missing" ]; then
  echo "ok 1 - every t_* file under tests/ is registered in tests/meson.build ($# tests)"
else
  echo "not ok 1 - t_* files under tests/ that tests/meson.build does not register:$missing"
  echo "# add each to its list in tests/meson.build, so that meson test (and tests/run.sh) runs it"
  exit 1
fi
