#!/usr/bin/env bash
# Checks that the tools and libraries the build needs are present, and says how to get the
# missing ones instead of letting the build fail with a compiler error. With --bench it also
# checks what `make bench` alone needs: matplotlib for bench/plot_results.py.
set -u
missing=()
bench=0
[ "${1:-}" = "--bench" ] && bench=1
need_cmd() { command -v "$1" >/dev/null 2>&1 || missing+=("$1 (command)"); }
# need_cmake_package NAME CONFIG-FILE DEBIAN-PACKAGE: passes when any standard prefix has it.
need_cmake_package() {
  local candidate
  for candidate in /usr/lib/*/cmake/"$1"/"$2" /usr/lib/cmake/"$1"/"$2" \
      /usr/local/lib/cmake/"$1"/"$2" /usr/local/lib/*/cmake/"$1"/"$2"; do
    [ -e "$candidate" ] && return 0
  done
  missing+=("$1 ($3)")
}

need_cmd cmake
need_cmd ninja
need_cmd g++
need_cmd clang++
need_cmd python3
need_cmd patch
need_cmd clang-format
need_cmd clang-tidy
need_cmd run-clang-tidy
# The install test builds a consumer with pkg-config's flags.
command -v pkg-config >/dev/null 2>&1 || missing+=("pkg-config (pkgconf)")
need_cmake_package GTest GTestConfig.cmake libgtest-dev
need_cmake_package benchmark benchmarkConfig.cmake libbenchmark-dev
# The Python package and its tests: Debian's interpreter with its python3-* packages.
need_cmake_package pybind11 pybind11Config.cmake pybind11-dev
[ -e "$(/usr/bin/python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null)/Python.h" ] ||
  missing+=("Python headers for /usr/bin/python3 (python3-dev)")
for module in numpy:python3-numpy pytest:python3-pytest torch:python3-torch; do
  /usr/bin/python3 -c "import ${module%%:*}" >/dev/null 2>&1 ||
    missing+=("Python module ${module%%:*} for /usr/bin/python3 (${module#*:})")
done
if [ "$bench" -eq 1 ]; then
  /usr/bin/python3 -c "import matplotlib" >/dev/null 2>&1 ||
    missing+=("Python module matplotlib for /usr/bin/python3, for the plots (python3-matplotlib)")
fi
# The sanitizer presets link clang's runtimes.
if command -v clang++ >/dev/null 2>&1; then
  runtime=$(clang++ -print-file-name="libclang_rt.asan-$(uname -m).a" 2>/dev/null)
  [ -e "$runtime" ] || missing+=("clang sanitizer runtimes (libclang-rt-14-dev)")
  fuzzer=$(clang++ -print-file-name="libclang_rt.fuzzer-$(uname -m).a" 2>/dev/null)
  [ -e "$fuzzer" ] || missing+=("libFuzzer runtime for make fuzz (libclang-rt-14-dev)")
fi

if [ "${#missing[@]}" -ne 0 ]; then
  echo "replayrt: missing build dependencies:" >&2
  printf '  - %s\n' "${missing[@]}" >&2
  echo "Install them with: scripts/install-deps.sh" >&2
  exit 1
fi
