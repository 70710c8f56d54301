#!/usr/bin/env python3
"""Draws the results.json that bench/run_all.py writes as one PNG per comparison:

    /usr/bin/python3 bench/plot_results.py build/bench/results.json --out-dir build/bench

  replay_per_task.png     graph replay vs eager kernel-mode launch vs direct calls (the limit):
                          time per task and ratio to the limit over the task count, for each
                          kernel, shape and device-worker count
  launch_vs_enqueue.png   kernel-mode launch vs the raw enqueue of the same invocation
  staging_vs_memcpy.png   staging of a HOST tensor vs memcpy of the same bytes
  llama_tokens_per_s.png  the llama example's tokens/s, program mode vs kernel mode

Every number drawn is a median from that results.json; each figure's caption gives the run's
date, source tree, machine and load as the JSON records them. A figure whose numbers the JSON
lacks (a run with --filter, a build without the examples) is skipped with a note.
Needs matplotlib (Debian: python3-matplotlib, for /usr/bin/python3).
"""

import argparse
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend is chosen first)

from run_all import (LAUNCH_GOAL, LLAMA_MODES, LLAMA_WORKERS, REPLAY_KERNELS,  # noqa: E402
                     REPLAY_SHAPES, REPLAY_TASKS, REPLAY_WORKERS, fmt_bytes, ratio)

DPI = 100
LIMIT_STYLE = {"color": "black", "marker": "s", "linestyle": ":"}
REPLAY_COLOR = "tab:blue"
EAGER_COLOR = "tab:orange"
WORKER_LINESTYLES = {1: "-", 2: "--"}


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", help="results.json written by bench/run_all.py")
    parser.add_argument("--out-dir", help="where the PNGs go (default: the JSON's directory)")
    return parser.parse_args()


class Results:
    """The medians of one results.json, looked up by benchmark name and field."""

    def __init__(self, data):
        self.data = data
        self.medians = data["medians"]

    def get(self, name, field="real_ns"):
        entry = self.medians.get(name)
        return None if entry is None else entry.get(field)

    def has(self, prefix):
        return any(name.startswith(prefix) for name in self.medians)


def caption(results):
    """The run's identity and conditions, from the JSON, as the lines under every figure."""
    data = results.data
    load_before, load_after = data["load_average"]
    lines = [f"Numbers: medians from results.json of the run started {data.get('date') or 'n/a'}, "
             f"source tree {data.get('commit') or 'n/a'}; {data['repetitions']} repetitions "
             f"of {data['min_time_s']} s (bench/run_all.py)."]
    lines.append("; ".join(data["machine"][:2]) + ".")
    lines.append(f"Load average (1 min) {load_before[0]:.2f} before the run, "
                 f"{load_after[0]:.2f} after it.")
    return "\n".join(lines)


def save(fig, results, title, path):
    """Adds the title and the caption, writes the PNG and closes the figure."""
    fig.suptitle(title, fontsize=13)
    fig.tight_layout()
    fig.text(0.01, 0.0, caption(results), fontsize=8, ha="left", va="top", color="dimgray")
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    plt.close(fig)


def points(xs, values):
    """The x values and values of the points whose value was measured."""
    pairs = [(x, v) for x, v in zip(xs, values) if v is not None]
    return [x for x, _ in pairs], [v for _, v in pairs]


def per_task(results, name, tasks):
    """Microseconds per task of a benchmark that runs `tasks` tasks per iteration."""
    value = results.get(name)
    return None if value is None else value / tasks / 1e3


def set_task_axis(axis):
    axis.set_xscale("log", base=2)
    axis.set_xticks(REPLAY_TASKS, [str(t) for t in REPLAY_TASKS])
    axis.grid(True, which="both", alpha=0.3)


def worker_text(workers):
    return f"{workers} device worker{'s' if workers > 1 else ''}"


