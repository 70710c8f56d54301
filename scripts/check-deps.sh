#!/usr/bin/env bash
# Checks that the tools and libraries the build needs are present, and says how to get the
# missing ones instead of letting the build fail with a compiler error.
set -u
missing=()
need_cmd() { command -v "$1" >/dev/null 2>&1 || missing+=("$1 (command)"); }

need_cmd cmake
need_cmd ninja
need_cmd g++
need_cmd clang++
need_cmd python3
need_cmd patch
if ! ls /usr/lib/*/cmake/GTest/GTestConfig.cmake /usr/lib/cmake/GTest/GTestConfig.cmake \
    >/dev/null 2>&1; then
  missing+=("GoogleTest (libgtest-dev)")
fi
if ! ls /usr/lib/*/cmake/benchmark/benchmarkConfig.cmake /usr/lib/cmake/benchmark/benchmarkConfig.cmake \
    >/dev/null 2>&1; then
  missing+=("Google Benchmark (libbenchmark-dev)")
fi

if [ "${#missing[@]}" -ne 0 ]; then
  echo "replayrt: missing build dependencies:" >&2
  printf '  - %s\n' "${missing[@]}" | sort -u >&2
  echo "Install them with: scripts/install-deps.sh" >&2
  exit 1
fi
