#!/usr/bin/env python3
"""PyTorch paths of the GPU benchmark: the same chains as gpu_replay_bench (N in {1, 16, 256}
in-place adds of one over 1 Ki and 16 Mi floats), as torch eager `x.add_(1)` (torch_eager)
and as torch.cuda.CUDAGraph.replay() of a capture of them (torch_graph). Same metrics (host
time per call, call plus synchronize, device time from events), the same calls per metric,
the same round-robin over the paths per repetition and medians over the repetitions, and the
same result check (every element equals N times the calls made; NaN or another value fails
that path).

Then torch.nn.functional.scaled_dot_product_attention (float32) on gpu_replay_bench's attention
shapes: 32 heads of dim 128 over 4096 positions, "decode" (one query attending to every
position) and "prefill" (4096 queries, causal); device time per call from events around
back-to-back calls, median over the repetitions; the first call's output is checked against a
float64 reference for the first and last query of two heads (relative error above 1e-3 fails
the shape).

The JSON file is rewritten after every configuration: {"torch", "cuda", "gpu", "repetitions",
"finished", "results": [...], "errors": [{"path", "floats", "tasks", "error"}], "attention":
[{"shape", "queries", "positions", "heads", "head_dim", "calls", "device_us", "samples"} or,
for a shape that failed, {..., "error"}]}; a failed path is recorded there and the others still
run. Writes {"skipped": reason} and exits 0 when torch
or a CUDA device is unavailable. Exit status 0 when every path passed, 1 otherwise.
Usage: torch_graph_bench.py [--json FILE] [--repetitions R]   (R in [5, 25], default 7)
"""
import argparse
import json
import os
import statistics
import sys
import time
import traceback


def calls_for(floats, tasks):
    """Calls per metric and repetition, as gpu_replay_bench chooses them."""
    if floats > (1 << 20):
        return 4
    return 50 if tasks >= 256 else 200


class Path:
    def __init__(self, name, call, buffer):
        self.name = name
        self.call = call
        self.buffer = buffer
        self.calls_made = 0
        self.host, self.sync, self.device = [], [], []
        self.error = None


def measure_once(path, calls, torch):
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    begin = time.perf_counter()
    for _ in range(calls):
        path.call()
    path.host.append((time.perf_counter() - begin) * 1e6 / calls)
    path.calls_made += calls
    torch.cuda.synchronize()
    begin = time.perf_counter()
    for _ in range(calls):
        path.call()
        torch.cuda.synchronize()
    path.sync.append((time.perf_counter() - begin) * 1e6 / calls)
    path.calls_made += calls
    start.record()
    for _ in range(calls):
        path.call()
    stop.record()
    stop.synchronize()
    path.calls_made += calls
    path.device.append(start.elapsed_time(stop) * 1000.0 / calls)


def describe(error):
    return f"{type(error).__name__}: {error}".strip()


def run_config(torch, floats, tasks, repetitions, results, errors):
    calls = calls_for(floats, tasks)
    stream = torch.cuda.Stream()
    paths = []
    with torch.cuda.stream(stream):
        eager_buffer = torch.zeros(floats, device="cuda", dtype=torch.float32)

        def eager():
            for _ in range(tasks):
                eager_buffer.add_(1)

        paths.append(Path("torch_eager", eager, eager_buffer))

        graph_buffer = torch.zeros(floats, device="cuda", dtype=torch.float32)
        graph = torch.cuda.CUDAGraph()
        try:
            for _ in range(tasks):  # warm-up outside the capture
                graph_buffer.add_(1)
            torch.cuda.synchronize()
            with torch.cuda.graph(graph):
                for _ in range(tasks):
                    graph_buffer.add_(1)
            path = Path("torch_graph", graph.replay, graph_buffer)
        except Exception as error:  # noqa: BLE001 - recorded, the other path still runs
            path = Path("torch_graph", None, graph_buffer)
            path.error = f"capture: {describe(error)}"
        paths.append(path)

        for path in paths:
            if path.error:
                continue
            try:
                path.buffer.zero_()
                torch.cuda.synchronize()
                path.call()
                torch.cuda.synchronize()
                path.calls_made = 1
            except Exception as error:  # noqa: BLE001
                path.error = f"warm-up: {describe(error)}"
        for rep in range(repetitions):
            for k in range(len(paths)):
                path = paths[(k + rep) % len(paths)]
                if path.error:
                    continue
                try:
                    measure_once(path, calls, torch)
                except Exception as error:  # noqa: BLE001
                    path.error = describe(error)
        torch.cuda.synchronize()
    for path in paths:
        if not path.error:
            expected = float(path.calls_made * tasks)
            values = path.buffer.cpu()
            wrong = (values != expected) | torch.isnan(values)
            if bool(wrong.any()):
                index = int(wrong.nonzero()[0])
                path.error = (f"wrong result: element {index} is {float(values[index]):g}, "
                              f"expected {expected:.0f}")
        if path.error:
            print(f"{floats:9d} floats {tasks:3d} tasks {path.name:<16} FAILED: {path.error}")
            errors.append(dict(path=path.name, floats=floats, tasks=tasks, error=path.error))
            continue
        row = dict(path=path.name, floats=floats, tasks=tasks, calls=calls,
                   host_us=statistics.median(path.host), sync_us=statistics.median(path.sync),
                   device_us=statistics.median(path.device),
                   samples=dict(host_us=path.host, sync_us=path.sync, device_us=path.device))
        print(f"{floats:9d} floats {tasks:3d} tasks {path.name:<16} host {row['host_us']:9.2f} us"
              f"  call+sync {row['sync_us']:9.2f} us  device {row['device_us']:.2f} us")
        results.append(row)
    sys.stdout.flush()