def plot_replay(results, path):
    """Per-task time (top row) and ratio to direct calls (bottom row) of replay and eager
    launch, one column per kernel and shape, solid for 1 device worker, dashed for 2. The
    launch-bound kernel spans decades and gets log axes; the ~10 µs kernel gets linear ones."""
    if not results.has("replay/"):
        return False
    columns = [(kernel, text, shape) for kernel, text in REPLAY_KERNELS for shape in REPLAY_SHAPES]
    fig, axes = plt.subplots(2, len(columns), figsize=(4.2 * len(columns), 8.5), sharex=True)
    for column, (kernel, kernel_text, shape) in enumerate(columns):
        times, ratios = axes[0][column], axes[1][column]
        scale = "log" if kernel == "tiny" else "linear"
        scale_text = ", log scale" if scale == "log" else ""
        direct = [per_task(results, f"direct/{kernel}/n{t}", t) for t in REPLAY_TASKS]
        times.plot(*points(REPLAY_TASKS, direct), label="direct calls (limit)", **LIMIT_STYLE)
        for workers in REPLAY_WORKERS:
            for kind, color, text in (("replay", REPLAY_COLOR, "graph replay"),
                                      ("eager", EAGER_COLOR, "eager launch")):
                style = {"color": color, "marker": "o", "linestyle": WORKER_LINESTYLES[workers],
                         "label": f"{text}, {worker_text(workers)}"}
                values = [per_task(results, f"{kind}/{kernel}/{shape}/w{workers}/n{t}", t)
                          for t in REPLAY_TASKS]
                times.plot(*points(REPLAY_TASKS, values), **style)
                ratios.plot(*points(REPLAY_TASKS, [ratio(v, d) for v, d in zip(values, direct)]),
                            **style)
        times.set_title(f"{kernel_text}, {shape}")
        times.set_yscale(scale)
        times.set_ylabel(f"wall-clock time per task (µs{scale_text})")
        ratios.set_yscale(scale)
        references = [ratios.axhline(1.0, color=LIMIT_STYLE["color"],
                                     linestyle=LIMIT_STYLE["linestyle"],
                                     label="direct calls = 1×")]
        if kernel == "compute10us":
            references.append(ratios.axhline(1.10, color="tab:red", linestyle="-.", linewidth=1,
                                             label="goal from 16 tasks: ≤ 1.10×"))
        ratios.legend(handles=references, fontsize=7, loc="upper right")
        ratios.set_ylabel(f"time per task / direct calls' (×{scale_text})")
        ratios.set_xlabel("tasks per replay (log scale)")
        for axis in (times, ratios):
            set_task_axis(axis)
    axes[0][0].legend(fontsize=7, loc="upper right", handlelength=3.5)
    save(fig, results, "Replay of a captured N-task graph vs eager kernel-mode launch vs the "
         "N kernel calls made directly (replay or launch + synchronize, median per call / N)",
         path)
    return True


