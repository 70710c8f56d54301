"""Statistics come as a dict of the C counters, profiles as a numpy structured array."""

import numpy as np

import replayrt
from callables import axpy


def test_a_replay_reports_its_task_timings_and_counts():
    ctx = replayrt.Context(profiling=True)
    step = axpy(32, 3.0)
    ctx.kernel_init([step])
    callable_ = ctx.prepare(step)
    x, y = ctx.empty([32]), ctx.empty([32])
    stream = ctx.stream()
    with stream.capture() as graph:
        ctx.launch(callable_, [x, y], stream)
    graph.replay(stream)
    stream.synchronize()
    profile = ctx.profile()
    assert profile.dtype.names == ("start_ns", "end_ns", "task", "worker")
    assert sorted(profile["task"].tolist()) == [0, 1]
    assert np.all(profile["end_ns"] >= profile["start_ns"])
    stats = ctx.stats()
    assert stats["replays"] == 1
    assert stats["live_bytes"] <= stats["peak_bytes"]
    names = [replayrt._replayrt._growth_point_name(point) for point in range(8)]
    assert stats["refusals"] == {name: 0 for name in names}  # one counter per growth point
