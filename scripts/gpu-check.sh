#!/usr/bin/env bash
# The one command for a fresh machine with an NVIDIA GPU (no network, no GoogleTest there):
#   bash scripts/gpu-check.sh     # OUT=dir: the output folder (default build/gpu-out; relative
#                                 # paths start at the repository root)
# It takes 2 to 4 minutes with the prebuilt bundle, 1 to 3 more when it builds from source; it
# stops starting steps once REPLAYRT_GPU_CHECK_BUDGET seconds (default 470) have passed, so
# give the command 10 minutes.
#
# What it runs, in order, each step under its own `timeout`:
#   1. prints the environment (nvidia-smi, driver, nvcc, cmake, g++, python3 and torch, uname,
#      nproc, glibc, compute-sanitizer); a missing tool is reported, never fatal by itself;
#   2. takes the binaries from the prebuilt bundle .gpu-bundle/ when it is there, its binaries
#      start and it was built from these sources (its manifest's source_hash); otherwise builds
#      them from source (CUDA sm_90, Release, warnings not errors) with GoogleTest from
#      .deps/googletest; with neither, it fails;
#   3. runs every case of the GPU suites (cuda_gpu_test, cuda_conformance_gpu_test) in its own
#      process, with REPLAYRT_REQUIRE_GPU=1 (a case that would skip for want of a device fails)
#      and a per-case timeout (REPLAYRT_GPU_CHECK_CASE_TIMEOUT, 60 s; 20 s after two timeouts);
#   4. the GPU benchmark (gpu_replay_bench) and its PyTorch half (torch_graph_bench.py, skipped
#      without torch);
#   5. the llama decoder (llama-decoder --platform cuda|sim --tokens 64): both must pass their
#      own checks and decode the same tokens; their tokens/s are reported;
#   6. compute-sanitizer memcheck over three GPU cases (REPLAYRT_GPU_CHECK_MEMCHECK_FILTER
#      overrides), "unavailable" when the tool is missing or does not start;
#   7. the Markdown report (bench/gpu/report.py).
# Results: $OUT holds at most 8 files, rewritten after every step and on any exit:
#   log.txt          everything printed, starting with the environment
#   summary.json     status, build mode, notes, every step and every test case with its status
#                    (pass, fail, timeout, skipped, not_run)
#   report.md        the Markdown report
#   replayrt.json, torch.json, llama.json   benchmark and decoder results
#   results.tar.gz   results/: one log (and gtest JSON) per case, the build logs, the step logs
#                    and copies of the files above
# Exit status 0 when the binaries were built or taken from a matching bundle, every GPU test
# case passed, the benchmarks' checks passed (torch's when torch runs), the decoder's two
# platforms agreed and memcheck found no memory error; 1 otherwise.
#
# Preparing the tree on a machine without a GPU (from the repository root; both ignored by git):
#   make gpu-bundle        # builds .gpu-bundle/ (about 7 MiB); again after changing sources
#   mkdir -p .deps && cp -r /usr/src/googletest .deps/googletest   # the source-build fallback
# and carry both paths with the tree to the GPU machine (for the device tool: carry
# [".gpu-bundle", ".deps"], timeout 600 s).
#
# Environment: OUT, JOBS (build jobs, default nproc), REPLAYRT_GPU_CHECK_BUILD (auto, bundle
# or source), REPLAYRT_GPU_CHECK_BUNDLE (the bundle folder, default .gpu-bundle),
# REPLAYRT_GPU_CHECK_DEPS (the folder holding googletest/, default .deps),
# REPLAYRT_GPU_CHECK_BUDGET, REPLAYRT_GPU_CHECK_CASE_TIMEOUT, REPLAYRT_GPU_CHECK_MEMCHECK_FILTER.
# Self-test (REPLAYRT_GPU_CHECK_SELF_TEST=1, tests/gpu_check): no build, no benchmark, no
# memcheck; the per-case runner runs the binaries in REPLAYRT_GPU_CHECK_TEST_BINARIES (default
# build/default/tests/cuda_gpu_fake_test, the GPU suite on the fake CUDA platform).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1

