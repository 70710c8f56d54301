#!/usr/bin/env python3
"""Markdown report of a GPU check (scripts/gpu-check.sh) from whatever of its files exist:
the check's summary (GPU test cases, steps), the replayrt benchmark (gpu_replay_bench), its
PyTorch half (torch_graph_bench.py) and the llama decoder's tokens/s on the GPU and on the
simulator. Per size and chain length it prints each path's times and the ratios
rrt_graph_replay / raw cudaGraphLaunch (host, call+sync, device; the goal is at most 1.02),
rrt_kernel_launch / eager launches and rrt_graph_replay / torch.cuda.CUDAGraph.replay(), and
the attention built-in's device time against torch's scaled_dot_product_attention on the same
shapes (the goal is at most 2).
Partial files (a run cut short) are reported as far as they go; a missing or unreadable
file is named as missing. Exit status 0 unless the arguments are wrong.

Usage: report.py [--summary summary.json] [--replayrt replayrt.json] [--torch torch.json]
                 [--llama llama.json]
"""
import argparse
import json
import os
import sys

PATHS = ("eager", "raw_graph", "rrt_launch", "rrt_replay", "rrt_replay_owned", "torch_eager",
         "torch_graph")
METRICS = (("host_us", "host"), ("sync_us", "call+sync"), ("device_us", "device"))
RATIOS = (("rrt_replay", "raw_graph"), ("rrt_replay_owned", "raw_graph"), ("rrt_launch", "eager"),
          ("rrt_replay", "torch_graph"), ("torch_graph", "raw_graph"))


def load(path, what, missing):
    """The parsed file, or None with the reason appended to `missing`."""
    if not path:
        missing.append(f"{what}: no file given")
        return None
    try:
        with open(path) as source:
            return json.load(source)
    except OSError as error:
        missing.append(f"{what}: {os.path.basename(path)} is missing ({error.strerror})")
    except ValueError as error:
        missing.append(f"{what}: {os.path.basename(path)} is not valid JSON ({error})")
    return None


def version(number):
    """CUDA's 1000 * major + 10 * minor as "major.minor"."""
    if not isinstance(number, int) or number <= 0:
        return "unknown"
    return f"{number // 1000}.{number % 1000 // 10}"


def blank(value):
    return "" if value is None else value


def number(value, digits=2):
    return f"{value:.{digits}f}" if isinstance(value, (int, float)) else "n/a"


def ratio(numerator, denominator, key):
    if not numerator or not denominator:
        return "n/a"
    top, bottom = numerator.get(key), denominator.get(key)
    if not isinstance(top, (int, float)) or not isinstance(bottom, (int, float)) or bottom <= 0:
        return "n/a"
    return f"{top / bottom:.3f}"


def report_summary(summary, out):
    out.append("## GPU check\n")
    status = summary.get("status", "unknown")
    out.append(f"Result: **{status}** (exit {summary.get('exit_code', '?')}), binaries from "
               f"{summary.get('build_mode', 'unknown')}"
               f"{'' if summary.get('finished') else ', the check did not finish'}.\n")
    for note in summary.get("notes", []):
        out.append(f"- {note}")
    if summary.get("notes"):
        out.append("")
    steps = summary.get("steps", {})
    if steps:
        out.append("| step | status | exit | seconds | note |")
        out.append("|---|---|---:|---:|---|")
        for name, step in steps.items():
            out.append(f"| {name} | {step.get('status')} | {blank(step.get('exit'))} | "
                       f"{blank(step.get('seconds'))} | {blank(step.get('note'))} |")
        out.append("")
    cases = summary.get("cases", [])
    counts = {}
    for case in cases:
        counts[case.get("status")] = counts.get(case.get("status"), 0) + 1
    out.append("GPU test cases: " + (", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
                                     if cases else "none ran") + "\n")
    bad = [case for case in cases if case.get("status") != "pass"]
    if bad:
        out.append("| binary | case | status | exit | seconds |")
        out.append("|---|---|---|---:|---:|")
        for case in bad:
            out.append(f"| {case.get('binary')} | {case.get('name')} | {case.get('status')} | "
                       f"{case.get('exit')} | {case.get('seconds')} |")
        out.append("")


def report_environment(ours, theirs, out):
    if ours and "gpu" in ours:
        out.append(f"replayrt benchmark: GPU {ours['gpu']} (compute capability "
                   f"{ours.get('compute_capability', '?')}, {ours.get('sms', '?')} SMs), CUDA "
                   f"driver {version(ours.get('driver'))}, runtime {version(ours.get('runtime'))}"
                   f", {ours.get('repetitions', '?')} repetitions"
                   f"{'' if ours.get('finished') else ' (did not finish)'}.")
    if theirs and "torch" in theirs:
        out.append(f"torch benchmark: torch {theirs['torch']} (CUDA {theirs.get('cuda')}) on "
                   f"{theirs.get('gpu')}{'' if theirs.get('finished') else ' (did not finish)'}.")
    if (ours and "gpu" in ours) or (theirs and "torch" in theirs):
        out.append("")


