"""A wrapper lets go of the host arrays its queued work reads and writes only after its C
handle waited for that work."""

import gc
import threading
import time
import weakref

import numpy as np

import replayrt
from callables import matmuls, scale
from threads import turns_taken_while


N = 1 << 22


def kernel_mode_scale():
    """A kernel-mode context with y = 2x over N floats prepared, and a stream."""
    ctx = replayrt.Context()
    step = scale(N, 2.0)
    ctx.kernel_init([step])
    return ctx, ctx.prepare(step), ctx.stream()


def launches_into_a_tracked_array(ctx, callable_, stream, x, launches):
    """Queues `launches` launches writing a fresh array, then an event after them; returns the
    event, a weak reference to the array (the only reference left), and the list its callback
    fills with whether the event was done when the array was let go."""
    done = ctx.event()
    y = np.zeros(N, dtype=np.float32)
    done_when_released = []
    released = weakref.ref(y, lambda _: done_when_released.append(done.query()))
    for _ in range(launches):
        ctx.launch(callable_, [x, y], stream)
    stream.record(done)
    return released, done_when_released


def test_a_dropped_stream_waits_for_its_work_before_it_lets_go_of_its_arrays():
    ctx, callable_, stream = kernel_mode_scale()
    x = np.ones(N, dtype=np.float32)
    released, done_when_released = launches_into_a_tracked_array(ctx, callable_, stream, x, 8)
    assert released() is not None  # the stream holds it
    del stream
    gc.collect()
    assert done_when_released == [True]


def test_dropping_a_stream_lets_other_threads_run_while_it_waits_for_its_work():
    ctx = replayrt.Context()
    step = matmuls(768, 1)
    ctx.kernel_init([step])
    callable_ = ctx.prepare(step)
    stream = ctx.stream()
    a = np.full((768, 768), 1.0 / 768, dtype=np.float32)
    ctx.launch(callable_, [a, np.eye(768, dtype=np.float32), np.zeros_like(a)], stream)
    streams = [stream]
    del stream
    assert turns_taken_while(streams.clear) >= 10


def test_synchronize_keeps_the_arrays_of_work_another_thread_queued_while_it_waited():
    ctx, callable_, stream = kernel_mode_scale()
    x = np.ones(N, dtype=np.float32)
    for _ in range(16):
        ctx.launch(callable_, [x, np.zeros(N, dtype=np.float32)], stream)
    waiter = threading.Thread(target=stream.synchronize)
    waiter.start()
    time.sleep(0.01)  # the waiter is in synchronize, without the GIL
    released, done_when_released = launches_into_a_tracked_array(ctx, callable_, stream, x, 16)
    waiter.join()
    gc.collect()
    assert released() is not None or done_when_released == [True], (
        "synchronize let go of an array of work queued after it began waiting, before that work ran"
    )
    stream.synchronize()
    gc.collect()
    assert released() is None
    assert done_when_released == [True]