OUT=${OUT:-build/gpu-out}
mkdir -p "$OUT" || exit 1
OUT=$(cd "$OUT" && pwd)
OUT_FILES=(log.txt summary.json report.md replayrt.json torch.json llama.json results.tar.gz)
for file in "${OUT_FILES[@]}"; do
  rm -f "$OUT/$file"
done
WORK=$(mktemp -d "${TMPDIR:-/tmp}/replayrt-gpu-check.XXXXXX") || exit 1
RES=$WORK/results
mkdir -p "$RES/cases" "$RES/build" "$RES/logs"
exec > >(tee "$OUT/log.txt") 2>&1
TEE_PID=$!

SELF_TEST=${REPLAYRT_GPU_CHECK_SELF_TEST:-0}
BUILD_CHOICE=${REPLAYRT_GPU_CHECK_BUILD:-auto}
BUNDLE=${REPLAYRT_GPU_CHECK_BUNDLE:-.gpu-bundle}
DEPS=${REPLAYRT_GPU_CHECK_DEPS:-.deps}
BUDGET=${REPLAYRT_GPU_CHECK_BUDGET:-470}
CASE_TIMEOUT=${REPLAYRT_GPU_CHECK_CASE_TIMEOUT:-60}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 4)}
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
# Seconds kept back from every step's limit for the packing at the end.
RESERVE=15
DEADLINE=$((SECONDS + BUDGET))

BUILD_MODE=none
FINISHED=0
NOTES=()
STEP_ORDER=()
declare -A STEP_STATUS STEP_EXIT STEP_SECONDS STEP_NOTE
CASES_TSV=$RES/cases.tsv
: > "$CASES_TSV"
TIMEOUTS=0

json_str() {
  local s=$1
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//$'\n'/\\n}
  s=${s//$'\t'/\\t}
  s=${s//$'\r'/}
  printf '"%s"' "$s"
}

# json_num VALUE: the value when it is a number, null otherwise.
json_num() {
  if [[ $1 =~ ^-?[0-9]+(\.[0-9]+)?$ ]]; then
    printf '%s' "$1"
  else
    printf 'null'
  fi
}

note() {  # note WORDS...: a line for summary.json's notes and the log
  NOTES+=("$*")
  echo "NOTE: $*"
}

# record_step NAME STATUS EXIT SECONDS NOTE
record_step() {
  [ -n "${STEP_STATUS[$1]+set}" ] || STEP_ORDER+=("$1")
  STEP_STATUS[$1]=$2
  STEP_EXIT[$1]=$3
  STEP_SECONDS[$1]=$4
  STEP_NOTE[$1]=$5
}

# limit_for SECONDS: the step's limit, cut to what the budget has left (0: no time left).
limit_for() {
  local want=$1 left=$((DEADLINE - SECONDS - RESERVE))
  ((left < want)) && want=$left
  ((want < 0)) && want=0
  echo "$want"
}

status_of() {  # status_of EXIT: pass, timeout or fail
  case $1 in
    0) echo pass ;;
    124 | 137) echo timeout ;;
    *) echo fail ;;
  esac
}

# run_step [--quiet] NAME SECONDS LOG COMMAND...: runs COMMAND under `timeout`, its output in
# LOG (and on the console unless --quiet; the last lines of LOG when a quiet step fails),
# records the step and packs the results. Returns the command's exit status.
run_step() {
  local quiet=0
  if [ "$1" = --quiet ]; then
    quiet=1
    shift
  fi
  local name=$1 limit log=$3 start=$SECONDS rc status
  limit=$(limit_for "$2")
  shift 3
  if ((limit < 5)); then
    record_step "$name" not_run "" 0 "the time budget ran out first"
    echo "== $name: not run, the time budget ran out"
    return 1
  fi
  echo "== $name (limit ${limit} s): $*"
  if ((quiet)); then
    timeout -k 10 "$limit" "$@" > "$log" 2>&1
    rc=$?
  else
    timeout -k 10 "$limit" "$@" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
  fi
  status=$(status_of "$rc")
  record_step "$name" "$status" "$rc" $((SECONDS - start)) ""
  echo "== $name: $status (exit $rc, $((SECONDS - start)) s)"
  if ((quiet)) && [ "$status" != pass ]; then
    echo "-- the last lines of ${log#"$WORK"/}:"
    tail -n 40 "$log"
  fi
  pack
  return "$rc"
}

