#!/usr/bin/env bash
# clang-format (check only) and clang-tidy over every C and C++ source the repository tracks.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t sources < <(git ls-files '*.h' '*.hpp' '*.cpp' '*.c' | grep -v '^tests/install/consumer/')
echo "clang-format: ${#sources[@]} files"
clang-format --dry-run --Werror "${sources[@]}"

# The lint preset is the default one with every target's files in unity translation units:
# clang-tidy then walks GoogleTest, pybind11 and the standard library once per 8 files, not once
# per file. The fuzz preset's database (unity too) adds the fuzz targets and what builds only
# without the CUDA backend. Both are only configured here; scripts/lint_units.py lists the
# translation units, each file in the first that holds it, and fails when a tracked source is in
# neither database.
cmake --preset lint >/dev/null
cmake --preset fuzz >/dev/null
# The unity sources include .cpp files by design: clang-tidy reads this file for them.
for database in build/lint build/fuzz; do
  printf '%s\n' 'InheritParentConfig: true' "Checks: '-bugprone-suspicious-include'" \
    >"$database/.clang-tidy"
done
units_list=$(python3 scripts/lint_units.py build/lint build/fuzz)
for database in build/lint build/fuzz; do
  mapfile -t units < <(sed -n "s|^$database ||p" <<<"$units_list")
  log="build/clang-tidy-$(basename "$database").log"
  echo "clang-tidy: ${#units[@]} translation units of $database"
  run-clang-tidy -quiet -p "$database" -j 2 "${units[@]}" >"$log" 2>&1 || {
    grep -E 'warning:|error:' "$log" | sort -u | head -50
    echo "clang-tidy found problems (full log: $log)" >&2
    exit 1
  }
done
echo "lint: clean"
