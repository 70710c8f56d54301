#!/usr/bin/env bash
# Puts Taskflow's headers, at the one pinned commit, into .deps/taskflow, where the bench build
# finds them (bench/CMakeLists.txt, REPLAYRT_TASKFLOW_DIR) and contention_bench compares the
# simulator with Taskflow beside oneTBB. Without them that bench compares with oneTBB only and
# says so. Needs git and either the network or a local clone:
#   scripts/fetch-taskflow.sh [REPOSITORY]   (default: Taskflow's GitHub repository)
# The pinned commit is Taskflow v4.1.0.
set -euo pipefail
readonly pinned=45366fe5bc4f2f8ec9aa590b40c504e296886865
readonly repository=${1:-https://github.com/taskflow/taskflow.git}
root=$(cd "$(dirname "$0")/.." && pwd)
readonly target="$root/.deps/taskflow"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

git clone --quiet --no-checkout "$repository" "$scratch/taskflow"
git -C "$scratch/taskflow" -c advice.detachedHead=false checkout --quiet "$pinned" -- taskflow LICENSE
rm -rf "$target"
mkdir -p "$target"
cp -R "$scratch/taskflow/taskflow" "$scratch/taskflow/LICENSE" "$target/"
echo "$pinned" >"$target/COMMIT"
echo "Taskflow $pinned is in .deps/taskflow; reconfigure (cmake --preset default) to build it in"