write_summary() {
  local status=$1 code=$2 file=$RES/summary.json first name
  local pass=0 fail=0 timeout=0 skipped=0 not_run=0
  local binary case_name case_status case_exit case_seconds case_log
  {
    echo "{"
    echo "  \"status\": $(json_str "$status"),"
    echo "  \"exit_code\": $(json_num "$code"),"
    echo "  \"finished\": $([ "$FINISHED" = 1 ] && echo true || echo false),"
    echo "  \"self_test\": $([ "$SELF_TEST" = 1 ] && echo true || echo false),"
    echo "  \"build_mode\": $(json_str "$BUILD_MODE"),"
    echo "  \"elapsed_s\": $SECONDS,"
    printf '  "notes": ['
    first=1
    for name in "${NOTES[@]+"${NOTES[@]}"}"; do
      ((first)) || printf ', '
      first=0
      json_str "$name"
    done
    echo "],"
    printf '  "steps": {'
    first=1
    for name in "${STEP_ORDER[@]+"${STEP_ORDER[@]}"}"; do
      ((first)) || printf ','
      first=0
      printf '\n    %s: {"status": %s, "exit": %s, "seconds": %s, "note": %s}' \
        "$(json_str "$name")" "$(json_str "${STEP_STATUS[$name]}")" \
        "$(json_num "${STEP_EXIT[$name]}")" "$(json_num "${STEP_SECONDS[$name]}")" \
        "$(json_str "${STEP_NOTE[$name]}")"
    done
    printf '\n  },\n  "cases": ['
    first=1
    while IFS=$'\t' read -r binary case_name case_status case_exit case_seconds case_log; do
      ((first)) || printf ','
      first=0
      printf '\n    {"binary": %s, "name": %s, "status": %s, "exit": %s, "seconds": %s, ' \
        "$(json_str "$binary")" "$(json_str "$case_name")" "$(json_str "$case_status")" \
        "$(json_num "$case_exit")" "$(json_num "$case_seconds")"
      printf '"log": %s}' "$(json_str "$case_log")"
      case $case_status in
        pass) pass=$((pass + 1)) ;;
        timeout) timeout=$((timeout + 1)) ;;
        skipped) skipped=$((skipped + 1)) ;;
        not_run) not_run=$((not_run + 1)) ;;
        *) fail=$((fail + 1)) ;;
      esac
    done < "$CASES_TSV"
    printf '\n  ],\n'
    printf '  "counts": {"pass": %d, "fail": %d, "timeout": %d, "skipped": %d, "not_run": %d}\n' \
      "$pass" "$fail" "$timeout" "$skipped" "$not_run"
    echo "}"
  } > "$file.tmp" && mv "$file.tmp" "$file"
}

# pack [STATUS CODE]: the summary, the report and results.tar.gz into $OUT.
pack() {
  local status=${1:-running} code=${2:-} file
  write_summary "$status" "$code"
  if command -v python3 > /dev/null 2>&1; then
    timeout 60 python3 bench/gpu/report.py --summary "$RES/summary.json" \
      --replayrt "$RES/replayrt.json" --torch "$RES/torch.json" --llama "$RES/llama.json" \
      > "$RES/report.md" 2> "$RES/logs/report.log" ||
      echo "(report.py failed: see results/logs/report.log)" >> "$RES/report.md"
  else
    echo "# GPU check report: python3 is unavailable, see summary.json" > "$RES/report.md"
  fi
  for file in summary.json report.md replayrt.json torch.json llama.json; do
    [ -f "$RES/$file" ] && cp -f "$RES/$file" "$OUT/$file"
  done
  tar -czf "$OUT/results.tar.gz.tmp" -C "$WORK" results 2> /dev/null &&
    mv -f "$OUT/results.tar.gz.tmp" "$OUT/results.tar.gz"
}

