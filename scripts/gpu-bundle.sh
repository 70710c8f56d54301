#!/usr/bin/env bash
# The prebuilt bundle scripts/gpu-check.sh prefers on a GPU machine (make gpu-bundle runs it):
#   scripts/gpu-bundle.sh BUILD_DIR DEST   copies the GPU binaries of BUILD_DIR (the gpu-bundle
#                                          preset's build) into DEST (.gpu-bundle), checks that
#                                          they start and writes DEST/manifest.txt; the source
#                                          hash is BUILD_DIR/source-hash.txt (written before the
#                                          build) when it is there and still matches, and
#                                          "changed-during-the-build" (never fresh) when not
#   scripts/gpu-bundle.sh --source-hash    prints the hash of the sources the binaries are
#                                          built from (gpu-check.sh compares it with the
#                                          manifest's source_hash)
# DEST holds cuda_gpu_test, cuda_conformance_gpu_test, gpu_replay_bench, llama-decoder and
# libreplayrt.so.0 side by side (the binaries' run path is $ORIGIN; the CUDA runtime and
# GoogleTest are linked statically, libstdc++ and glibc dynamically: the GPU machine's own are
# newer), bench/gpu/*.py and manifest.txt (commit, source hash, build date, compiler versions,
# the newest glibc and libstdc++ symbol versions the binaries need). Exit status 0, or 1 with
# the reason when a binary is missing or does not start.
set -euo pipefail
cd "$(dirname "$0")/.."

source_hash() {
  find src include tests examples bench cmake CMakeLists.txt -type f \
    ! -name '*.py' ! -name '*.pyc' ! -name compile_commands.json ! -path '*/__pycache__/*' \
    ! -path 'tests/gpu_check/*' -print0 | LC_ALL=C sort -z | xargs -0 sha256sum |
    sha256sum | cut -c1-16
}

if [ "${1:-}" = --source-hash ]; then
  source_hash
  exit 0
fi
if [ $# -ne 2 ]; then
  echo "usage: scripts/gpu-bundle.sh BUILD_DIR DEST | --source-hash" >&2
  exit 2
fi
build=$1
dest=$2
binaries=(tests/cuda_gpu_test tests/cuda_conformance_gpu_test bench/gpu_replay_bench
  examples/llama-decoder)
for binary in "${binaries[@]}" src/libreplayrt.so.0; do
  if [ ! -e "$build/$binary" ]; then
    echo "gpu-bundle: $build/$binary is missing (build the gpu-bundle preset first)" >&2
    exit 1
  fi
done

rm -rf "$dest"
mkdir -p "$dest"
for binary in "${binaries[@]}"; do
  cp "$build/$binary" "$dest/"
done
cp -L "$build/src/libreplayrt.so.0" "$dest/libreplayrt.so.0"
cp bench/gpu/*.py "$dest/"

# Every binary starts with the loader finding libreplayrt next to it (no GPU needed).
check() {
  if ! env -u LD_LIBRARY_PATH timeout 60 "$@" > /dev/null 2>&1; then
    echo "gpu-bundle: '$*' does not start:" >&2
    env -u LD_LIBRARY_PATH timeout 60 "$@" 2>&1 | tail -n 5 >&2
    exit 1
  fi
}
check "$dest/cuda_gpu_test" --gtest_list_tests
check "$dest/cuda_conformance_gpu_test" --gtest_list_tests
check "$dest/gpu_replay_bench" --help
check "$dest/llama-decoder" --platform sim --tokens 2 --quiet

hash=$(source_hash)
if [ -f "$build/source-hash.txt" ] && [ "$(cat "$build/source-hash.txt")" != "$hash" ]; then
  echo "gpu-bundle: the sources changed during the build; gpu-check.sh will not trust it" >&2
  hash=changed-during-the-build
fi
nvcc=$(sed -n 's/^CMAKE_CUDA_COMPILER:[^=]*=//p' "$build/CMakeCache.txt")
symbols=$(for file in "$dest"/cuda_* "$dest"/gpu_replay_bench "$dest"/llama-decoder \
  "$dest"/libreplayrt.so.0; do objdump -T "$file"; done)
newest() { grep -o "$1_[0-9.]*[0-9]" <<< "$symbols" | sort -u -V | tail -n 1; }
commit=$(git rev-parse HEAD 2> /dev/null || echo unknown)
if [ -n "$(git status --porcelain --untracked-files=no 2> /dev/null)" ]; then
  commit="$commit (with uncommitted changes)"
fi
{
  echo "commit=$commit"
  echo "source_hash=$hash"
  echo "built=$(date -u '+%Y-%m-%dT%H:%M:%SZ')"
  echo "build_host=$(uname -srm), $(ldd --version | head -n 1)"
  echo "requires=$(newest GLIBC), $(newest GLIBCXX) or newer"
  echo "cxx=$(g++ --version | head -n 1)"
  echo "nvcc=$("${nvcc:-nvcc}" --version | grep -m1 release)"
  echo "cmake=$(cmake --version | head -n 1)"
  echo "cuda_architectures=$(sed -n 's/^CMAKE_CUDA_ARCHITECTURES:[^=]*=//p' \
    "$build/CMakeCache.txt")"
  echo "files=$(cd "$dest" && printf '%s ' *)"
} > "$dest/manifest.txt"
echo "gpu-bundle: $dest ($(du -sh "$dest" | cut -f1)):"
sed 's/^/  /' "$dest/manifest.txt"
