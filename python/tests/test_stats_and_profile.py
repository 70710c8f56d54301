"""Statistics come as a dict of the C counters, profiles as a numpy structured array."""

import numpy as np

import replayrt


def two_tasks(n):
    b = replayrt.CallableBuilder()
    x = b.param("x", [n])
    y = b.param("y", [n], direction="out")
    scaled = b.intermediate("scaled", [n])
    b.task("scale", [x, scaled, replayrt.Operand.immediate_f32(3.0)])
    b.task("add", [scaled, x, y])
    return b


def test_a_replay_reports_its_task_timings_and_counts():
    ctx = replayrt.Context(profiling=True)
    step = two_tasks(32)
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
    assert stats["refusals"] and sum(stats["refusals"]) == 0  # one counter per growth point