ATTENTION_POSITIONS = 4096
ATTENTION_HEADS = 32
ATTENTION_HEAD_DIM = 128


def check_attention(torch, q, k, v, out, first_position):
    """Raises when the first or last query of head 0 or the last head differs from a float64
    evaluation by more than 1e-3 relative error."""
    queries = q.shape[2]
    for t in (0, queries - 1):
        for h in (0, ATTENTION_HEADS - 1):
            p = first_position + t
            scores = (k[0, h, :p + 1].double() @ q[0, h, t].double()) / ATTENTION_HEAD_DIM ** 0.5
            expected = torch.softmax(scores, dim=0) @ v[0, h, :p + 1].double()
            got = out[0, h, t].double()
            error = ((got - expected).abs() / expected.abs().clamp(min=1.0)).max()
            if not bool(error <= 1e-3):
                raise AssertionError(f"wrong result: query {t} head {h} differs from the "
                                     f"float64 reference by {float(error):.3g} (relative)")


def run_attention(torch, shape, queries, repetitions, device="cuda"):
    """One attention shape as a JSON row (with "error" instead of times when it failed). On
    device "cpu" it only computes and checks (no times)."""
    positions = ATTENTION_POSITIONS
    calls = 50 if queries == 1 else 5
    row = dict(shape=shape, queries=queries, positions=positions, heads=ATTENTION_HEADS,
               head_dim=ATTENTION_HEAD_DIM, calls=calls)
    try:
        sdpa = torch.nn.functional.scaled_dot_product_attention
        generator = torch.Generator(device=device).manual_seed(1)

        def uniform(rows):
            return torch.rand(1, ATTENTION_HEADS, rows, ATTENTION_HEAD_DIM, device=device,
                              generator=generator) * 2 - 1

        q, k, v = uniform(queries), uniform(positions), uniform(positions)
        # The decode query sits at the last position and attends to every row; the prefill's
        # queries are the rows themselves, each attending to those before it.
        causal = queries > 1
        out = sdpa(q, k, v, is_causal=causal)
        check_attention(torch, q.cpu(), k.cpu(), v.cpu(), out.cpu(), positions - queries)
        samples = []
        if device != "cpu":
            for _ in range(repetitions):
                start = torch.cuda.Event(enable_timing=True)
                stop = torch.cuda.Event(enable_timing=True)
                start.record()
                for _ in range(calls):
                    sdpa(q, k, v, is_causal=causal)
                stop.record()
                stop.synchronize()
                samples.append(start.elapsed_time(stop) * 1000.0 / calls)
            row.update(device_us=statistics.median(samples), samples=dict(device_us=samples))
    except Exception as error:  # noqa: BLE001 - recorded, the other shape still runs
        row["error"] = describe(error)
    if "error" in row:
        print(f"attention {shape:<8} FAILED: {row['error']}")
    elif "device_us" in row:
        print(f"attention {shape:<8} {queries:5d} queries x {positions} positions: "
              f"device {row['device_us']:9.2f} us per call")
    sys.stdout.flush()
    return row


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--json")
    parser.add_argument("--repetitions", type=int, default=7)
    options = parser.parse_args()
    if not 5 <= options.repetitions <= 25:
        parser.error("--repetitions must be in [5, 25]")

    def write(payload):
        text = json.dumps(payload, indent=2) + "\n"
        if not options.json:
            return
        temporary = options.json + ".tmp"
        with open(temporary, "w") as out:
            out.write(text)
        os.replace(temporary, options.json)

    try:
        import torch
    except ImportError as error:
        print(f"torch is not importable: {error}")
        write({"skipped": f"torch is not importable: {error}"})
        return 0
    if not torch.cuda.is_available():
        print("torch sees no CUDA device")
        write({"skipped": "torch sees no CUDA device"})
        return 0

    payload = {"torch": torch.__version__, "cuda": torch.version.cuda,
               "gpu": torch.cuda.get_device_name(0), "repetitions": options.repetitions,
               "finished": False, "results": [], "errors": [], "attention": []}
    print(f"torch {payload['torch']} (CUDA {payload['cuda']}) on {payload['gpu']}, "
          f"{options.repetitions} repetitions")
    write(payload)
    for floats in (1 << 10, 16 << 20):
        for tasks in (1, 16, 256):
            try:
                run_config(torch, floats, tasks, options.repetitions, payload["results"],
                           payload["errors"])
            except Exception as error:  # noqa: BLE001 - the next configuration still runs
                traceback.print_exc()
                payload["errors"].append(dict(path="setup", floats=floats, tasks=tasks,
                                              error=describe(error)))
            write(payload)
    for shape, queries in (("decode", 1), ("prefill", ATTENTION_POSITIONS)):
        payload["attention"].append(run_attention(torch, shape, queries, options.repetitions))
        write(payload)
    payload["finished"] = True
    write(payload)
    attention_failed = any("error" in row for row in payload["attention"])
    return 1 if payload["errors"] or attention_failed else 0


if __name__ == "__main__":
    sys.exit(main())
