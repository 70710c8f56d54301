#!/usr/bin/env python3
"""Runs every replayrt benchmark program, then prints one Markdown table of medians and
`replayrt / limit` ratios and writes it, with every median, to <out-dir>/results.{md,json}.

    python3 bench/run_all.py --build-dir build/default --out-dir build/bench

Each program runs with --benchmark_repetitions (the counted allocator program once: its
counts do not vary) and --benchmark_report_aggregates_only; the tables use the medians over
the repetitions. Google Benchmark's own JSON for each program is kept next to the results.
The llama example (examples/llama, when built) runs per model shape and device-worker count
(LLAMA_SHAPES); its tokens/s go to llama_decoder.json and the tables. bench/plot_results.py draws results.json.
Exit status: 0 when every program ran, 1 when one failed (goals that are missed do not fail
the run: they are reported).
"""

import argparse
import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time

# A run of a program under a load: its name (the JSON file's suffix and its results' name
# prefix) and the environment it adds. contention_bench's RRT_BENCH_CPU_HOGS=2 keeps both of
# this machine's cores busy with two spinning processes.
LOADED = ("loaded", {"RRT_BENCH_CPU_HOGS": "2"})

# (program, repetitions or None for the default, min_time or None for the default, load or
# None for none)
PROGRAMS = [
    ("launch_bench", None, None, None),
    ("replay_bench", None, None, None),
    ("staging_bench", None, None, None),
    ("memory_core_bench", None, None, None),
    ("allocator_calls_bench", 1, None, None),
    ("exact_plan_bench", 1, None, None),
    ("wait_bench", None, None, None),
    ("kernel_bench", None, None, None),
    ("cuda_host_bench", None, None, None),
    ("contention_bench", None, None, None),
    ("contention_bench", None, None, LOADED),
]
# Programs a build may lack (cuda_host_bench: built only with the CUDA backend;
# contention_bench: only where oneTBB is installed).
OPTIONAL_PROGRAMS = {"cuda_host_bench", "contention_bench"}

TIME_UNITS_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}

# The llama example: its executable under the build directory, the tokens each run decodes
# (the default model's whole KV cache), the worker counts, and per model shape (--shape) the
# runs per worker count and the prefix of its result names: the default small model (a run
# takes well under a second) and the stories15M shape, whose large tasks divide across the
# device workers (a run takes a few seconds).
LLAMA_PROGRAM = "llama-decoder"
LLAMA_EXECUTABLE = os.path.join("examples", "llama-decoder")
LLAMA_TOKENS = 128
LLAMA_WORKERS = (1, 2)
LLAMA_SHAPES = (("small", 11, "llama"), ("stories15M", 5, "llama_stories15M"))
LLAMA_MODES = (("program_mode", "program mode"), ("kernel_mode", "kernel mode"))
SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default="build/default")
    parser.add_argument("--out-dir", default="build/bench")
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument("--min-time", type=float, default=0.1,
                        help="seconds per repetition (Google Benchmark --benchmark_min_time)")
    parser.add_argument("--filter", default="",
                        help="run only programs whose name contains this text")
    parser.add_argument("--report-only", action="store_true",
                        help="run nothing: rebuild the tables from the JSON a previous run "
                             "left in --out-dir")
    return parser.parse_args()


def run_name(program, load):
    """The name a program's run goes by: its JSON file's stem and its contexts key."""
    return program if load is None else f"{program}_{load[0]}"


def prefixed(medians, load):
    """A loaded run's results, their names prefixed with the load's name."""
    return medians if load is None else {f"{load[0]}/{name}": value
                                         for name, value in medians.items()}


def run_program(build_dir, out_dir, program, repetitions, min_time, load):
    """Runs one program; returns {name: {'real_ns', 'cpu_ns', counters...}} of medians."""
    executable = os.path.join(build_dir, "bench", program)
    if not os.path.exists(executable):
        raise RuntimeError(f"{executable} does not exist; build the project first")
    out_json = os.path.join(out_dir, f"{run_name(program, load)}.json")
    command = [
        executable,
        f"--benchmark_repetitions={repetitions}",
        "--benchmark_report_aggregates_only=true",
        f"--benchmark_min_time={min_time}",
        f"--benchmark_out={out_json}",
        "--benchmark_out_format=json",
        "--benchmark_format=console",
    ]
    load_text = "" if load is None else f", {load[0]}: " + " ".join(
        f"{key}={value}" for key, value in load[1].items())
    print(f"== {program} (repetitions {repetitions}, min time {min_time} s{load_text})",
          file=sys.stderr, flush=True)
    started = time.monotonic()
    env = dict(os.environ, **(load[1] if load is not None else {}))
    completed = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True, check=False, env=env)
    if completed.returncode != 0:
        raise RuntimeError(f"{program} exited with {completed.returncode}:\n{completed.stderr}")
    print(f"   {time.monotonic() - started:.1f} s", file=sys.stderr, flush=True)
    with open(out_json, encoding="utf-8") as handle:
        report = json.load(handle)
    return prefixed(collect_medians(report), load), report.get("context", {})


