#!/usr/bin/env python3
"""PyTorch paths of the GPU benchmark: the same chains as gpu_replay_bench (N in {1, 16, 256}
in-place adds of one over 1 Ki and 16 Mi floats), as torch eager `x.add_(1)` and as
torch.cuda.CUDAGraph.replay() of a capture of them. Same metrics (host time per call, call
plus synchronize, device time from events; medians of 5) and the same result check.

Writes {"skipped": reason} when torch or a CUDA device is unavailable, and exits 0 then.
Usage: torch_graph_bench.py [--json FILE]
"""
import argparse
import json
import statistics
import sys
import time


def measure(call, calls, torch):
    host, sync, device = [], [], []
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    for _ in range(5):
        begin = time.perf_counter()
        for _ in range(calls):
            call()
        host.append((time.perf_counter() - begin) * 1e6 / calls)
        torch.cuda.synchronize()
        begin = time.perf_counter()
        for _ in range(calls):
            call()
            torch.cuda.synchronize()
        sync.append((time.perf_counter() - begin) * 1e6 / calls)
        start.record()
        for _ in range(calls):
            call()
        stop.record()
        stop.synchronize()
        device.append(start.elapsed_time(stop) * 1000.0 / calls)
    return statistics.median(host), statistics.median(sync), statistics.median(device)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--json")
    options = parser.parse_args()

    def write(payload):
        text = json.dumps(payload, indent=2)
        if options.json:
            with open(options.json, "w") as out:
                out.write(text + "\n")
        else:
            print(text)

    try:
        import torch
    except ImportError as error:
        write({"skipped": f"torch is not importable: {error}"})
        return 0
    if not torch.cuda.is_available():
        write({"skipped": "torch sees no CUDA device"})
        return 0

    results = []
    for floats in (1 << 10, 16 << 20):
        calls = 4 if floats > (1 << 20) else 200
        for tasks in (1, 16, 256):
            per_path = 3 * 5 * calls * tasks
            stream = torch.cuda.Stream()
            with torch.cuda.stream(stream):
                x = torch.zeros(floats, device="cuda", dtype=torch.float32)

                def eager():
                    for _ in range(tasks):
                        x.add_(1)

                host, sync, device = measure(eager, calls, torch)
                torch.cuda.synchronize()
                if not bool(torch.all(x == per_path)):
                    print(f"torch_eager {floats} {tasks}: wrong result", file=sys.stderr)
                    return 1
                results.append(dict(path="torch_eager", floats=floats, tasks=tasks,
                                    host_us=host, sync_us=sync, device_us=device))

                graph = torch.cuda.CUDAGraph()
                eager()  # warm up outside the capture
                torch.cuda.synchronize()
                with torch.cuda.graph(graph):
                    eager()
                x.zero_()
                torch.cuda.synchronize()
                host, sync, device = measure(graph.replay, calls, torch)
                torch.cuda.synchronize()
                if not bool(torch.all(x == per_path)):
                    print(f"torch_graph {floats} {tasks}: wrong result", file=sys.stderr)
                    return 1
                results.append(dict(path="torch_graph", floats=floats, tasks=tasks,
                                    host_us=host, sync_us=sync, device_us=device))
    write({"torch": torch.__version__, "cuda": torch.version.cuda,
           "gpu": torch.cuda.get_device_name(0), "results": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
