"""Program-mode runs step by step (ctx.prepare_run), and which host arrays a run may take."""

import numpy as np
import pytest

import replayrt
from callables import axpy


def program_axpy(n, factor, profiling=False):
    ctx = replayrt.Context(profiling=profiling)
    ctx.program_init()
    return ctx, ctx.prepare(axpy(n, factor))


def test_a_prepared_run_launches_waits_reports_its_profile_and_finalizes():
    ctx, callable_ = program_axpy(32, 3.0, profiling=True)
    x = np.arange(32, dtype=np.float32)
    y = np.zeros(32, dtype=np.float32)
    run = ctx.prepare_run(callable_, [x, y])
    run.launch(ctx.stream())
    run.wait()
    assert sorted(run.profile()["task"].tolist()) == [0, 1]
    run.finalize()
    np.testing.assert_array_equal(y, 3.0 * x + x)


def test_a_run_on_the_slots_own_stream_and_a_second_one_after_it():
    ctx, callable_ = program_axpy(16, 2.0)
    for start in (0.0, 100.0):
        x = np.arange(start, start + 16, dtype=np.float32)
        y = np.zeros(16, dtype=np.float32)
        run = ctx.prepare_run(callable_, [x, y])
        run.launch()
        run.wait()
        run.finalize()
        np.testing.assert_array_equal(y, 2.0 * x + x)


def test_a_read_only_array_is_taken_for_an_in_parameter_only():
    ctx, callable_ = program_axpy(8, 2.0)
    x = np.arange(8, dtype=np.float32)
    x.flags.writeable = False
    y = np.zeros(8, dtype=np.float32)
    ctx.run(callable_, [x, y])
    np.testing.assert_array_equal(y, 2.0 * x + x)

    y.flags.writeable = False
    with pytest.raises(TypeError, match="parameter 1 is written"):
        ctx.run(callable_, [x, y])
