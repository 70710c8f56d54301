#!/usr/bin/env bash
# Runs each libFuzzer target for a bounded time, starting from its committed seed corpus. The
# targets run side by side (each libFuzzer process is single-threaded), so the wall time is about
# SECONDS however many targets there are.
#   tests/fuzz/run.sh BUILD_DIR SECONDS TARGET...
# The working corpus and any crash, leak or timeout input go to BUILD_DIR/fuzz-work/<target>/;
# the committed corpus is only read. Exit status: nonzero when any target found something.
set -uo pipefail
build_dir=$1
seconds=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
declare -A pids
for target in "$@"; do
  work="$build_dir/fuzz-work/$target"
  mkdir -p "$work/corpus" "$work/artifacts"
  echo "== fuzz $target for ${seconds} s"
  "$build_dir/tests/fuzz/$target" -max_total_time="$seconds" -timeout=30 \
    -rss_limit_mb=2560 -print_final_stats=1 -artifact_prefix="$work/artifacts/" \
    "$work/corpus" "$here/corpus/$target" >"$work/log" 2>&1 &
  pids[$target]=$!
done
status=0
for target in "$@"; do
  work="$build_dir/fuzz-work/$target"
  if ! wait "${pids[$target]}"; then
    echo "fuzz $target FAILED; the input is in $work/artifacts/, the log in $work/log:" >&2
    grep -v '^#\|^INFO\|NEW_FUNC' "$work/log" | tail -40 >&2
    status=1
  else
    echo "-- $target: $(grep -E '^stat::number_of_executed_units' "$work/log" || echo 'no stats')"
  fi
done
exit $status