def load_program(out_dir, program, load):
    """The medians and context of a program's JSON from an earlier run."""
    path = os.path.join(out_dir, f"{run_name(program, load)}.json")
    if not os.path.exists(path):
        raise RuntimeError(f"{path} does not exist; run the benchmarks first")
    with open(path, encoding="utf-8") as handle:
        report = json.load(handle)
    return prefixed(collect_medians(report), load), report.get("context", {})


def run_llama(build_dir, out_dir):
    """Runs the llama decoder per shape and worker count (LLAMA_SHAPES); writes its tokens/s to
    llama_decoder.json and returns their medians and a context like Google Benchmark's."""
    executable = os.path.join(build_dir, LLAMA_EXECUTABLE)
    context = {"date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
               "load_avg": list(os.getloadavg())}
    samples = []
    for shape, runs, _ in LLAMA_SHAPES:
        print(f"== {LLAMA_PROGRAM} --shape {shape} ({runs} runs of {LLAMA_TOKENS} tokens per "
              f"worker count, the counts interleaved)", file=sys.stderr, flush=True)
        for _ in range(runs):
            for workers in LLAMA_WORKERS:
                command = [executable, "--quiet", "--tokens", str(LLAMA_TOKENS), "--workers",
                           str(workers), "--shape", shape]
                completed = subprocess.run(command, capture_output=True, text=True, check=False)
                if completed.returncode != 0:
                    raise RuntimeError(f"{' '.join(command)} exited with "
                                       f"{completed.returncode}:\n"
                                       f"{completed.stdout}{completed.stderr}")
                samples.append({"shape": shape, "workers": workers,
                                **parse_llama_output(completed.stdout)})
    raw = {"context": context, "tokens": LLAMA_TOKENS, "samples": samples}
    with open(os.path.join(out_dir, "llama_decoder.json"), "w", encoding="utf-8") as handle:
        json.dump(raw, handle, indent=2)
    return llama_medians(raw), context


def parse_llama_output(stdout):
    """{'program_mode': tokens/s, 'kernel_mode': tokens/s} from the decoder's summary lines."""
    rates = {}
    for mode, text in LLAMA_MODES:
        found = re.search(rf"^{text}:\s*([0-9.]+) tokens/s", stdout, re.MULTILINE)
        if not found:
            raise RuntimeError(f"{LLAMA_PROGRAM} printed no '{text}' tokens/s line:\n{stdout}")
        rates[mode] = float(found.group(1))
    return rates


def llama_medians(raw):
    """{'<prefix>/<mode>/w<W>': {'tokens_per_s': median, 'runs': count, 'tokens': per run}},
    the prefix the shape's (LLAMA_SHAPES; samples without a shape are the small model's)."""
    medians = {}
    for shape, _, prefix in LLAMA_SHAPES:
        of_shape = [sample for sample in raw["samples"] if sample.get("shape", "small") == shape]
        for workers in sorted({sample["workers"] for sample in of_shape}):
            runs = [sample for sample in of_shape if sample["workers"] == workers]
            for mode, _ in LLAMA_MODES:
                medians[f"{prefix}/{mode}/w{workers}"] = {
                    "tokens_per_s": statistics.median(sample[mode] for sample in runs),
                    "runs": len(runs), "tokens": raw["tokens"]}
    return medians


def collect_llama(args):
    """The llama decoder's medians and context, measured now or (--report-only) loaded from
    the llama_decoder.json an earlier run left; None when the filter leaves it out or there is
    neither an executable nor such a file."""
    if args.filter and args.filter not in LLAMA_PROGRAM:
        return None
    if args.report_only:
        path = os.path.join(args.out_dir, "llama_decoder.json")
        if not os.path.exists(path):
            return None
        with open(path, encoding="utf-8") as handle:
            raw = json.load(handle)
        return llama_medians(raw), raw["context"]
    if not os.path.exists(os.path.join(args.build_dir, LLAMA_EXECUTABLE)):
        return None
    return run_llama(args.build_dir, args.out_dir)


def collect_medians(report):
    """The median aggregate of every benchmark (or its single run when it ran once)."""
    medians = {}
    for entry in report["benchmarks"]:
        if entry.get("error_occurred"):
            raise RuntimeError(f"{entry['name']}: {entry.get('error_message')}")
        is_median = entry.get("run_type") == "aggregate" and entry.get("aggregate_name") == "median"
        is_single = entry.get("run_type") == "iteration" and entry.get("repetitions", 1) <= 1
        if not (is_median or is_single):
            continue
        name = re.sub(r"(/iterations:\d+)?(/(real|manual)_time)?$", "", entry["run_name"])
        scale = TIME_UNITS_NS[entry["time_unit"]]
        values = {"real_ns": entry["real_time"] * scale, "cpu_ns": entry["cpu_time"] * scale,
                  "iterations": entry["iterations"]}
        known = {"name", "family_index", "per_family_instance_index", "run_name", "run_type",
                 "repetitions", "repetition_index", "threads", "aggregate_name",
                 "aggregate_unit", "iterations", "real_time", "cpu_time", "time_unit",
                 "error_occurred", "error_message", "label"}
        for key, value in entry.items():
            if key not in known and isinstance(value, (int, float)):
                values[key] = value
        medians[name] = values
    return medians