def report_benchmark(ours, theirs, out):
    rows = list((ours or {}).get("results", [])) + list((theirs or {}).get("results", []))
    if not rows:
        out.append("No benchmark results.\n")
        return
    index = {(r["floats"], r["tasks"], r["path"]): r for r in rows}
    out.append("Times in microseconds per call, medians over the repetitions (round-robin over "
               "the paths).\n")
    for floats in sorted({r["floats"] for r in rows}):
        tasks_list = sorted({r["tasks"] for r in rows if r["floats"] == floats})
        size = (f"{floats * 4 / 2**20:g} MiB" if floats * 4 >= 2**20 else
                f"{floats * 4 / 2**10:g} KiB")
        out.append(f"### {floats} floats ({size})\n")
        out.append("| tasks | path | host | call+sync | device |")
        out.append("|---:|---|---:|---:|---:|")
        for tasks in tasks_list:
            for path in PATHS:
                r = index.get((floats, tasks, path))
                if r:
                    out.append(f"| {tasks} | {path} | {number(r.get('host_us'))} | "
                               f"{number(r.get('sync_us'))} | {number(r.get('device_us'))} |")
        out.append("")
        out.append("| tasks | ratio | host | call+sync | device |")
        out.append("|---:|---|---:|---:|---:|")
        for tasks in tasks_list:
            for top, bottom in RATIOS:
                numerator = index.get((floats, tasks, top))
                denominator = index.get((floats, tasks, bottom))
                if numerator and denominator:
                    out.append(f"| {tasks} | {top} / {bottom} | " +
                               " | ".join(ratio(numerator, denominator, key)
                                          for key, _ in METRICS) + " |")
        out.append("")


def report_errors(ours, theirs, out):
    errors = list((ours or {}).get("errors", [])) + list((theirs or {}).get("errors", []))
    if errors or any(d and ("error" in d or "skipped" in d) for d in (ours, theirs)):
        out.append("Benchmark errors and skips:\n")
    for name, data in (("replayrt", ours), ("torch", theirs)):
        if data and "error" in data:
            out.append(f"- {name} benchmark did not start: {data['error']}")
        if data and "skipped" in data:
            out.append(f"- {name} benchmark skipped: {data['skipped']}")
    for e in errors:
        out.append(f"- {e.get('path')} ({e.get('floats')} floats, {e.get('tasks')} tasks): "
                   f"{e.get('error')}")
    if errors or any(d and ("error" in d or "skipped" in d) for d in (ours, theirs)):
        out.append("")


def device_cell(row):
    """An attention row's device time, or "failed"."""
    return "failed" if row.get("error") else number(row.get("device_us"))


def report_attention(ours, theirs, out):
    rows = {}
    for name, data in (("replayrt", ours), ("torch", theirs)):
        for row in (data or {}).get("attention", []):
            rows.setdefault(row.get("shape"), {})[name] = row
    if not rows:
        return
    out.append("### attention (32 heads, head dim 128, 4096 positions, float32)\n")
    out.append("| shape | queries | replayrt device | torch sdpa device | replayrt / torch |")
    out.append("|---|---:|---:|---:|---:|")
    for shape in ("decode", "prefill"):
        pair = rows.get(shape)
        if not pair:
            continue
        mine, torch_row = pair.get("replayrt") or {}, pair.get("torch") or {}
        queries = mine.get("queries", torch_row.get("queries", "?"))
        out.append(f"| {shape} | {queries} | {device_cell(mine)} | {device_cell(torch_row)} | "
                   f"{ratio(mine, torch_row, 'device_us')} |")
    out.append("")
    for name, data in (("replayrt", ours), ("torch", theirs)):
        for row in (data or {}).get("attention", []):
            if row.get("error"):
                out.append(f"- {name} attention {row.get('shape')}: {row['error']}")
    out.append("")


def report_llama(llama, out):
    out.append("## llama decoder\n")
    out.append("| platform | exit | program mode tokens/s | kernel mode tokens/s |")
    out.append("|---|---:|---:|---:|")
    for platform in ("cuda", "sim"):
        run = llama.get(platform) or {}
        out.append(f"| {platform} | {run.get('exit', 'n/a')} | "
                   f"{number(run.get('program_tokens_per_s'), 1)} | "
                   f"{number(run.get('kernel_tokens_per_s'), 1)} |")
    cuda, sim = llama.get("cuda") or {}, llama.get("sim") or {}
    speedups = []
    for mode in ("program", "kernel"):
        g, s = cuda.get(f"{mode}_tokens_per_s"), sim.get(f"{mode}_tokens_per_s")
        if isinstance(g, (int, float)) and isinstance(s, (int, float)) and s > 0:
            speedups.append(f"{mode} mode GPU / simulator {g / s:.2f}x")
    out.append("")
    same = llama.get("same_tokens")
    out.append(f"Tokens identical on both platforms: "
               f"{'yes' if same is True else 'NO' if same is False else 'unknown'}"
               f"{'; ' + ', '.join(speedups) if speedups else ''}.\n")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--summary")
    parser.add_argument("--replayrt")
    parser.add_argument("--torch")
    parser.add_argument("--llama")
    options = parser.parse_args(argv[1:])
    missing = []
    summary = load(options.summary, "check summary", missing)
    ours = load(options.replayrt, "replayrt benchmark", missing)
    theirs = load(options.torch, "torch benchmark", missing)
    llama = load(options.llama, "llama decoder", missing)

    out = ["# GPU check report\n"]
    if summary:
        report_summary(summary, out)
    out.append("## Benchmark\n")
    report_environment(ours, theirs, out)
    report_benchmark(ours, theirs, out)
    report_attention(ours, theirs, out)
    report_errors(ours, theirs, out)
    if llama:
        report_llama(llama, out)
    if missing:
        out.append("## Missing\n")
        out.extend(f"- {m}" for m in missing)
        out.append("")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