overall_status() {  # prints pass or fail
  local name required=(build)
  if [ "$SELF_TEST" != 1 ]; then
    required+=(bench llama)
  fi
  for name in "${required[@]}"; do
    case ${STEP_STATUS[$name]:-missing}/$SELF_TEST in
      pass/* | skipped/1) ;;
      *) echo fail && return ;;
    esac
  done
  for name in "${STEP_ORDER[@]}"; do
    case $name in
      tests:*) [ "${STEP_STATUS[$name]}" = pass ] || { echo fail && return; } ;;
    esac
  done
  grep -q . "$CASES_TSV" || { echo fail && return; }
  if [ "$(cut -f3 "$CASES_TSV" | grep -vc '^pass$')" -ne 0 ]; then
    echo fail && return
  fi
  case ${STEP_STATUS[torch_bench]:-skipped} in
    fail | timeout) echo fail && return ;;
  esac
  [ "${STEP_STATUS[memcheck]:-}" = errors ] && echo fail && return
  echo pass
}

# shellcheck disable=SC2317 # runs from the EXIT trap
finish() {
  local rc=$? status
  trap - EXIT
  status=$(overall_status)
  if [ "$FINISHED" != 1 ]; then
    status=fail
    note "the check stopped before its end (exit $rc)"
  fi
  if [ "$status" = pass ]; then
    rc=0
  elif [ "$rc" -eq 0 ]; then
    rc=1
  fi
  echo "== result: $status (exit $rc) after $SECONDS s; files in $OUT"
  pack "$status" "$rc"
  ls -l "$OUT"
  exec > /dev/null 2>&1
  wait "$TEE_PID" 2> /dev/null
  rm -rf "$WORK"
  exit "$rc"
}
trap finish EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

# probe LABEL COMMAND...: the command's output under LABEL, or why it has none.
probe() {
  local label=$1 output rc
  shift
  if ! command -v "$1" > /dev/null 2>&1; then
    echo "$label: unavailable ($1 not found)"
    return
  fi
  output=$(timeout -k 5 60 "$@" 2>&1)
  rc=$?
  if [ "$rc" -eq 0 ]; then
    echo "$label:"
  else
    echo "$label: failed (exit $rc)"
  fi
  printf '%s\n' "$output" | head -n 20 | sed 's/^/  /'
}

environment() {
  echo "== environment ($(date -u '+%Y-%m-%d %H:%M:%S UTC'))"
  probe "nvidia-smi -L" nvidia-smi -L
  local query=index,name,driver_version,memory.total,compute_cap,clocks.sm,clocks.max.sm
  probe "nvidia-smi --query-gpu" nvidia-smi --format=csv \
    --query-gpu="$query,clocks.mem,persistence_mode"
  if [ -r /proc/driver/nvidia/version ]; then
    probe "driver" cat /proc/driver/nvidia/version
  else
    echo "driver: unavailable (no /proc/driver/nvidia/version)"
  fi
  probe "nvcc ($NVCC)" "$NVCC" --version
  probe "cmake" cmake --version
  probe "ninja" ninja --version
  probe "g++" g++ --version
  probe "python3" python3 --version
  probe "torch" python3 -c 'import torch
print("torch", torch.__version__, "CUDA", torch.version.cuda)
print("torch.cuda.is_available", torch.cuda.is_available())'
  probe "compute-sanitizer" "$(command -v compute-sanitizer ||
    echo "$(dirname "$NVCC")/compute-sanitizer")" --version
  probe "uname" uname -a
  probe "nproc" nproc
  probe "glibc" ldd --version
  if [ -r /etc/os-release ]; then
    echo "os: $(sed -n 's/^PRETTY_NAME=//p' /etc/os-release | tr -d '"')"
  fi
  echo "CUDA_MODULE_LOADING: ${CUDA_MODULE_LOADING:-unset}"
  echo "== environment end"
}

# The hash of the sources the binaries are built from (scripts/gpu-bundle.sh writes the same
# into the bundle's manifest).
source_hash() {
  bash scripts/gpu-bundle.sh --source-hash 2> /dev/null || echo unknown
}

# bundle_starts DIR: every binary of the bundle starts here (the loader finds its libraries).
bundle_starts() {
  local dir=$1 log=$RES/build/bundle-start.log
  : > "$log"
  for binary in cuda_gpu_test cuda_conformance_gpu_test; do
    echo "-- $binary --gtest_list_tests" >> "$log"
    timeout 30 "$dir/$binary" --gtest_list_tests >> "$log" 2>&1 || return 1
  done
  echo "-- gpu_replay_bench --help" >> "$log"
  timeout 30 "$dir/gpu_replay_bench" --help >> "$log" 2>&1 || return 1
  echo "-- llama-decoder --platform sim --tokens 2 --quiet" >> "$log"
  timeout 60 "$dir/llama-decoder" --platform sim --tokens 2 --quiet >> "$log" 2>&1 || return 1
}

use_bundle() {
  local dir=$1
  TEST_BINARIES=("$dir/cuda_gpu_test" "$dir/cuda_conformance_gpu_test")
  BENCH=$dir/gpu_replay_bench
  LLAMA=$dir/llama-decoder
  export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  BUILD_MODE=bundle
  record_step build pass 0 0 "prebuilt bundle $dir ($(grep -E '^(commit|built)=' \
    "$dir/manifest.txt" | tr '\n' ' '))"
}

build_from_source() {
  local gtest_prefix=$ROOT/build/gpu-deps/install generator=Ninja
  command -v ninja > /dev/null 2>&1 || generator="Unix Makefiles"
  if [ ! -f "$DEPS/googletest/CMakeLists.txt" ]; then
    echo "FAILED: no usable prebuilt bundle ($BUNDLE) and no GoogleTest sources in"
    echo "  $DEPS/googletest to build from: run 'make gpu-bundle' and/or"
    echo "  'mkdir -p .deps && cp -r /usr/src/googletest .deps/googletest' where the sources"
    echo "  exist, and carry .gpu-bundle and .deps with the tree."
    record_step build fail 1 0 "no bundle and no $DEPS/googletest: nothing to build from"
    return 1
  fi
  BUILD_MODE=source
  if [ ! -f "$gtest_prefix/lib/cmake/GTest/GTestConfig.cmake" ] &&
    [ ! -f "$gtest_prefix/lib64/cmake/GTest/GTestConfig.cmake" ]; then
    run_step --quiet googletest 180 "$RES/build/googletest.log" bash -c "
      cmake -S '$DEPS/googletest' -B build/gpu-deps/googletest -G '$generator' \
        -DCMAKE_BUILD_TYPE=Release -DBUILD_GMOCK=OFF -DINSTALL_GTEST=ON \
        -DCMAKE_POLICY_VERSION_MINIMUM=3.5 -DCMAKE_INSTALL_PREFIX='$gtest_prefix' &&
      cmake --build build/gpu-deps/googletest -j$JOBS --target install" ||
      { record_step build fail 1 0 "GoogleTest did not build" && return 1; }
  fi
  run_step --quiet configure 120 "$RES/build/configure.log" cmake -S . -B build/gpu \
    -G "$generator" -DCMAKE_BUILD_TYPE=Release -DREPLAYRT_ENABLE_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DREPLAYRT_WARNINGS_AS_ERRORS=OFF \
    -DCMAKE_CUDA_COMPILER="$NVCC" -DCMAKE_POLICY_VERSION_MINIMUM=3.5 \
    -DREPLAYRT_BUILD_GPU_BENCH=ON -DREPLAYRT_BUILD_BENCHMARKS=OFF \
    -DREPLAYRT_BUILD_EXAMPLES=ON -DREPLAYRT_BUILD_TESTS=ON -DCMAKE_PREFIX_PATH="$gtest_prefix" ||
    { record_step build fail 1 0 "configuration failed" && return 1; }
  run_step --quiet build 360 "$RES/build/build.log" cmake --build build/gpu -j"$JOBS" \
    --target cuda_gpu_test cuda_conformance_gpu_test gpu_replay_bench llama-decoder ||
    return 1
  TEST_BINARIES=(build/gpu/tests/cuda_gpu_test build/gpu/tests/cuda_conformance_gpu_test)
  BENCH=build/gpu/bench/gpu_replay_bench
  LLAMA=build/gpu/examples/llama-decoder
}

select_binaries() {
  local wanted built_from
  if [ "$BUILD_CHOICE" != source ] && [ -f "$BUNDLE/manifest.txt" ]; then
    BUNDLE=$(cd "$BUNDLE" && pwd)
    echo "== bundle $BUNDLE:"
    sed 's/^/  /' "$BUNDLE/manifest.txt"
    cp "$BUNDLE/manifest.txt" "$RES/build/bundle-manifest.txt"
    # A copy that dropped the mode bits still runs.
    chmod u+x "$BUNDLE"/cuda_gpu_test "$BUNDLE"/cuda_conformance_gpu_test \
      "$BUNDLE"/gpu_replay_bench "$BUNDLE"/llama-decoder 2> /dev/null
    if ! LD_LIBRARY_PATH="$BUNDLE${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
      bundle_starts "$BUNDLE"; then
      note "the bundle's binaries do not start here (results/build/bundle-start.log):"
      tail -n 5 "$RES/build/bundle-start.log"
    else
      wanted=$(source_hash)
      built_from=$(sed -n 's/^source_hash=//p' "$BUNDLE/manifest.txt")
      if [ "$wanted" = "$built_from" ] || [ "$BUILD_CHOICE" = bundle ]; then
        [ "$wanted" = "$built_from" ] ||
          note "the bundle is STALE (built from sources $built_from, these are $wanted)"
        use_bundle "$BUNDLE"
        return 0
      fi
      if [ -f "$DEPS/googletest/CMakeLists.txt" ]; then
        note "the bundle was built from other sources ($built_from, these are $wanted):" \
          "building from source"
      else
        note "the bundle is STALE (built from sources $built_from, these are $wanted) and" \
          "there is no $DEPS/googletest to build from: its binaries run"
        use_bundle "$BUNDLE"
        return 0
      fi
    fi
  elif [ "$BUILD_CHOICE" = bundle ]; then
    note "REPLAYRT_GPU_CHECK_BUILD=bundle but $BUNDLE/manifest.txt is missing"
  fi
  if [ "$BUILD_CHOICE" = bundle ]; then
    record_step build fail 1 0 "REPLAYRT_GPU_CHECK_BUILD=bundle and no usable bundle"
    return 1
  fi
  build_from_source
}

# list_cases BINARY: its test names (Suite.Case) from --gtest_list_tests.
list_cases() {
  awk '
    /^[^ ]/ { suite = ($1 ~ /\.$/) ? $1 : ""; next }
    /^  [^ ]/ { if (suite != "") print suite $1 }
  '
}

# run_cases BINARY: each of its cases in its own process; records the step tests:<name>.
run_cases() {
  local binary=$1 name dir list rc case_name safe log limit start status failed=0 count=0
  local -a cases
  name=$(basename "$binary")
  dir=$RES/cases/$name
  mkdir -p "$dir"
  echo "== tests:$name: $binary"
  list=$(REPLAYRT_REQUIRE_GPU=1 timeout -k 5 60 "$binary" --gtest_list_tests \
    2> "$dir/list.stderr")
  rc=$?
  printf '%s\n' "$list" > "$dir/list.txt"
  mapfile -t cases < <(printf '%s\n' "$list" | list_cases)
  if [ "$rc" -ne 0 ] || [ "${#cases[@]}" -eq 0 ]; then
    echo "== tests:$name: FAILED to list its cases (exit $rc, ${#cases[@]} cases)"
    cat "$dir/list.stderr"
    record_step "tests:$name" fail "$rc" 0 "listing the cases failed (exit $rc, ${#cases[@]} cases)"
    pack
    return 1
  fi
  start=$SECONDS
  for case_name in "${cases[@]}"; do
    safe=${case_name//\//_}
    log=$dir/$safe.log
    limit=$CASE_TIMEOUT
    ((TIMEOUTS >= 2 && limit > 20)) && limit=20
    limit=$(limit_for "$limit")
    if ((limit < 5)); then
      printf '%s\t%s\tnot_run\t\t0\t%s\n' "$name" "$case_name" "" >> "$CASES_TSV"
      echo "  not_run  $case_name (the time budget ran out)"
      failed=1
      continue
    fi
    local case_start=$SECONDS
    REPLAYRT_REQUIRE_GPU=1 timeout -k 5 "$limit" "$binary" --gtest_filter="$case_name" \
      --gtest_color=no --gtest_output="json:$dir/$safe.json" > "$log" 2>&1
    rc=$?
    status=$(status_of "$rc")
    if [ "$status" = pass ]; then
      if grep -q '^\[  SKIPPED \] 1 test' "$log"; then
        status=skipped
      elif ! grep -q '^\[  PASSED  \] 1 test' "$log"; then
        status=fail
        echo "ran no test: the filter matched nothing" >> "$log"
      fi
    fi
    [ "$status" = timeout ] && TIMEOUTS=$((TIMEOUTS + 1))
    [ "$status" = pass ] || failed=1
    count=$((count + 1))
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$case_name" "$status" "$rc" \
      $((SECONDS - case_start)) "cases/$name/$safe.log" >> "$CASES_TSV"
    printf '  %-8s %s (%d s)\n' "$status" "$case_name" $((SECONDS - case_start))
    if [ "$status" != pass ]; then
      grep -E 'Failure|error|Error|FAILED|SKIPPED|Expected|Which is|Value of|timeout' "$log" |
        head -n 12 | sed 's/^/      /'
    fi
    write_summary running ""
  done
  record_step "tests:$name" "$([ "$failed" = 0 ] && echo pass || echo fail)" "$failed" \
    $((SECONDS - start)) "$count of ${#cases[@]} cases ran"
  pack
  [ "$failed" = 0 ]
}

# The tokens/s of one llama-decoder run: "program" or "kernel".
tokens_per_s() {
  sed -n "s/^$2 mode: *\([0-9.]*\) tokens\/s.*/\1/p" "$1" | head -n 1
}