def fmt_time(ns):
    if ns is None:
        return "n/a"
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.1f} µs"
    if ns >= 10:
        return f"{ns:.0f} ns"
    return f"{ns:.2f} ns"


def fmt_ratio(value):
    if value is None:
        return "n/a"
    if value >= 100:
        return f"{value:.0f}×"
    return f"{value:.2f}×"


def ratio(numerator, denominator):
    if numerator is None or denominator is None or denominator == 0:
        return None
    return numerator / denominator


def fmt_bytes(count):
    count = int(count)
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= size and count % size == 0:
            return f"{count // size} {unit}"
    return f"{count} B"


class Report:
    """Collects the Markdown lines, the machine-readable rows and the goal verdicts."""

    def __init__(self, results):
        self.results = results
        self.lines = []
        self.rows = []
        self.goals = []

    def get(self, name, field="real_ns"):
        entry = self.results.get(name)
        return None if entry is None else entry.get(field)

    def table(self, title, header, rows):
        self.lines += ["", f"### {title}", "", "| " + " | ".join(header) + " |",
                       "|" + "|".join("---" for _ in header) + "|"]
        for row in rows:
            self.lines.append("| " + " | ".join(row) + " |")
        self.rows.append({"table": title, "header": header, "rows": rows})

    def goal(self, text, met, measured):
        self.goals.append({"goal": text, "met": met, "measured": measured})
        return "met" if met else ("**MISSED**" if met is not None else "n/a")


# A kernel-mode launch's host time over the raw enqueue of the same invocation (issue 18; the
# earlier goal of issue 5 was 2x).
LAUNCH_GOAL = 1.5


def launch_section(report):
    rows = []
    for bind in ("device_build", "host_build"):
        raw_real = report.get(f"launch/raw_enqueue/{bind}")
        raw_cpu = report.get(f"launch/raw_enqueue/{bind}", "cpu_ns")
        launch_real = report.get(f"launch/kernel_mode/{bind}")
        launch_cpu = report.get(f"launch/kernel_mode/{bind}", "cpu_ns")
        r_real = ratio(launch_real, raw_real)
        r_cpu = ratio(launch_cpu, raw_cpu)
        status = report.goal(f"kernel-mode launch ({bind}) within {LAUNCH_GOAL:g}x of its raw "
                             "enqueue", None if r_real is None else r_real <= LAUNCH_GOAL,
                             {"ratio_real": r_real, "ratio_cpu": r_cpu})
        rows.append([f"kernel-mode launch, host side ({bind})", fmt_time(launch_real),
                     f"raw enqueue of the same invocation: {fmt_time(raw_real)}",
                     fmt_ratio(r_real), fmt_ratio(r_cpu), "—", f"≤ {LAUNCH_GOAL:g}×", status])
        for kind, what in (("program_run", "DEVICE tensors"), ("program_run_host", "HOST tensors")):
            run_real = report.get(f"launch/{kind}/{bind}")
            rows.append([f"program-mode run, prepare+launch+wait+finalize, {what} ({bind})",
                         fmt_time(run_real), f"raw enqueue: {fmt_time(raw_real)}",
                         fmt_ratio(ratio(run_real, raw_real)), "—",
                         fmt_ratio(ratio(run_real, launch_real)), "baseline", "—"])
    report.table("1. Launch, host side (median per call)",
                 ["measurement", "replayrt", "limit", "replayrt / limit",
                  "same, calling thread's CPU time", "vs kernel-mode launch", "goal", "status"],
                 rows)


REPLAY_KERNELS = (("tiny", "tiny (launch-bound)"), ("compute10us", "~10 µs compute"))
REPLAY_SHAPES = ("chain", "fanout")
REPLAY_WORKERS = (1, 2)
REPLAY_TASKS = (1, 16, 256, 4096)


