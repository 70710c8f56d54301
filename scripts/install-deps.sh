#!/usr/bin/env bash
# Installs the Debian packages replayrt needs to build, test and benchmark, or only the
# packages named as arguments.
set -euo pipefail
packages=(
  cmake ninja-build make g++ clang clang-format clang-tidy libclang-rt-14-dev
  libgtest-dev libgmock-dev libbenchmark-dev python3 patch rsync ccache pkgconf
  pybind11-dev python3-dev python3-numpy python3-pytest python3-torch
  python3-matplotlib libtbb-dev
)
if [ "$#" -ne 0 ]; then
  packages=("$@")
fi
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -q
"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${packages[@]}"
