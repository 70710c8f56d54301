"""A wrapper lets go of the host arrays its queued work reads and writes only after its C
handle waited for that work."""

import gc
import threading
import time
import weakref

import numpy as np

import replayrt
from callables import scale


def test_a_dropped_stream_waits_for_its_work_before_it_lets_go_of_its_arrays():
    n = 1 << 22
    ctx = replayrt.Context()
    step = scale(n, 2.0)
    ctx.kernel_init([step])
    callable_ = ctx.prepare(step)
    stream = ctx.stream()
    done = ctx.event()
    x = np.ones(n, dtype=np.float32)
    y = np.zeros(n, dtype=np.float32)
    done_when_released = []
    released = weakref.ref(y, lambda _: done_when_released.append(done.query()))
    for _ in range(8):
        ctx.launch(callable_, [x, y], stream)
    stream.record(done)
    del y
    assert released() is not None  # the stream holds it
    del stream
    gc.collect()
    assert done_when_released == [True]


def test_synchronize_keeps_the_arrays_of_work_another_thread_queued_while_it_waited():
    n = 1 << 22
    ctx = replayrt.Context()
    step = scale(n, 2.0)
    ctx.kernel_init([step])
    callable_ = ctx.prepare(step)
    stream = ctx.stream()
    x = np.ones(n, dtype=np.float32)
    for _ in range(16):
        ctx.launch(callable_, [x, np.zeros(n, dtype=np.float32)], stream)
    waiter = threading.Thread(target=stream.synchronize)
    waiter.start()
    time.sleep(0.01)  # the waiter is in synchronize, without the GIL
    done = ctx.event()
    y = np.zeros(n, dtype=np.float32)
    done_when_released = []
    released = weakref.ref(y, lambda _: done_when_released.append(done.query()))
    for _ in range(16):
        ctx.launch(callable_, [x, y], stream)
    stream.record(done)
    del y
    waiter.join()
    gc.collect()
    assert released() is not None or done_when_released == [True], (
        "synchronize let go of an array of work queued after it began waiting, before that work ran"
    )
    stream.synchronize()
    gc.collect()
    assert released() is None
    assert done_when_released == [True]
