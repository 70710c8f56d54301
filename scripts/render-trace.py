#!/usr/bin/env python3
"""Renders a window of a Chrome trace-event file written by rrt::Trace as a PNG timeline.

    /usr/bin/python3 scripts/render-trace.py TRACE --work "replay 5" --out timeline.png

The window is one work slice (a replay or a run, by name; the first one without --work) with a
margin on both sides. Every track with a slice in the window is a row: host threads first, then
device workers. Nested slices stack downwards, one level per depth. Needs Debian's
python3-matplotlib.
"""

import argparse
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend is chosen first)

from trace_window import depths, load, overlaps, pick_window  # noqa: E402  (beside this file)

LEVEL_HEIGHT = 0.8
CATEGORY_COLORS = {"host": "#8da0cb", "work": "#b3a2c7", "launch": "#fdb462"}
KERNEL_COLORS = ["#66c2a5", "#fc8d62", "#a6d854", "#e78ac3", "#ffd92f", "#e5c494", "#80b1d3"]


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace")
    parser.add_argument("--work", help="name of the work slice to show (default: the first)")
    parser.add_argument("--out", required=True)
    parser.add_argument("--title", default="")
    return parser.parse_args()


def color_of(event, kernels):
    if event["cat"] != "task":
        return CATEGORY_COLORS.get(event["cat"], "#cccccc")
    kernel = event.get("args", {}).get("kernel", "")
    if kernel not in kernels:
        kernels[kernel] = KERNEL_COLORS[len(kernels) % len(KERNEL_COLORS)]
    return kernels[kernel]


def render(slices, names, window, out, title):
    start, end = window
    visible = [s for s in slices if overlaps(s, window)]
    tracks = sorted({(s["pid"], s["tid"]) for s in visible})
    figure, axes = plt.subplots(figsize=(12, 1.2 + 1.3 * len(tracks)))
    kernels = {}
    base = 0.0
    ticks = []
    for track in tracks:
        on_track = [s for s in visible if (s["pid"], s["tid"]) == track]
        depth = depths(on_track)
        levels = max(depth.values()) + 1
        for event in on_track:
            left = max(event["ts"], start) - start
            width = min(event["ts"] + event["dur"], end) - start - left
            y = base + depth[id(event)] * LEVEL_HEIGHT
            axes.broken_barh([(left, width)], (y, LEVEL_HEIGHT * 0.9),
                             facecolors=color_of(event, kernels), edgecolor="#555555",
                             linewidth=0.4)
            label = event["name"] if event["cat"] != "task" else event["name"].split("/", 1)[-1]
            if width > (end - start) * 0.04:
                axes.text(left + width / 2, y + LEVEL_HEIGHT * 0.45, label, ha="center",
                          va="center", fontsize=7, clip_on=True)
        ticks.append((base + levels * LEVEL_HEIGHT / 2, names.get(track, str(track))))
        base += levels * LEVEL_HEIGHT + 0.5
    axes.set_ylim(base, -0.3)
    axes.set_xlim(0, end - start)
    axes.set_yticks([t for t, _ in ticks], [n for _, n in ticks])
    axes.set_xlabel("time (µs from the window's start)")
    axes.set_title(title or "replayrt timeline")
    axes.grid(axis="x", linestyle=":", linewidth=0.5)
    figure.tight_layout()
    figure.savefig(out, dpi=110)


def main():
    args = parse_args()
    slices, names = load(args.trace)
    try:
        window = pick_window(slices, args.work)
    except LookupError as error:
        raise SystemExit(f"render-trace: {error}") from None
    render(slices, names, window, args.out, args.title)
    print(f"render-trace: wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
