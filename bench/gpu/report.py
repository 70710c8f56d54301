#!/usr/bin/env python3
"""Markdown report of the GPU benchmark: one table per size, one row per (tasks, path), with
rrt_graph_replay's ratio to raw cudaGraphLaunch (the goal: <= 1.02x host and device time)
and to torch.cuda.CUDAGraph.replay() when the torch results exist.

Usage: report.py replayrt.json [torch.json]
"""
import json
import sys


def load(path):
    try:
        with open(path) as source:
            return json.load(source)
    except (OSError, ValueError) as error:
        return {"skipped": f"{path}: {error}"}


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    ours = load(argv[1])
    theirs = load(argv[2]) if len(argv) > 2 else {"skipped": "no torch results given"}
    if "results" not in ours:
        print(f"replayrt benchmark results missing: {ours.get('skipped', 'unknown')}")
        return 1
    print("# GPU benchmark\n")
    print(f"GPU {ours['gpu']}, driver {ours['driver']}, CUDA runtime {ours['runtime']}", end="")
    if "results" in theirs:
        print(f"; torch {theirs['torch']} (CUDA {theirs['cuda']})")
    else:
        print(f"; torch paths skipped: {theirs.get('skipped')}")
    print("\nTimes in microseconds per call, medians of 5.\n")
    rows = ours["results"] + theirs.get("results", [])
    index = {(r["floats"], r["tasks"], r["path"]): r for r in rows}
    for floats in sorted({r["floats"] for r in rows}):
        print(f"## {floats} floats ({floats * 4 / 2**20:g} MiB)\n")
        print("| tasks | path | host | call+sync | device |")
        print("|---:|---|---:|---:|---:|")
        for tasks in sorted({r["tasks"] for r in rows}):
            for path in ("eager", "raw_graph", "rrt_launch", "rrt_replay", "torch_eager",
                         "torch_graph"):
                r = index.get((floats, tasks, path))
                if r:
                    print(f"| {tasks} | {path} | {r['host_us']:.2f} | {r['sync_us']:.2f} | "
                          f"{r['device_us']:.2f} |")
        print()
        print("| tasks | replay/raw host | replay/raw device | replay/torch graph host |")
        print("|---:|---:|---:|---:|")
        for tasks in sorted({r["tasks"] for r in rows}):
            replay = index.get((floats, tasks, "rrt_replay"))
            raw = index.get((floats, tasks, "raw_graph"))
            torch_graph = index.get((floats, tasks, "torch_graph"))
            if not replay or not raw:
                continue
            torch_ratio = (f"{replay['host_us'] / torch_graph['host_us']:.3f}"
                           if torch_graph else "n/a")
            print(f"| {tasks} | {replay['host_us'] / raw['host_us']:.3f} | "
                  f"{replay['device_us'] / raw['device_us']:.3f} | {torch_ratio} |")
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
