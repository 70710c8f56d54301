#!/usr/bin/env bash
# clang-format (check only) and clang-tidy over every C and C++ source the repository tracks.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t sources < <(git ls-files '*.h' '*.hpp' '*.cpp' '*.c' | grep -v '^tests/install/consumer/')
echo "clang-format: ${#sources[@]} files"
clang-format --dry-run --Werror "${sources[@]}"

cmake --preset default >/dev/null
mapfile -t units < <(git ls-files 'src/*.cpp' 'tests/*.cpp' 'bench/*.cpp' 'examples/*.cpp' 'python/*.cpp')
echo "clang-tidy: ${#units[@]} translation units"
run-clang-tidy -quiet -p build/default -j 2 "${units[@]/#/$PWD/}" >build/clang-tidy.log 2>&1 || {
  grep -E 'warning:|error:' build/clang-tidy.log | sort -u | head -50
  echo "clang-tidy found problems (full log: build/clang-tidy.log)" >&2
  exit 1
}
# The fuzz targets are built only by the fuzz preset, so only its database has them.
cmake --preset fuzz >/dev/null
mapfile -t fuzz_units < <(git ls-files 'tests/fuzz/*.cpp')
echo "clang-tidy: ${#fuzz_units[@]} fuzz translation units"
run-clang-tidy -quiet -p build/fuzz -j 2 "${fuzz_units[@]/#/$PWD/}" >build/clang-tidy-fuzz.log 2>&1 || {
  grep -E 'warning:|error:' build/clang-tidy-fuzz.log | sort -u | head -50
  echo "clang-tidy found problems (full log: build/clang-tidy-fuzz.log)" >&2
  exit 1
}
echo "lint: clean"
