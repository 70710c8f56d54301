#!/usr/bin/env python3
"""Checks scripts/render-trace-html.py (without --png) on a trace written by rrt::Trace.

    check_trace_html.py TRACE --script scripts/render-trace-html.py

Passes (exit 0) when:
- the page for the whole trace holds exactly one trace-data element, whose JSON has the same
  traceEvents as TRACE, event for event, and no window;
- the page loads nothing from elsewhere: no src, href, @import or url( outside the inlined data;
- with --work naming TRACE's second work slice, the inlined window encloses that slice and the
  inlined events are TRACE's metadata events and exactly the slices with time in the window;
- a slice whose name holds "</script>" and "<!--" comes back unchanged, and the page never
  holds those strings outside the viewer's own markup;
- an unknown --work name fails with a message naming it, and --png with a Chromium that is not
  there exits 2 with a message naming Chromium, after writing --out.
Prints what is wrong and exits 1 otherwise.
"""

import argparse
import html.parser
import json
import os
import subprocess
import sys
import tempfile

HOSTILE_NAME = "</script><script>alert(1)</script><!-- x"


class DataElements(html.parser.HTMLParser):
    """The text of every <script id="trace-data"> element, and the page's src and href
    attributes."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.data = []
        self.links = []
        self._inside = False

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        self.links.extend(f"{tag} {name}={value}" for name, value in attrs
                          if name in ("src", "href"))
        if tag == "script" and attributes.get("id") == "trace-data":
            self._inside = True
            self.data.append("")

    def handle_endtag(self, tag):
        if tag == "script":
            self._inside = False

    def handle_data(self, data):
        if self._inside:
            self.data[-1] += data


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace")
    parser.add_argument("--script", required=True, help="scripts/render-trace-html.py")
    return parser.parse_args()


def render(script, trace, out, *extra):
    return subprocess.run([sys.executable, script, trace, "--out", out, *extra],
                          capture_output=True, text=True, timeout=120, check=False)


def page_of(script, trace, directory, *extra):
    """(page text, inlined data, problems) for one rendering."""
    out = os.path.join(directory, "page.html")
    if os.path.exists(out):
        os.remove(out)
    result = render(script, trace, out, *extra)
    if result.returncode != 0:
        return None, None, [f"{' '.join(extra) or 'whole trace'}: exit {result.returncode}: "
                            f"{result.stdout}{result.stderr}"]
    with open(out, encoding="utf-8") as file:
        page = file.read()
    parser = DataElements()
    parser.feed(page)
    parser.close()
    problems = [f"the page links to {link}" for link in parser.links]
    if len(parser.data) != 1:
        return page, None, problems + [f"{len(parser.data)} trace-data elements, expected 1"]
    try:
        data = json.loads(parser.data[0])
    except ValueError as error:
        return page, None, problems + [f"the trace-data element is not JSON: {error}"]
    outside = page.replace(parser.data[0], "")
    for needle in ("@import", "url("):
        if needle in outside:
            problems.append(f"the page holds {needle}")
    return page, data, problems


def overlaps(event, window):
    return event["ts"] < window[1] and event["ts"] + event["dur"] > window[0]


def check_whole(script, trace, events, directory):
    _, data, problems = page_of(script, trace, directory)
    if data is None:
        return problems
    if data.get("traceEvents") != events:
        problems.append("the inlined traceEvents differ from the trace's "
                        f"({len(data.get('traceEvents') or [])} vs {len(events)} events)")
    if data.get("window") is not None:
        problems.append(f"a window without --work: {data.get('window')}")
    return problems


def check_window(script, trace, events, directory):
    works = sorted((e for e in events if e.get("ph") == "X" and e.get("cat") == "work"),
                   key=lambda e: e["ts"])
    if len(works) < 2:
        return [f"the trace has {len(works)} work slices; the check needs two"]
    work = works[1]
    _, data, problems = page_of(script, trace, directory, "--work", work["name"])
    if data is None:
        return problems
    window = data.get("window")
    if not (isinstance(window, list) and len(window) == 2 and window[0] <= work["ts"] and
            work["ts"] + work["dur"] <= window[1]):
        return problems + [f"window {window} does not enclose '{work['name']}'"]
    expected = [e for e in events if e.get("ph") != "X" or overlaps(e, window)]
    inlined = data.get("traceEvents")
    if inlined != expected:
        problems.append(f"--work '{work['name']}': {len(inlined or [])} events inlined, "
                        f"expected the {len(expected)} in the window {window}")
    if work not in (inlined or []):
        problems.append(f"--work '{work['name']}': the work slice itself is not inlined")
    if len(expected) == len(events):
        problems.append(f"--work '{work['name']}': the window holds the whole trace")
    return problems


def check_hostile_name(script, directory):
    events = [
        {"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "host"}},
        {"ph": "M", "pid": 1, "tid": 0, "name": "thread_name", "args": {"name": "host thread 0"}},
        {"ph": "X", "pid": 1, "tid": 0, "cat": "host", "name": HOSTILE_NAME, "ts": 1.5,
         "dur": 2.25},
    ]
    trace = os.path.join(directory, "hostile.trace.json")
    with open(trace, "w", encoding="utf-8") as file:
        json.dump({"traceEvents": events}, file)
    page, data, problems = page_of(script, trace, directory)
    if data is None:
        return problems
    if data.get("traceEvents") != events:
        problems.append("a slice named with </script> and <!-- does not come back unchanged")
    if "<script>alert" in page or "<!-- x" in page:
        problems.append("the page holds a slice name's markup unescaped")
    return problems


def check_failures(script, trace, directory):
    problems = []
    out = os.path.join(directory, "refused.html")
    result = render(script, trace, out, "--work", "no such work 12345")
    if result.returncode == 0 or "no such work 12345" not in result.stdout + result.stderr:
        problems.append(f"an unknown --work name: exit {result.returncode}, "
                        f"output {result.stdout + result.stderr!r}")
    png = os.path.join(directory, "never.png")
    result = render(script, trace, out, "--png", png,
                    "--chromium", os.path.join(directory, "no-chromium-here"))
    if result.returncode != 2 or "Chromium" not in result.stderr:
        problems.append(f"--png without Chromium: exit {result.returncode}, "
                        f"stderr {result.stderr!r}")
    if not os.path.exists(out) or os.path.exists(png):
        problems.append("--png without Chromium: --out not written, or a PNG written")
    return problems


def main():
    args = parse_args()
    with open(args.trace, encoding="utf-8") as file:
        events = json.load(file)["traceEvents"]
    with tempfile.TemporaryDirectory(prefix="check-trace-html-") as directory:
        problems = (check_whole(args.script, args.trace, events, directory) +
                    check_window(args.script, args.trace, events, directory) +
                    check_hostile_name(args.script, directory) +
                    check_failures(args.script, args.trace, directory))
    for problem in problems:
        print(f"check_trace_html: {problem}")
    if problems:
        print(f"check_trace_html: {args.trace}: {len(problems)} problems")
        return 1
    print(f"check_trace_html: {args.trace}: {len(events)} events inlined and read back, ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