def replay_section(report):
    rows = []
    for kernel, kernel_text in REPLAY_KERNELS:
        for shape in REPLAY_SHAPES:
            for workers in REPLAY_WORKERS:
                for tasks in REPLAY_TASKS:
                    tail = f"{kernel}/{shape}/w{workers}/n{tasks}"
                    replay = report.get(f"replay/{tail}")
                    eager = report.get(f"eager/{tail}")
                    direct = report.get(f"direct/{kernel}/n{tasks}")
                    r_direct = ratio(replay, direct)
                    if kernel == "compute10us" and tasks >= 16:
                        status = report.goal(
                            f"replay of {tasks} ~10 us kernels ({shape}, {workers} worker(s)) "
                            "within 1.10x of direct calls per task",
                            None if r_direct is None else r_direct <= 1.10, r_direct)
                        goal = "≤ 1.10×"
                    else:
                        status, goal = "—", "—"
                    rows.append([kernel_text, shape, str(workers), str(tasks), fmt_time(replay),
                                 fmt_time(ratio(replay, tasks)), fmt_time(ratio(direct, tasks)),
                                 fmt_ratio(r_direct), fmt_time(eager),
                                 fmt_ratio(ratio(eager, replay)), goal, status])
    report.table("2. Replay (median per replay, replay + synchronize)",
                 ["kernel", "shape", "workers", "tasks", "replay", "replay per task",
                  "direct calls per task (limit)", "replay / limit", "eager launch",
                  "eager / replay", "goal", "status"], rows)

    flat_rows = []
    for kernel, kernel_text in REPLAY_KERNELS:
        for shape in REPLAY_SHAPES:
            for workers in REPLAY_WORKERS:
                per_task = {}
                for tasks in (16, 256, 4096):
                    per_task[tasks] = ratio(report.get(f"replay/{kernel}/{shape}/w{workers}/n{tasks}"),
                                            tasks)
                values = [v for v in per_task.values() if v is not None]
                spread = max(values) / min(values) if len(values) == 3 and min(values) > 0 else None
                t256 = report.get(f"replay/{kernel}/{shape}/w{workers}/n256")
                t4096 = report.get(f"replay/{kernel}/{shape}/w{workers}/n4096")
                marginal = None if t256 is None or t4096 is None else (t4096 - t256) / (4096 - 256)
                fixed = report.get(f"replay/{kernel}/{shape}/w{workers}/n1")
                status = report.goal(
                    f"per-task replay cost flat within 1.5x from 16 to 4096 tasks ({kernel}, "
                    f"{shape}, {workers} worker(s))",
                    None if spread is None else spread <= 1.5, spread)
                flat_rows.append([kernel_text, shape, str(workers), fmt_time(per_task[16]),
                                  fmt_time(per_task[256]), fmt_time(per_task[4096]),
                                  fmt_ratio(spread), fmt_time(marginal), fmt_time(fixed),
                                  "≤ 1.5×", status])
    report.table("2b. Replay cost per task from 16 to 4096 tasks",
                 ["kernel", "shape", "workers", "per task @16", "@256", "@4096",
                  "max / min", "marginal per task (256→4096)", "1-task replay", "goal",
                  "status"], flat_rows)


def staging_section(report):
    rows = []
    sizes = sorted({int(name.rsplit("/", 1)[1]) for name in report.results
                    if name.startswith("staging/memcpy/")})
    for size in sizes:
        staged = report.get(f"staging/replayrt/{size}")
        fixed = report.get(f"staging/device_tensor/{size}")
        limit = report.get(f"staging/memcpy/{size}")
        fraction = ratio(limit, staged)
        if size >= (1 << 20):
            status = report.goal(f"staging of {fmt_bytes(size)} at >= 90% of memcpy bandwidth",
                                 None if fraction is None else fraction >= 0.90, fraction)
            goal = "≥ 90%"
        else:
            status, goal = "—", "—"
        rows.append([fmt_bytes(size), fmt_time(staged), fmt_time(limit),
                     fmt_ratio(ratio(staged, limit)),
                     "n/a" if fraction is None else f"{100 * fraction:.0f}%",
                     "n/a" if staged is None else f"{size / staged:.2f}",
                     "n/a" if limit is None else f"{size / limit:.2f}",
                     fmt_time(fixed), goal, status])
    report.table("3. Staging of a HOST tensor in a bind (median per launch + synchronize)",
                 ["bytes", "replayrt", "memcpy (limit)", "replayrt / limit",
                  "share of memcpy bandwidth", "replayrt GB/s", "memcpy GB/s",
                  "same launch, DEVICE tensor", "goal", "status"], rows)


MEMORY_ROWS = (
    ("bank commit that keeps every region (program mode)", "memory/bank_commit_keep/program",
     "memory/bank_commit_keep_limit"),
    ("bank commit that keeps every region (kernel mode, in a launch)",
     "memory/bank_commit_keep/kernel", "memory/bank_commit_keep_limit"),
    ("retained-buffer begin that fits + one slice (program mode)",
     "memory/retained_begin_fit/program", "memory/retained_begin_fit_limit"),
    ("retained-buffer begin that fits + one slice (kernel mode, in a launch)",
     "memory/retained_begin_fit/kernel", "memory/retained_begin_fit_limit"),
    ("bank commit through the DeviceContext", "memory/context_bank_commit_keep",
     "memory/bank_commit_keep_limit"),
    ("retained begin + slice through the DeviceContext", "memory/context_retained_begin_fit",
     "memory/retained_begin_fit_limit"),
    ("prebuilt-image cache lookup that hits", "memory/image_cache_lookup_hit", None),
    ("cache-hit bind (program mode, 2 HOST tensors)", "memory/cache_hit_bind",
     "memory/cache_hit_bind_limit"),
)