def label_bars(axis, bars, texts):
    for bar, text in zip(bars, texts):
        axis.annotate(text, (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                      xytext=(0, 3), textcoords="offset points", ha="center", va="bottom",
                      fontsize=8)


def plot_launch(results, path):
    """Median wall-clock time per call of the kernel-mode launch and of the raw enqueue of its
    invocation, per bind strategy, with the launch's ratio to the enqueue and the goal
    (LAUNCH_GOAL times the enqueue)."""
    binds = [bind for bind in ("device_build", "host_build")
             if results.get(f"launch/kernel_mode/{bind}") is not None
             and results.get(f"launch/raw_enqueue/{bind}") is not None]
    if not binds:
        return False
    fig, axis = plt.subplots(figsize=(7.5, 5))
    width = 0.36
    for index, bind in enumerate(binds):
        raw = results.get(f"launch/raw_enqueue/{bind}")
        launch = results.get(f"launch/kernel_mode/{bind}")
        raw_label = "raw enqueue of the same invocation (limit)" if index == 0 else None
        raw_bar = axis.bar(index - width / 2, raw, width, color="dimgray", label=raw_label)
        launch_bar = axis.bar(index + width / 2, launch, width, color=REPLAY_COLOR,
                              label="rrt_kernel_launch, host side" if index == 0 else None)
        label_bars(axis, raw_bar, [f"{raw:.0f} ns"])
        label_bars(axis, launch_bar, [f"{launch:.0f} ns = {launch / raw:.2f}× the limit"])
        axis.hlines(LAUNCH_GOAL * raw, index - width, index + width, color="tab:red",
                    linestyle="-.", linewidth=1,
                    label=f"goal: ≤ {LAUNCH_GOAL:g}× the limit" if index == 0 else None)
    axis.set_xticks(range(len(binds)), [f"{bind} bind" for bind in binds])
    axis.set_ylabel("median wall-clock time per call (ns)")
    axis.set_ylim(0, axis.get_ylim()[1] * 1.3)
    axis.legend(fontsize=8, loc="upper center", ncol=2)
    axis.grid(True, axis="y", alpha=0.3)
    save(fig, results, "Kernel-mode launch vs raw enqueue\n(y = 2x + x over 256 floats, "
         "DEVICE tensors, busy device)", path)
    return True


def plot_staging(results, path):
    """Bandwidth of a staged launch and of memcpy over the byte count (left) and the staged
    launch's share of memcpy's bandwidth with the 90% goal from 1 MiB (right)."""
    sizes = sorted(int(name.rsplit("/", 1)[1]) for name in results.medians
                   if name.startswith("staging/memcpy/"))
    if not sizes:
        return False
    staged = [results.get(f"staging/replayrt/{size}") for size in sizes]
    memcpy = [results.get(f"staging/memcpy/{size}") for size in sizes]
    fig, (bandwidth, share) = plt.subplots(1, 2, figsize=(12, 5), sharex=True)
    bandwidth.plot(*points(sizes, [ratio(s, t) for s, t in zip(sizes, staged)]), marker="o",
                   color=REPLAY_COLOR, label="rrt_kernel_launch staging the HOST tensor + "
                   "synchronize")
    bandwidth.plot(*points(sizes, [ratio(s, t) for s, t in zip(sizes, memcpy)]),
                   label="memcpy of the same bytes into device memory (limit)", **LIMIT_STYLE)
    bandwidth.set_yscale("log")
    bandwidth.set_ylabel("bandwidth (GB/s = 10⁹ bytes/s, log scale)")
    bandwidth.set_title("Bandwidth")
    bandwidth.legend(fontsize=8, loc="best")
    share.plot(*points(sizes, [None if s is None or m is None else 100 * m / s
                               for s, m in zip(staged, memcpy)]),
               marker="o", color=REPLAY_COLOR, label="staging's share of memcpy's bandwidth")
    share.axhline(100, **{key: LIMIT_STYLE[key] for key in ("color", "linestyle")},
                  label="memcpy = 100%")
    goal_sizes = [size for size in sizes if size >= (1 << 20)]
    share.hlines(90, goal_sizes[0], goal_sizes[-1], color="tab:red", linestyle="-.",
                 linewidth=1, label="goal from 1 MiB: ≥ 90%")
    share.set_ylabel("memcpy time / staged launch time (%)")
    share.set_title("Share of memcpy's bandwidth")
    share.set_ylim(0, max(110, share.get_ylim()[1]))
    share.legend(fontsize=8, loc="best")
    for axis in (bandwidth, share):
        axis.set_xscale("log", base=2)
        axis.set_xticks(sizes, [fmt_bytes(size) for size in sizes], rotation=45)
        axis.set_xlabel("bytes staged per launch (log scale)")
        axis.grid(True, which="both", alpha=0.3)
    save(fig, results, "Staging of a HOST tensor in a kernel-mode launch vs memcpy of the same "
         "bytes (median per launch + synchronize)", path)
    return True


def plot_llama(results, path):
    """Median tokens/s of the llama example per device-worker count, program vs kernel mode."""
    workers = [w for w in LLAMA_WORKERS
               if all(results.get(f"llama/{mode}/w{w}", "tokens_per_s") is not None
                      for mode, _ in LLAMA_MODES)]
    if not workers:
        return False
    runs = results.get(f"llama/kernel_mode/w{workers[0]}", "runs")
    tokens = results.get(f"llama/kernel_mode/w{workers[0]}", "tokens")
    fig, axis = plt.subplots(figsize=(7.5, 5))
    width = 0.36
    descriptions = {"program_mode": "one rrt_run per token",
                    "kernel_mode": "one graph replay per token"}
    for offset, (mode, text), color in zip((-width / 2, width / 2), LLAMA_MODES,
                                           ("dimgray", REPLAY_COLOR)):
        rates = [results.get(f"llama/{mode}/w{w}", "tokens_per_s") for w in workers]
        bars = axis.bar([i + offset for i in range(len(workers))], rates, width, color=color,
                        label=f"{text} ({descriptions[mode]})")
        label_bars(axis, bars, [f"{rate:,.0f}" for rate in rates])
    speedups = [ratio(results.get(f"llama/kernel_mode/w{w}", "tokens_per_s"),
                     results.get(f"llama/program_mode/w{w}", "tokens_per_s")) for w in workers]
    axis.set_xticks(range(len(workers)),
                    [f"{worker_text(w)}\nkernel / program mode: {speedup:.2f}×"
                     for w, speedup in zip(workers, speedups)])
    axis.set_ylabel("decoded tokens per second (median)")
    axis.set_ylim(0, axis.get_ylim()[1] * 1.15)
    axis.legend(fontsize=8, loc="upper left")
    axis.grid(True, axis="y", alpha=0.3)
    save(fig, results, f"llama-decoder (examples/llama, default random model): tokens/s\n"
         f"median of {runs} runs of {tokens} tokens per bar, simulator", path)
    return True


PLOTS = (
    ("replay_per_task.png", plot_replay),
    ("launch_vs_enqueue.png", plot_launch),
    ("staging_vs_memcpy.png", plot_staging),
    ("llama_tokens_per_s.png", plot_llama),
)


def main():
    args = parse_args()
    with open(args.results, encoding="utf-8") as handle:
        results = Results(json.load(handle))
    out_dir = args.out_dir or os.path.dirname(os.path.abspath(args.results))
    os.makedirs(out_dir, exist_ok=True)
    for file_name, plot in PLOTS:
        path = os.path.join(out_dir, file_name)
        if plot(results, path):
            print(f"written: {path}", file=sys.stderr)
        else:
            print(f"skipped: {file_name} ({args.results} has none of its numbers)",
                  file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