run_llama() {
  local platform rc_cuda=none rc_sim=none tokens_cuda tokens_sim same=null status note=""
  for platform in cuda sim; do
    run_step "llama:$platform" 150 "$RES/logs/llama-$platform.txt" \
      "$LLAMA" --platform "$platform" --tokens 64
    if [ "$platform" = cuda ]; then
      rc_cuda=${STEP_EXIT[llama:cuda]}
    else
      rc_sim=${STEP_EXIT[llama:sim]}
    fi
  done
  tokens_cuda=$(grep -m1 '^tokens:' "$RES/logs/llama-cuda.txt" 2> /dev/null)
  tokens_sim=$(grep -m1 '^tokens:' "$RES/logs/llama-sim.txt" 2> /dev/null)
  if [ -n "$tokens_cuda" ] && [ -n "$tokens_sim" ]; then
    if [ "$tokens_cuda" = "$tokens_sim" ]; then
      same=true
    else
      same=false
      note="the platforms decoded different tokens"
    fi
  else
    note="a platform printed no tokens"
  fi
  status=fail
  [ "$rc_cuda" = 0 ] && [ "$rc_sim" = 0 ] && [ "$same" = true ] && status=pass
  record_step llama "$status" "" 0 "$note"
  {
    echo "{"
    for platform in cuda sim; do
      local file=$RES/logs/llama-$platform.txt rc
      rc=$([ "$platform" = cuda ] && echo "$rc_cuda" || echo "$rc_sim")
      printf '  "%s": {"exit": %s, "program_tokens_per_s": %s, "kernel_tokens_per_s": %s, ' \
        "$platform" "$(json_num "$rc")" "$(json_num "$(tokens_per_s "$file" program)")" \
        "$(json_num "$(tokens_per_s "$file" kernel)")"
      printf '"tokens": %s},\n' "$(json_str "$(grep -m1 '^tokens:' "$file" 2> /dev/null)")"
    done
    echo "  \"same_tokens\": $same"
    echo "}"
  } > "$RES/llama.json"
  echo "== llama: $status (tokens/s: cuda program" \
    "$(tokens_per_s "$RES/logs/llama-cuda.txt" program)," \
    "kernel $(tokens_per_s "$RES/logs/llama-cuda.txt" kernel); sim program" \
    "$(tokens_per_s "$RES/logs/llama-sim.txt" program), kernel" \
    "$(tokens_per_s "$RES/logs/llama-sim.txt" kernel); same tokens: $same)"
  pack
}

