#!/usr/bin/env python3
"""Checks a Chrome trace-event file written by rrt::Trace (include/replayrt/trace.hpp).

    check_trace.py FILE [--min-tasks N] [--min-work N] [--host-names NAME,...]

Passes (exit 0) when the file is JSON with a traceEvents list in which:
- every complete event ("X") has a name, a category, a pid, a tid, ts and dur >= 0;
- every track an event is on has its process and thread named by metadata events;
- within each track, slices nest: two slices are disjoint or one contains the other;
- every task slice lies inside a launch slice of its callable on its track, and every launch
  slice inside a work slice when the track has work slices;
- there are at least --min-tasks task slices and --min-work work slices (each counted once,
  on the first track it is on), and every name in --host-names appears as a host slice.
Prints what is wrong and exits 1 otherwise.
"""

import argparse
import collections
import json
import sys

# Times are microseconds with three decimals; sums of two of them are exact to well below this.
EPSILON_US = 1e-6


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file")
    parser.add_argument("--min-tasks", type=int, default=1)
    parser.add_argument("--min-work", type=int, default=0)
    parser.add_argument("--host-names", default="")
    return parser.parse_args()


def load_events(path):
    with open(path, encoding="utf-8") as file:
        document = json.load(file)
    events = document.get("traceEvents")
    if not isinstance(events, list):
        raise ValueError("no traceEvents list")
    return events


def named_tracks(events):
    processes = set()
    threads = set()
    for event in events:
        if event.get("ph") != "M":
            continue
        if event.get("name") == "process_name":
            processes.add(event["pid"])
        elif event.get("name") == "thread_name":
            threads.add((event["pid"], event["tid"]))
    return processes, threads


def check_fields(event):
    for field in ("name", "cat", "pid", "tid", "ts", "dur"):
        if field not in event:
            return f"an X event lacks {field}: {event}"
    if event["dur"] < 0:
        return f"negative duration: {event}"
    return None


def contains(outer, inner):
    return (outer["ts"] <= inner["ts"] + EPSILON_US and
            inner["ts"] + inner["dur"] <= outer["ts"] + outer["dur"] + EPSILON_US)


def check_track(track, slices):
    """Nesting within one track; returns a list of problems."""
    problems = []
    ordered = sorted(slices, key=lambda s: (s["ts"], -s["dur"]))
    stack = []
    for current in ordered:
        while stack and stack[-1]["ts"] + stack[-1]["dur"] <= current["ts"] + EPSILON_US:
            stack.pop()
        if stack and not contains(stack[-1], current):
            problems.append(f"track {track}: '{current['name']}' overlaps "
                            f"'{stack[-1]['name']}' without nesting in it")
        if current["cat"] == "task":
            callable_name = current.get("args", {}).get("callable")
            if not any(s["cat"] == "launch" and s["args"]["callable"] == callable_name
                       for s in stack):
                problems.append(f"track {track}: task '{current['name']}' is not inside a "
                                f"launch of '{callable_name}'")
        stack.append(current)
    has_work = any(s["cat"] == "work" for s in slices)
    if has_work:
        for launch in (s for s in slices if s["cat"] == "launch"):
            if not any(s["cat"] == "work" and contains(s, launch) for s in slices):
                problems.append(f"track {track}: launch '{launch['name']}' at {launch['ts']} "
                                "is not inside a work slice")
    return problems


def main():
    args = parse_args()
    try:
        events = load_events(args.file)
    except (OSError, ValueError) as error:
        print(f"check_trace: {args.file}: {error}")
        return 1
    processes, threads = named_tracks(events)
    problems = []
    tracks = collections.defaultdict(list)
    for event in (e for e in events if e.get("ph") == "X"):
        problem = check_fields(event)
        if problem:
            problems.append(problem)
            continue
        track = (event["pid"], event["tid"])
        if event["pid"] not in processes or track not in threads:
            problems.append(f"track {track} has no process or thread name")
        tracks[track].append(event)
    for track, slices in sorted(tracks.items()):
        problems.extend(check_track(track, slices))

    all_slices = [s for slices in tracks.values() for s in slices]
    tasks = sum(1 for s in all_slices if s["cat"] == "task")
    work = len({(s["name"], s["ts"]) for s in all_slices if s["cat"] == "work"})
    host_names = {s["name"] for s in all_slices if s["cat"] == "host"}
    if tasks < args.min_tasks:
        problems.append(f"{tasks} task slices, expected at least {args.min_tasks}")
    if work < args.min_work:
        problems.append(f"{work} work slices, expected at least {args.min_work}")
    for name in filter(None, args.host_names.split(",")):
        if name not in host_names:
            problems.append(f"no host slice named '{name}'")
    for problem in problems[:20]:
        print(f"check_trace: {problem}")
    if problems:
        print(f"check_trace: {args.file}: {len(problems)} problems")
        return 1
    print(f"check_trace: {args.file}: {len(tracks)} tracks, {tasks} tasks, {work} work slices, ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