def memory_section(report):
    rows = []
    for text, name, limit_name in MEMORY_ROWS:
        value = report.get(name, "cpu_ns")
        limit = report.get(limit_name, "cpu_ns") if limit_name else None
        rows.append([text, fmt_time(value), fmt_time(limit), fmt_ratio(ratio(value, limit))])
    report.table("4. Memory core in steady state (median CPU time per call)",
                 ["call", "replayrt", "limit", "replayrt / limit"], rows)


ALLOC_ROWS = (
    ("kernel mode, device-build, HOST tensors", "alloc/kernel_mode/device_build", True),
    ("program mode at a fixed size, device-build, HOST tensors",
     "alloc/program_mode/device_build", True),
    ("kernel mode, host-build, HOST tensors", "alloc/kernel_mode/host_build", True),
    ("program mode at a fixed size, host-build, HOST tensors", "alloc/program_mode/host_build",
     True),
    ("naive baseline: allocate and free every tensor per run", "alloc/naive", False),
)


def alloc_section(report):
    rows = []
    for text, name, has_goal in ALLOC_ROWS:
        allocs = report.get(name, "alloc_calls_per_100k")
        frees = report.get(name, "free_calls_per_100k")
        runtime = report.get(name, "runtime_alloc_calls_per_100k")
        runtime_frees = report.get(name, "runtime_free_calls_per_100k")
        if has_goal:
            total = None if allocs is None or frees is None else allocs + frees
            status = report.goal(f"zero allocator calls in steady state: {text}",
                                 None if total is None else total == 0, total)
            goal = "0"
        else:
            status, goal = "—", "baseline"
        per_run = report.get(name)
        rows.append([text, fmt_count(allocs), fmt_count(frees),
                     f"{fmt_count(runtime)} / {fmt_count(runtime_frees)}"
                     if name != "alloc/naive" else "—",
                     fmt_time(per_run), goal, status])
    report.table("5. Device allocator calls per 100,000 steady-state runs (counted)",
                 ["configuration", "allocate calls", "free calls",
                  "runtime-counted (rrt_context_stats) alloc / free", "time per run",
                  "goal (limit)", "status"], rows)


PLAN_ROWS = (
    ("weights DEVICE params (ABI 1.2 desc)", "plan/device_weights", True),
    ("weights ANY params (the ABI 1.1 plan)", "plan/any_weights", False),
)


def fmt_optional_bytes(count):
    return "n/a" if count is None else fmt_bytes(count)


def plan_section(report):
    rows = []
    for text, name, has_goal in PLAN_ROWS:
        live = report.get(name, "live_bytes")
        host = report.get(name, "host_param_bytes")
        regions = report.get(name, "frozen_regions")
        weights = report.get(name, "weight_bytes")
        staging = report.get(name, "staging_bytes")
        needed = None if host is None or regions is None else host + regions
        if has_goal:
            met = None if live is None or needed is None else live <= 1.05 * host + regions
            status = report.goal(f"kernel-mode live bytes <= 1.05x HOST params + regions: {text}",
                                 met, live)
            goal = "<= 1.05x HOST params + regions"
        else:
            status, goal = "—", "baseline"
        rows.append([text, fmt_optional_bytes(live), fmt_optional_bytes(host),
                     fmt_optional_bytes(regions), fmt_optional_bytes(weights),
                     fmt_optional_bytes(staging), fmt_ratio(ratio(staging, host)),
                     fmt_ratio(ratio(live, needed)), goal, status])
    report.table("6. Live bytes of a kernel-mode context planned by rrt_capacity_plan_fit "
                 "(measured)",
                 ["configuration", "live bytes", "HOST param bytes", "frozen regions",
                  "weights (caller memory)", "staging", "staging / HOST params",
                  "live / (HOST params + regions)", "goal",
                  "status"], rows)


WAIT_ROWS = (
    ("RRT_WAIT_SPIN (the limit)", "wait/spin"),
    ("RRT_WAIT_YIELD", "wait/yield"),
    ("RRT_WAIT_BLOCK", "wait/block"),
    ("RRT_WAIT_SPIN_THEN_BLOCK, default 250 µs budget", "wait/spin_then_block_250us"),
    ("RRT_WAIT_SPIN_THEN_BLOCK, 5000 µs budget (longer than the step)",
     "wait/spin_then_block_5000us"),
)


def wait_section(report):
    limit = report.get("wait/spin", "wake_ns")
    rows = []
    for text, name in WAIT_ROWS:
        wake = report.get(name, "wake_ns")
        rows.append([text, fmt_time(report.get(name)), fmt_time(wake),
                     fmt_ratio(ratio(wake, limit)), fmt_time(report.get(name, "cpu_ns"))])
    report.table("7. Host wait policies on a 4 ms decode-sized step (kernel-mode launch + "
                 "event record + rrt_event_synchronize)",
                 ["policy", "step, launch to return", "wake-up (task end to return)",
                  "wake-up / SPIN's", "calling thread's CPU time per step"], rows)