run_memcheck() {
  local sanitizer filter binary=${TEST_BINARIES[0]} rc
  sanitizer=$(command -v compute-sanitizer || echo "$(dirname "$NVCC")/compute-sanitizer")
  if [ ! -x "$sanitizer" ] || ! timeout 30 "$sanitizer" --version > /dev/null 2>&1; then
    record_step memcheck unavailable "" 0 "compute-sanitizer is not installed or does not start"
    echo "== memcheck: unavailable (compute-sanitizer is not installed or does not start)"
    pack
    return 0
  fi
  filter=${REPLAYRT_GPU_CHECK_MEMCHECK_FILTER:-$(awk -F '\t' -v b="$(basename "$binary")" \
    '$1 == b { print $2 }' "$CASES_TSV" | head -n 3 | paste -sd: -)}
  if [ -z "$filter" ]; then
    record_step memcheck not_run "" 0 "no case of $(basename "$binary") to run"
    pack
    return 0
  fi
  run_step memcheck 180 "$RES/logs/memcheck.log" env REPLAYRT_REQUIRE_GPU=1 "$sanitizer" \
    --tool memcheck --report-api-errors no --error-exitcode 86 "$binary" \
    --gtest_filter="$filter" --gtest_color=no
  rc=$?
  # 86: memory errors found. Any other failure is the tool's or a test's, reported as is.
  case $rc in
    0) ;;
    86) record_step memcheck errors "$rc" "${STEP_SECONDS[memcheck]}" "memory errors found" ;;
    124 | 137) ;;
    *) record_step memcheck tool_error "$rc" "${STEP_SECONDS[memcheck]}" \
      "compute-sanitizer or the cases failed without a memory error report" ;;
  esac
  pack
}

