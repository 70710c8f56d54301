#!/usr/bin/env bash
# Puts Taskflow's headers, at the one pinned commit, into .deps/taskflow, where the bench build
# finds them (bench/CMakeLists.txt, REPLAYRT_TASKFLOW_DIR) and contention_bench compares the
# simulator with Taskflow beside oneTBB. Without them that bench compares with oneTBB only and
# says so. Needs git and either the network or a local clone:
#   scripts/fetch-taskflow.sh [REPOSITORY]   (default: Taskflow's GitHub repository)
# The pinned commit (Taskflow v4.1.0) is in scripts/taskflow.pin, which the bench build also
# reads to check the copy it finds.
set -euo pipefail
readonly repository=${1:-https://github.com/taskflow/taskflow.git}
root=$(cd "$(dirname "$0")/.." && pwd)
pinned=$(tr -d '[:space:]' <"$root/scripts/taskflow.pin")
readonly pinned
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