KERNEL_SHAPES = (("decode step", "M:1/K:1024/N:1024"), ("16-token prefill", "M:16/K:1024/N:1024"))


def kernels_section(report):
    rows = []
    for text, shape in KERNEL_SHAPES:
        matmul = report.get(f"kernels/matmul/{shape}", "cpu_ns")
        for weights in ("f32", "f16", "bf16"):
            value = report.get(f"kernels/linear_{weights}/{shape}", "cpu_ns")
            rows.append([f"linear, {weights} [out, in] weights, {text} ({shape})",
                         fmt_time(value), fmt_time(matmul), fmt_ratio(ratio(value, matmul))])
    report.table("8. Simulator linear layer (median CPU time per call)",
                 ["kernel", "replayrt", "matmul on the transposed f32 weight",
                  "linear / matmul"], rows)


def fmt_count(value):
    return "n/a" if value is None else f"{value:,.0f}"


def machine_description(build_dir, context):
    lines = []
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
        model = re.search(r"Model name:\s*(.+)", lscpu)
        lines.append(f"CPU: {model.group(1).strip() if model else platform.processor()}, "
                     f"{os.cpu_count()} logical CPUs (nproc)")
    except OSError:
        lines.append(f"CPU: {os.cpu_count()} logical CPUs")
    compiler = "unknown"
    cache = os.path.join(build_dir, "CMakeCache.txt")
    if os.path.exists(cache):
        with open(cache, encoding="utf-8") as handle:
            found = re.search(r"CMAKE_CXX_COMPILER:\w+=(.+)", handle.read())
        if found:
            version = subprocess.run([found.group(1).strip(), "--version"], capture_output=True,
                                     text=True, check=False).stdout.splitlines()
            compiler = version[0] if version else found.group(1)
    lines.append(f"Compiler: {compiler}; build type Release")
    lines.append(f"Kernel: {platform.system()} {platform.release()}")
    if context.get("library_build_type"):
        lines.append(f"Google Benchmark library build type: {context.get('library_build_type')}")
    return lines


CUDA_HOST_ROWS = (
    ("rrt_graph_replay's stream replay (CudaStream::replay)", "cuda_host/stream_replay",
     "cuda_host/raw_graph_launch", "cudaGraphLaunch"),
    ("rrt_graph_replay below the ABI guard (Engine::replay)", "cuda_host/engine_replay",
     "cuda_host/raw_graph_launch", "cudaGraphLaunch"),
    ("rrt_kernel_launch of a 1-task callable (Engine::kernel_launch)",
     "cuda_host/engine_kernel_launch", "cuda_host/raw_kernel_launch", "cudaLaunchKernel"),
)


def cuda_host_section(report):
    rows = []
    for text, name, limit_name, limit_text in CUDA_HOST_ROWS:
        value = report.get(name)
        limit = report.get(limit_name)
        if value is None:
            continue
        added = None if limit is None else value - limit
        rows.append([text, fmt_time(value), f"{limit_text} on the fake: {fmt_time(limit)}",
                     fmt_time(added)])
    if rows:
        report.table("9. CUDA backend, host work per call over FakeCuda (work dropped): what "
                     "replayrt adds to the CUDA call it ends in",
                     ["measurement", "replayrt", "the bare call", "added by replayrt"], rows)


# (text, case, tasks per run, the idle machine's goal, the loaded machine's goal). A goal is
# ("abs", {workers: ns}) for a time per run, ("ratio", r) for replayrt / the best peer, or None.
CONTENTION_ROWS = (
    ("one-task replay + synchronize", "one_task", 1, ("abs", {1: 500.0, 2: 1000.0}),
     ("ratio", 3.0)),
    ("one-task replay after a 1 ms idle gap", "after_idle_gap", 1, None, ("ratio", 2.0)),
    ("replay call to its first task's start", "to_first_task", 1, ("abs", {1: 2000.0, 2: 2000.0}),
     None),
    ("tiny-task chain, per task", "chain", 4096, ("ratio", 1.0), ("ratio", 2.0)),
    ("tiny-task fan-out, per task", "fanout", 4096, ("ratio", 1.0), ("ratio", 2.0)),
)
# The peers contention_bench runs beside replayrt: (name in the results, name in the report).
# Taskflow is there only when the build found it (scripts/fetch-taskflow.sh).
CONTENTION_PEERS = (("tbb", "oneTBB"), ("taskflow", "Taskflow"))
def peer_versions(context):
    """'<peer> <version>' for each peer contention_bench's context names (peer_<name> keys)."""
    return [f"{label} {context[f'peer_{key}']}"
            for key, label in (("onetbb", "oneTBB"), ("taskflow", "Taskflow"))
            if context.get(f"peer_{key}")]


