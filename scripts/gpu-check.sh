#!/usr/bin/env bash
# One command for a machine with an NVIDIA GPU and no network: builds replayrt with the CUDA
# backend (REPLAYRT_ENABLE_CUDA=ON), runs the GPU test suites (ctest label gpu) with
# REPLAYRT_REQUIRE_GPU=1 so that none may skip, runs compute-sanitizer over the GPU tests when
# it is installed, runs the GPU benchmark (and its PyTorch half when torch is importable), and
# writes into $OUT (default build/gpu-out):
#   log.txt          everything below
#   gpu-tests.xml    the gpu tests' JUnit results
#   replayrt.json    gpu_replay_bench's results
#   torch.json       torch_graph_bench.py's results (or the reason it skipped)
#   report.md        the Markdown report (bench/gpu/report.py)
#   summary.json     the exit status of each step
# It takes 3 to 5 minutes on 16 cores; every step has a time limit.
#
# The GPU machine has CMake, Ninja, nvcc and Python but no GoogleTest: the script builds it
# from the ignored folder .deps/googletest, which travels with the tree. Fill it once on a
# machine that has the sources, from the repository root:
#   mkdir -p .deps && cp -r /usr/src/googletest .deps/googletest
# (Debian/Ubuntu: apt-get install googletest puts the sources in /usr/src/googletest.)
#
# Exit status: 0 when the build, every gpu test and the benchmark's checks passed.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-build/gpu-out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
exec > >(tee "$OUT/log.txt") 2>&1
JOBS=${JOBS:-$(nproc)}
declare -A STEP

step() {  # step NAME COMMAND...: runs the command, records its exit status
  local name=$1
  shift
  echo "== $name: $*"
  "$@"
  STEP[$name]=$?
  echo "== $name: exit ${STEP[$name]}"
  return "${STEP[$name]}"
}

finish() {
  {
    echo "{"
    local first=1
    for name in "${!STEP[@]}"; do
      [ $first -eq 1 ] || echo ","
      first=0
      printf '  "%s": %s' "$name" "${STEP[$name]}"
    done
    echo
    echo "}"
  } > "$OUT/summary.json"
  echo "== summary: $(tr -d '\n' < "$OUT/summary.json")"
}
trap finish EXIT

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv ||
  echo "nvidia-smi unavailable"
nvcc --version | tail -2
python3 -c 'import torch; print("torch", torch.__version__, torch.version.cuda)' ||
  echo "torch not importable"

if [ ! -f .deps/googletest/CMakeLists.txt ]; then
  echo "missing .deps/googletest: see the comment at the top of this script"
  STEP[googletest]=1
  exit 1
fi
step googletest bash -c "cmake -S .deps/googletest -B build/gtest -G Ninja \
  -DCMAKE_BUILD_TYPE=Release -DBUILD_GMOCK=OFF -DCMAKE_INSTALL_PREFIX=$PWD/build/deps >/dev/null &&
  cmake --build build/gtest -j$JOBS --target install >/dev/null" || exit 1

step configure cmake -S . -B build/gpu -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DREPLAYRT_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHITECTURES:-90}" \
  -DCMAKE_PREFIX_PATH="$PWD/build/deps" -DREPLAYRT_BUILD_BENCHMARKS=OFF \
  -DREPLAYRT_BUILD_EXAMPLES=OFF -DREPLAYRT_BUILD_GPU_BENCH=ON || exit 1
step build timeout 240 cmake --build build/gpu -j"$JOBS" || exit 1

step gpu_tests env REPLAYRT_REQUIRE_GPU=1 timeout 150 ctest --test-dir build/gpu -L gpu \
  -j"$JOBS" --no-tests=error --output-on-failure --output-junit "$OUT/gpu-tests.xml"
# The CPU suites too, quickly: they must still pass with a device present.
step cpu_tests timeout 120 ctest --test-dir build/gpu -L no_hardware -j"$JOBS" \
  --output-on-failure

if command -v compute-sanitizer >/dev/null; then
  step memcheck env REPLAYRT_REQUIRE_GPU=1 timeout 60 compute-sanitizer --tool memcheck \
    --error-exitcode 1 build/gpu/tests/cuda_gpu_test --gtest_brief=1
else
  echo "compute-sanitizer unavailable here"
fi

step bench timeout 90 build/gpu/bench/gpu_replay_bench --json "$OUT/replayrt.json"
step torch_bench env PYTHONUNBUFFERED=1 timeout 90 python3 bench/gpu/torch_graph_bench.py \
  --json "$OUT/torch.json"
step report bash -c "python3 bench/gpu/report.py '$OUT/replayrt.json' '$OUT/torch.json' \
  | tee '$OUT/report.md'"

status=0
for name in build gpu_tests cpu_tests bench; do
  [ "${STEP[$name]:-1}" -eq 0 ] || status=1
done
exit $status