# The whole run is one function, read in full before it starts.
main() {
  environment 2>&1 | tee "$RES/logs/environment.txt"
  pack

  if [ "$SELF_TEST" = 1 ]; then
    BUILD_MODE=self-test
    read -r -a TEST_BINARIES <<< \
      "${REPLAYRT_GPU_CHECK_TEST_BINARIES:-build/default/tests/cuda_gpu_fake_test}"
    record_step build skipped 0 0 "self-test: no build"
    note "self-test: the test cases of ${TEST_BINARIES[*]}; no build, benchmark or memcheck"
  else
    select_binaries || exit 1
  fi

  local binary
  for binary in "${TEST_BINARIES[@]}"; do
    run_cases "$binary"
  done

  if [ "$SELF_TEST" != 1 ]; then
    run_step bench 180 "$RES/logs/bench.log" "$BENCH" --json "$RES/replayrt.json"
    if command -v python3 > /dev/null 2>&1; then
      run_step torch_bench 180 "$RES/logs/torch_bench.log" env PYTHONUNBUFFERED=1 python3 \
        bench/gpu/torch_graph_bench.py --json "$RES/torch.json" &&
        grep -q '"skipped"' "$RES/torch.json" 2> /dev/null &&
        record_step torch_bench skipped 0 "${STEP_SECONDS[torch_bench]}" \
          "$(sed -n 's/.*"skipped": *"\(.*\)".*/\1/p' "$RES/torch.json")"
    else
      record_step torch_bench unavailable "" 0 "python3 is not installed"
    fi
    run_llama
    run_memcheck
  fi

  FINISHED=1
  if [ "$(overall_status)" = pass ]; then
    exit 0
  fi
  exit 1
}
main