# Cores busy during back-to-back one-task replays with the default wait policy (issue 18).
CONTENTION_CORES_GOAL = 1.1


def contention_goal(report, text, workers, goal, value, limit, load_name):
    """The status cell of one contention row against its goal."""
    if goal is None or value is None:
        return "—", "—"
    kind, target = goal
    if kind == "abs":
        bound = target[workers]
        return (f"≤ {fmt_time(bound)}",
                report.goal(f"{text}, {workers} worker(s), {load_name}, at most {fmt_time(bound)}",
                            value <= bound, {"ns": value}))
    measured = ratio(value, limit)
    return (f"≤ {target:g}× the best peer",
            report.goal(f"{text}, {workers} worker(s), {load_name}, within {target:g}x of the "
                        f"best peer", None if measured is None else measured <= target,
                        {"ratio": measured}))


def contention_section(report):
    peers_measured = [label for peer, label in CONTENTION_PEERS
                      if report.get(f"contention/one_task/{peer}/w1") is not None]
    missing = [label for _, label in CONTENTION_PEERS if label not in peers_measured]
    for prefix, load_name, goal_index in (("", "idle machine", 3),
                                          (f"{LOADED[0]}/", "2 CPU hogs", 4)):
        rows = []
        hogs = None
        for row in CONTENTION_ROWS:
            text, case, tasks = row[:3]
            for workers in (1, 2):
                name = f"{prefix}contention/{case}/replayrt/w{workers}"
                value = report.get(name)
                if value is None:
                    continue
                peer_values = [report.get(f"{prefix}contention/{case}/{peer}/w{workers}")
                               for peer, _ in CONTENTION_PEERS]
                measured = [v for v in peer_values if v is not None]
                limit = min(measured) if measured else None
                hogs = report.get(name, "hogs")
                cores = report.get(name, "cores")
                peer_cores = [report.get(f"{prefix}contention/{case}/{peer}/w{workers}", "cores")
                              for peer, _ in CONTENTION_PEERS]
                goal_text, status = contention_goal(report, text, workers, row[goal_index],
                                                    ratio(value, tasks), ratio(limit, tasks),
                                                    load_name)
                if case == "one_task" and not prefix and cores is not None:
                    status += "; cores " + report.goal(
                        f"cores busy during back-to-back one-task replays, {workers} worker(s), "
                        f"at most {CONTENTION_CORES_GOAL}", cores <= CONTENTION_CORES_GOAL,
                        {"cores": cores})
                    goal_text += f"; ≤ {CONTENTION_CORES_GOAL} cores"
                rows.append([text, str(workers), fmt_time(ratio(value, tasks))]
                            + [fmt_time(ratio(v, tasks)) for v in peer_values]
                            + [fmt_ratio(ratio(value, limit)),
                               "—" if cores is None else f"{cores:.2f}"]
                            + ["—" if c is None else f"{c:.2f}" for c in peer_cores]
                            + [goal_text, status])
        if rows:
            number = "10" if not prefix else "10b"
            not_compared = (f" ({', '.join(missing)}: not compared, not built here; "
                            f"scripts/fetch-taskflow.sh)" if missing else "")
            report.table(f"{number}. The simulator next to {' and '.join(peers_measured)}, same "
                         f"task bodies, {int(hogs or 0)} CPU hog processes beside it"
                         f"{not_compared}",
                         ["measurement", "workers", "replayrt"]
                         + [label for _, label in CONTENTION_PEERS]
                         + ["replayrt / best peer", "cores busy (replayrt)"]
                         + [f"cores busy ({label})" for _, label in CONTENTION_PEERS]
                         + ["goal", "status"], rows)


def llama_section(report):
    rows = []
    for shape, _, prefix in LLAMA_SHAPES:
        rates = {}
        for workers in LLAMA_WORKERS:
            program = report.get(f"{prefix}/program_mode/w{workers}", "tokens_per_s")
            kernel = report.get(f"{prefix}/kernel_mode/w{workers}", "tokens_per_s")
            if program is None or kernel is None:
                continue
            rates[workers] = (program, kernel)
            runs = report.get(f"{prefix}/program_mode/w{workers}", "runs")
            rows.append([shape, str(workers), str(runs), f"{program:,.0f}", f"{kernel:,.0f}",
                         fmt_ratio(ratio(kernel, program)),
                         fmt_ratio(ratio(program, rates[LLAMA_WORKERS[0]][0]))
                         if LLAMA_WORKERS[0] in rates else "—",
                         fmt_ratio(ratio(kernel, rates[LLAMA_WORKERS[0]][1]))
                         if LLAMA_WORKERS[0] in rates else "—"])
    if rows:
        report.table(f"11. llama-decoder, random weights, {LLAMA_TOKENS} tokens per run (median "
                     f"tokens/s over the runs; the worker counts interleaved)",
                     ["model shape", "device workers", "runs",
                      "program mode (one rrt_run per token)",
                      "kernel mode (one graph replay per token)", "kernel / program",
                      f"program vs {LLAMA_WORKERS[0]} worker", f"kernel vs {LLAMA_WORKERS[0]} worker"],
                     rows)


