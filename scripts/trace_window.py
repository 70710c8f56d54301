"""Reading a Chrome trace-event file written by rrt::Trace and choosing a window of it.

Shared by scripts/render-trace.py (matplotlib PNG) and scripts/render-trace-html.py (HTML
viewer); standard library only.
"""

import json


def load_events(path):
    """The file's traceEvents list, every phase."""
    with open(path, encoding="utf-8") as file:
        return json.load(file)["traceEvents"]


def load(path):
    """The file's complete ("X") slices and its thread names by (pid, tid)."""
    events = load_events(path)
    names = {}
    for event in events:
        if event.get("ph") == "M" and event.get("name") == "thread_name":
            names[(event["pid"], event["tid"])] = event["args"]["name"]
    return [e for e in events if e.get("ph") == "X"], names


def pick_window(slices, work_name):
    """(start, end) in trace microseconds: the earliest work slice named `work_name` (any work
    slice when it is None) with a margin of 15% of its duration, at least 1 µs, on both sides.
    Raises LookupError when there is no such slice."""
    works = [s for s in slices if s["cat"] == "work" and (work_name is None or
                                                          s["name"] == work_name)]
    if not works:
        raise LookupError(f"no work slice named {work_name!r}")
    work = min(works, key=lambda s: s["ts"])
    margin = max(work["dur"] * 0.15, 1.0)
    return work["ts"] - margin, work["ts"] + work["dur"] + margin


def overlaps(event, window):
    """Whether a slice has time inside the window (start, end)."""
    start, end = window
    return event["ts"] < end and event["ts"] + event["dur"] > start


def depths(track_slices):
    """Each slice's nesting depth within its track, by id() of the slice."""
    ordered = sorted(track_slices, key=lambda s: (s["ts"], -s["dur"]))
    stack, depth = [], {}
    for current in ordered:
        while stack and stack[-1]["ts"] + stack[-1]["dur"] <= current["ts"]:
            stack.pop()
        depth[id(current)] = len(stack)
        stack.append(current)
    return depth
