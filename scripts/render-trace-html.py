#!/usr/bin/env python3
"""Writes a trace written by rrt::Trace as a standalone HTML timeline, and optionally takes a
PNG screenshot of it with headless Chromium.

    /usr/bin/python3 scripts/render-trace-html.py TRACE [--work "replay 5"] [--out PAGE.html]
                                                  [--png PAGE.png] [--width 1000]

The page is scripts/trace-viewer.html with the trace inlined in its trace-data element: it
loads nothing else and opens from file://. With --work it holds the window that
scripts/render-trace.py shows for the same option (trace_window.pick_window: the earliest work
slice of that name with a margin on both sides), that is every metadata event and every slice
with time in the window, and opens on the window; without --work it holds the whole trace and
opens on all of it. Standard library only.

--png runs Chromium (Debian's chromium package) headless twice: once to read the page's height
at --width, once to take the screenshot at that size, --scale pixels per CSS pixel. Chromium is needed for nothing else; when
it is missing the script says so and exits 2, after writing --out if that was asked for.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from trace_window import load_events, overlaps, pick_window  # beside this file

HERE = os.path.dirname(os.path.abspath(__file__))
TEMPLATE = os.path.join(HERE, "trace-viewer.html")
PLACEHOLDER = "__TRACE_DATA__"
CHROMIUM_NAMES = ("chromium", "chromium-browser")
CHROMIUM_TIMEOUT_S = 120


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace")
    parser.add_argument("--work", help="name of the work slice whose window to show "
                        "(default: the whole trace)")
    parser.add_argument("--out", help="the HTML page to write")
    parser.add_argument("--png", help="a screenshot of the page to write (needs Chromium)")
    parser.add_argument("--title", default="", help="the page's heading")
    parser.add_argument("--width", type=int, default=1000, help="screenshot width in CSS px")
    parser.add_argument("--scale", type=float, default=2.0,
                        help="screenshot pixels per CSS px (Chromium's device scale factor)")
    parser.add_argument("--chromium", help="the Chromium executable (default: chromium on PATH)")
    args = parser.parse_args()
    if not args.out and not args.png:
        parser.error("nothing to write: give --out, --png or both")
    return args


def page_data(trace_path, work, title):
    """What the viewer reads from its trace-data element."""
    events = load_events(trace_path)
    window = None
    if work is not None:
        slices = [e for e in events if e.get("ph") == "X"]
        window = pick_window(slices, work)
        events = [e for e in events if e.get("ph") != "X" or overlaps(e, window)]
    return {"title": title or "replayrt timeline", "source": os.path.basename(trace_path),
            "work": work, "window": list(window) if window else None, "traceEvents": events}


def render_page(data):
    """The viewer template with `data` inlined as JSON inside a <script> element."""
    with open(TEMPLATE, encoding="utf-8") as file:
        template = file.read()
    if template.count(PLACEHOLDER) != 1:
        raise SystemExit(f"render-trace-html: {TEMPLATE} must hold {PLACEHOLDER} exactly once")
    # "<" only occurs inside JSON strings, where \u003c means the same: no "</script>" or
    # "<!--" can end or change the element early. ensure_ascii escapes U+2028 and U+2029.
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":")).replace("<", "\\u003c")
    return template.replace(PLACEHOLDER, text)


def find_chromium(explicit):
    if explicit:
        return shutil.which(explicit)
    for name in CHROMIUM_NAMES:
        path = shutil.which(name)
        if path:
            return path
    return None


def run_chromium(chromium, profile, width, height, scale, extra, url):
    command = [chromium, "--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars",
               f"--user-data-dir={profile}", f"--window-size={width},{height}",
               f"--force-device-scale-factor={scale}", *extra, url]
    result = subprocess.run(command, capture_output=True, text=True, timeout=CHROMIUM_TIMEOUT_S,
                            check=False)
    if result.returncode != 0:
        raise SystemExit(f"render-trace-html: {' '.join(command)} failed "
                         f"(exit {result.returncode}):\n{result.stderr[-2000:]}")
    return result.stdout


def screenshot(chromium, page_path, png, width, scale):
    url = "file://" + os.path.abspath(page_path)
    with tempfile.TemporaryDirectory(prefix="render-trace-html-") as profile:
        dom = run_chromium(chromium, profile, width, 800, scale, ["--dump-dom"], url)
        match = re.search(r'data-content-height="(\d+)"', dom)
        if not match:
            raise SystemExit("render-trace-html: the page did not report its height; "
                             "did its script run?")
        height = int(match.group(1))
        png = os.path.abspath(png)
        if os.path.exists(png):
            os.remove(png)
        run_chromium(chromium, profile, width, height, scale, [f"--screenshot={png}"], url)
    if not os.path.exists(png):
        raise SystemExit(f"render-trace-html: Chromium wrote no {png}")
    return height


def main():
    args = parse_args()
    try:
        data = page_data(args.trace, args.work, args.title)
    except LookupError as error:
        raise SystemExit(f"render-trace-html: {error}") from None
    page = render_page(data)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as file:
            file.write(page)
        print(f"render-trace-html: wrote {args.out}")
    if not args.png:
        return 0
    chromium = find_chromium(args.chromium)
    if not chromium:
        print("render-trace-html: --png needs Chromium, which is not installed (on Debian: "
              "apt-get install chromium). It is optional: only the screenshot needs it; the "
              "HTML page (--out) opens in any browser.", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="render-trace-html-") as directory:
        page_path = os.path.join(directory, "timeline.html")
        with open(page_path, "w", encoding="utf-8") as file:
            file.write(page)
        height = screenshot(chromium, page_path, args.png, args.width, args.scale)
    print(f"render-trace-html: wrote {args.png} ({args.width}x{height} CSS px)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