def tree_commit():
    """`git describe --always --dirty` of the source tree, or None outside a git checkout."""
    try:
        completed = subprocess.run(["git", "-C", SOURCE_DIR, "describe", "--always", "--dirty"],
                                   capture_output=True, text=True, check=False)
    except OSError:
        return None
    return completed.stdout.strip() or None


def run_conditions(args, contexts, load_average, elapsed):
    """The run's source tree, machine, load and settings for results.json: this run's, or under
    --report-only those the earlier run recorded in <out-dir>/results.json when it is there."""
    earlier_path = os.path.join(args.out_dir, "results.json")
    if args.report_only and os.path.exists(earlier_path):
        with open(earlier_path, encoding="utf-8") as handle:
            earlier = json.load(handle)
        return {key: earlier.get(key) for key in
                ("commit", "machine", "load_average", "elapsed_s", "repetitions", "min_time_s")}
    return {"commit": tree_commit(),
            "machine": machine_description(args.build_dir, next(iter(contexts.values()), {})),
            "load_average": load_average, "elapsed_s": elapsed,
            "repetitions": args.repetitions, "min_time_s": args.min_time}


def main():
    args = parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    results = {}
    contexts = {}
    load_before = os.getloadavg()
    started = time.monotonic()
    try:
        for program, repetitions, min_time, load in PROGRAMS:
            if args.filter and args.filter not in program:
                continue
            source = (os.path.join(args.out_dir, f"{run_name(program, load)}.json")
                      if args.report_only else os.path.join(args.build_dir, "bench", program))
            if program in OPTIONAL_PROGRAMS and not os.path.exists(source):
                continue
            if args.report_only:
                medians, context = load_program(args.out_dir, program, load)
            else:
                medians, context = run_program(args.build_dir, args.out_dir, program,
                                               repetitions or args.repetitions,
                                               min_time or args.min_time, load)
            results.update(medians)
            contexts[run_name(program, load)] = context
        llama = collect_llama(args)
        if llama:
            results.update(llama[0])
            contexts[LLAMA_PROGRAM] = llama[1]
    except RuntimeError as error:
        print(f"run_all: {error}", file=sys.stderr)
        return 1
    elapsed = time.monotonic() - started
    load_after = os.getloadavg()

    report = Report(results)
    launch_section(report)
    replay_section(report)
    staging_section(report)
    memory_section(report)
    alloc_section(report)
    plan_section(report)
    wait_section(report)
    kernels_section(report)
    cuda_host_section(report)
    contention_section(report)
    llama_section(report)

    run = run_conditions(args, contexts, [load_before, load_after], elapsed)
    rounds = contexts.get("replay_bench", {}).get("compute_kernel_rounds")
    date = next((context["date"] for context in contexts.values() if context.get("date")), None)
    header = ["## replayrt benchmark results", ""]
    header.append(f"- Run started {date or 'n/a'}; source tree {run['commit'] or 'n/a'}")
    header += [f"- {line}" for line in run["machine"] or []]
    if args.report_only:
        header.append("- Tables rebuilt from the JSON an earlier run left in the output directory")
    else:
        header.append(f"- Load average before / after: {load_before[0]:.2f} / "
                      f"{load_after[0]:.2f}; whole run {elapsed:.0f} s; {args.repetitions} "
                      f"repetitions of {args.min_time} s each, medians shown")
    starts = [f"{program} {context['load_avg'][0]:.2f}" for program, context in contexts.items()
              if context.get("load_avg")]
    if starts:
        header.append("- Load average (1 min) as each program started: " + ", ".join(starts))
    if rounds:
        header.append(f"- ~10 µs compute kernel: {rounds} rounds (calibrated in this run)")
    peers = peer_versions(contexts.get("contention_bench", {}))
    if peers:
        header.append("- Peers in tables 10 and 10b: " + "; ".join(peers))
    met = sum(1 for goal in report.goals if goal["met"])
    missed = [goal for goal in report.goals if goal["met"] is False]
    header.append(f"- Goals: {met} met, {len(missed)} missed, "
                  f"{len(report.goals) - met - len(missed)} not measured")
    markdown = "\n".join(header + report.lines) + "\n"

    with open(os.path.join(args.out_dir, "results.md"), "w", encoding="utf-8") as handle:
        handle.write(markdown)
    with open(os.path.join(args.out_dir, "results.json"), "w", encoding="utf-8") as handle:
        json.dump({"date": date, **run, "compute_kernel_rounds": rounds,
                   "medians": results, "tables": report.rows, "goals": report.goals},
                  handle, indent=2)
    print(markdown)
    print(f"written: {os.path.join(args.out_dir, 'results.md')}, "
          f"{os.path.join(args.out_dir, 'results.json')}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
