"""Program-mode runs step by step (ctx.prepare_run), and which host arrays a run may take."""

import threading
import time

import numpy as np
import pytest

import replayrt
from callables import axpy, matmuls
from threads import turns_taken_while


def launched_slow_run(n=768):
    """A program-mode context and a launched run of matmuls(n, 1) on the slot's stream."""
    ctx = replayrt.Context()
    ctx.program_init()
    callable_ = ctx.prepare(matmuls(n, 1))
    a = np.full((n, n), 1.0 / n, dtype=np.float32)
    run = ctx.prepare_run(callable_, [a, np.eye(n, dtype=np.float32), np.zeros_like(a)])
    run.launch()
    return ctx, run


def test_finalizing_a_run_lets_other_threads_run_while_it_waits_for_the_runs_work():
    _, run = launched_slow_run()
    assert turns_taken_while(run.finalize) >= 10


def test_dropping_a_run_lets_other_threads_run_while_it_waits_for_the_runs_work():
    _, run = launched_slow_run()
    runs = [run]
    del run
    assert turns_taken_while(runs.clear) >= 10


def test_a_run_finalized_while_another_thread_waits_on_it_is_finalized_once_and_safely():
    for _ in range(3):
        _, run = launched_slow_run(512)
        outcome = []

        def wait():
            try:
                run.wait()
                outcome.append("waited")
            except replayrt.Error as error:  # the finalize came first
                outcome.append(error)

        waiter = threading.Thread(target=wait)
        waiter.start()
        time.sleep(0.01)
        run.finalize()
        waiter.join()
        assert len(outcome) == 1
        run.finalize()  # a finalized run's finalize does nothing


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


def test_a_finalized_run_refuses_launch_wait_and_profile_saying_it_was_finalized():
    ctx, callable_ = program_axpy(8, 2.0)
    run = ctx.prepare_run(callable_, [np.zeros(8, np.float32), np.zeros(8, np.float32)])
    run.launch()
    run.finalize()
    for call in (run.launch, lambda: run.launch(ctx.stream()), run.wait, run.profile):
        with pytest.raises(replayrt.InvalidArgumentError, match="the run was finalized"):
            call()


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


def test_leaving_a_context_with_block_finalizes_it_and_its_later_calls_are_refused():
    x = np.ones(4, dtype=np.float32)
    y = np.zeros(4, dtype=np.float32)
    with replayrt.Context() as ctx:
        ctx.program_init()
        callable_ = ctx.prepare(axpy(4, 2.0))
        ctx.run(callable_, [x, y])
        array = ctx.empty([4], "float32")
    np.testing.assert_array_equal(y, np.full(4, 3.0))
    with pytest.raises(replayrt.InvalidStateError, match="finalized"):
        ctx.run(callable_, [x, y])
    ctx.finalize()  # again: nothing more
    array.upload(x)  # a DeviceArray outlives the finalize
    np.testing.assert_array_equal(array.numpy(), x)


def test_finalize_raises_a_kernel_failure_still_pending_and_finalizes_all_the_same():
    b = replayrt.CallableBuilder()
    imm = replayrt.Operand.immediate
    table, ids = b.param("table", [2, 2]), b.param("ids", [1], dtype="int32")
    out = b.param("out", [1, 2], direction="out")
    b.task("embedding", [table, ids, out, imm(2), imm(2), imm(1), imm(0)])
    with pytest.raises(replayrt.KernelFailedError, match="code 8"):  # id 5 is outside [0, 2)
        with replayrt.Context() as ctx:
            ctx.program_init()
            args = [np.ones((2, 2), np.float32), np.array([5], np.int32), np.zeros((1, 2), np.float32)]
            stream = ctx.stream()
            run = ctx.prepare_run(ctx.prepare(b), args)
            run.launch(stream)  # both held: dropping either would consume the failure
    with pytest.raises(replayrt.InvalidStateError, match="finalized"):
        ctx.prepare(b)


def test_finalizing_a_context_lets_other_threads_run_while_it_waits_for_its_work():
    ctx, run = launched_slow_run()
    assert turns_taken_while(ctx.finalize) >= 10
    del run
