#!/usr/bin/env bash
# Builds the peer drivers into build-peers/ (outside the meson build: CI need not have MuJoCo
# or Simbody). Installs Debian's libmujoco-dev and libsimbody-dev first if missing (as root).
set -euo pipefail
cd "$(dirname "$0")/../.."
missing=()
for p in libmujoco-dev libsimbody-dev libsundials-dev liblapacke-dev g++ time; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi
out=build-peers
mkdir -p "$out"
warn=(-O2 -Wall -Wextra -Werror)
gcc -std=c11 "${warn[@]}" bench/peers/floor.c -o "$out/floor" \
  -lsundials_cvode -lsundials_nvecserial -llapacke -lm
gcc -std=c11 "${warn[@]}" bench/peers/mujoco_driver.c -o "$out/mujoco_driver" -lmujoco -lm
# Simbody's own headers are not -Wextra clean: they are system headers here
g++ -std=c++14 "${warn[@]}" -isystem /usr/include/simbody bench/peers/simbody_driver.cpp \
  -o "$out/simbody_driver" $(pkg-config --libs simbody)
