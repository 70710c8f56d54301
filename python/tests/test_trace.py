"""A timeline of host calls and replays (replayrt.Trace) as Chrome trace-event JSON."""

import json

import numpy as np
import pytest

import replayrt
from callables import axpy


def span_ns(event):
    """An event's [start, end) in integer nanoseconds (the file has microseconds, 3 decimals)."""
    start = round(event["ts"] * 1000)
    return start, start + round(event["dur"] * 1000)


def replayed_axpy(ctx):
    step = axpy(64, 2.0)
    ctx.kernel_init([step])
    callable_ = ctx.prepare(step)
    x, y = ctx.empty([64]), ctx.empty([64])
    x.upload(np.ones(64, dtype=np.float32))
    stream = ctx.stream()
    with stream.capture() as graph:
        ctx.launch(callable_, [x, y], stream)
    return step, callable_, stream, graph


def test_replays_become_named_tasks_inside_launches_inside_each_replay(tmp_path):
    ctx = replayrt.Context(profiling=True)
    step, callable_, stream, graph = replayed_axpy(ctx)
    trace = replayrt.Trace()
    trace.name_callable(callable_, "axpy", step)
    for i in range(3):
        with trace.host("replay"):
            graph.replay(stream)
        with trace.host("synchronize"):
            stream.synchronize()
        trace.add_device_work(ctx, f"replay {i}", [callable_])
    path = tmp_path / "axpy.trace.json"
    trace.write(path)  # a path-like, or a str
    with pytest.raises(FileNotFoundError):
        trace.write(tmp_path / "no such directory" / "axpy.trace.json")

    events = json.loads(path.read_text())["traceEvents"]
    slices = [e for e in events if e["ph"] == "X"]
    tasks = [e for e in slices if e["cat"] == "task"]
    assert sorted({e["name"] for e in tasks}) == ["axpy/0 scale", "axpy/1 add"]
    assert len(tasks) == 6
    assert [e["name"] for e in slices if e["cat"] == "host"].count("replay") == 3
    for task in tasks:
        start, end = span_ns(task)
        launch = [e for e in slices if e["cat"] == "launch" and e["tid"] == task["tid"]
                  and span_ns(e)[0] <= start and end <= span_ns(e)[1]]
        assert launch and launch[0]["name"] == "axpy"
    assert trace.slice_count == len(slices)


def test_a_profile_array_is_device_work_and_a_wrong_split_is_refused():
    ctx = replayrt.Context(profiling=True)
    _, callable_, stream, graph = replayed_axpy(ctx)
    graph.replay(stream)
    stream.synchronize()
    trace = replayrt.Trace()
    with pytest.raises(ValueError, match="2 were named"):
        trace.add_device_work("replay", [callable_, callable_], ctx.profile())
    assert trace.slice_count == 0
    trace.add_device_work("replay", [callable_], ctx.profile())
    assert "callable %d/1" % callable_.id in trace.json()


def test_a_host_slice_is_recorded_when_its_block_raises():
    trace = replayrt.Trace()
    with pytest.raises(KeyError):
        with trace.host("failing"):
            raise KeyError("no")
    assert trace.slice_count == 1
