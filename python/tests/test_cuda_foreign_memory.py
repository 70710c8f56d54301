"""Foreign device memory as DEVICE tensors (Context.register) on CUDA. The producer is a second
context on the same device: its device array is a DLPack producer of CUDA memory that replayrt
did not allocate for the registering context, as a torch CUDA tensor's storage would be.
CI runs these on FakeCuda (conftest.py)."""

import gc
import weakref

import numpy as np
import pytest

import replayrt
from callables import matmuls, scale
from dlpack_capsule import describe
from threads import turns_taken_while

pytestmark = pytest.mark.cuda

N = 16


def scaling_context(factor):
    """A kernel-mode CUDA context with y = factor * x prepared, and its x filled with 0..N-1."""
    ctx = replayrt.Context("cuda")
    step = scale(N, factor)
    ctx.kernel_init([step])
    callable_ = ctx.prepare(step)
    x = ctx.empty([N], "float32")
    x.upload(np.arange(N, dtype=np.float32))
    return ctx, callable_, x


def test_another_contexts_array_is_registered_and_a_kernel_writes_it_in_place():
    producer = replayrt.Context("cuda")
    foreign = producer.empty([N], "float32")
    ctx, callable_, x = scaling_context(3.0)
    # Not the registering context's allocation, so not an overlap with memory it tracks.
    with ctx.register(foreign) as y:
        assert isinstance(y, replayrt.DeviceArray) and isinstance(y, replayrt.RegisteredArray)
        assert y.source is foreign and not y.closed
        assert (y.shape, y.dtype, y.nbytes) == ((N,), np.float32, foreign.nbytes)
        described = f"shape=({N},), dtype=float32, device='cuda:0', closed=False"
        assert repr(y) == f"replayrt.RegisteredArray({described})"
        assert y.__dlpack_device__() == (2, 0)
        # The same memory, not a copy: both export one address.
        assert describe(y.__dlpack__())["data"] == describe(foreign.__dlpack__())["data"]
        stream = ctx.stream()
        ctx.launch(callable_, [x, y], stream)
        stream.synchronize()
        expected = 3.0 * np.arange(N, dtype=np.float32)
        np.testing.assert_array_equal(foreign.numpy(), expected)  # the producer sees the write
        np.testing.assert_array_equal(y.numpy(), expected)
        # Copies into it, immediate and queued, land in the producer's memory too.
        y.upload(np.full(N, 4.0, dtype=np.float32))
        np.testing.assert_array_equal(foreign.numpy(), np.full(N, 4.0))
        stream.upload(y, np.full(N, 5.0, dtype=np.float32))
        stream.synchronize()
        np.testing.assert_array_equal(foreign.numpy(), np.full(N, 5.0))
    assert y.closed
    assert repr(y).endswith(", closed=True)")


def test_a_program_mode_run_takes_a_registered_array_as_a_device_tensor():
    producer = replayrt.Context("cuda")
    foreign = producer.empty([N], "float32")
    ctx = replayrt.Context("cuda")
    ctx.program_init()
    callable_ = ctx.prepare(scale(N, 0.5))
    with ctx.register(foreign) as y:
        ctx.run(callable_, [np.arange(N, dtype=np.float32), y])
    np.testing.assert_array_equal(foreign.numpy(), 0.5 * np.arange(N, dtype=np.float32))


def registered_beside_a_slow_run():
    """A program-mode CUDA context with another context's array registered, and a launched run
    of matmuls(768, 1) queued on the context's stream, which the end of a registration waits
    for."""
    producer = replayrt.Context("cuda")
    ctx = replayrt.Context("cuda")
    ctx.program_init()
    y = ctx.register(producer.empty([N], "float32"))
    n = 768
    a = np.full((n, n), 1.0 / n, dtype=np.float32)
    callable_ = ctx.prepare(matmuls(n, 1))
    run = ctx.prepare_run(callable_, [a, np.eye(n, dtype=np.float32), np.zeros_like(a)])
    run.launch()
    return ctx, run, y


@pytest.mark.parametrize("end", ["close", "__exit__"])
def test_closing_a_registration_lets_other_threads_run_while_it_waits_for_queued_work(end):
    _, run, y = registered_beside_a_slow_run()
    call = y.close if end == "close" else lambda: y.__exit__(None, None, None)
    assert turns_taken_while(call) >= 10
    assert y.closed
    with pytest.raises(ValueError, match="closed"):
        y.numpy()
    run.finalize()


def test_dropping_a_registered_array_lets_other_threads_run_while_it_waits_for_queued_work():
    _, run, y = registered_beside_a_slow_run()
    arrays = [y]
    del y
    assert turns_taken_while(arrays.clear) >= 10
    run.finalize()


def test_closing_the_registration_makes_a_graph_that_captured_it_stale():
    producer = replayrt.Context("cuda")
    foreign = producer.empty([N], "float32")
    ctx, callable_, x = scaling_context(2.0)
    y = ctx.register(foreign)
    stream = ctx.stream()
    with stream.capture() as graph:
        ctx.launch(callable_, [x, y], stream)
    graph.replay(stream)
    stream.synchronize()
    np.testing.assert_array_equal(foreign.numpy(), 2.0 * np.arange(N, dtype=np.float32))
    y.close()
    y.close()  # closing again does nothing
    with pytest.raises(replayrt.StaleAddressError, match="no longer"):
        graph.replay(stream)
    assert ctx.stats()["stale_address_refusals"] == 1
    # A closed registration is no operand and no memory to copy: a ValueError, as for a
    # closed file.
    with pytest.raises(ValueError, match="closed"):
        y.numpy()
    with pytest.raises(ValueError, match="closed"):
        ctx.launch(callable_, [x, y], stream)
    with pytest.raises(ValueError, match="closed"):
        y.__dlpack__()
    # The memory can be registered again.
    with ctx.register(foreign) as again:
        assert not again.closed


def test_a_graph_keeps_the_registered_array_and_its_producer_alive():
    producer = replayrt.Context("cuda")
    ctx, callable_, x = scaling_context(2.0)
    foreign = producer.empty([N], "float32")
    held_producer = weakref.ref(foreign)
    y = ctx.register(foreign)
    held_registration = weakref.ref(y)
    stream = ctx.stream()
    with stream.capture() as graph:
        ctx.launch(callable_, [x, y], stream)
    del foreign, y
    gc.collect()
    assert held_registration() is not None, "the graph let go of a registered array it uses"
    assert held_producer() is not None, "the registration let go of its producer"
    x.upload(np.full(N, 7.0, dtype=np.float32))
    graph.replay(stream)
    stream.synchronize()
    np.testing.assert_array_equal(held_producer().numpy(), np.full(N, 14.0))
    del graph
    gc.collect()
    assert held_registration() is None and held_producer() is None


def test_memory_the_context_tracks_or_that_is_not_device_memory_is_refused():
    producer = replayrt.Context("cuda")
    foreign = producer.empty([N], "float32")
    ctx, _, x = scaling_context(1.0)
    with pytest.raises(replayrt.InvalidArgumentError, match="overlaps"):
        ctx.register(x)  # its own allocation
    with ctx.register(foreign):
        with pytest.raises(replayrt.InvalidArgumentError, match="overlaps"):
            ctx.register(foreign)  # registered already
    with pytest.raises(replayrt.InvalidArgumentError, match="not device memory"):
        ctx.register(np.zeros(N, dtype=np.float32))  # host memory
    with pytest.raises(TypeError, match="DLPack producer"):
        ctx.register([0.0] * N)


def test_a_registered_array_keeps_the_producers_shape_and_dtype_and_refuses_strided_tensors():
    producer = replayrt.Context("cuda")
    ctx = replayrt.Context("cuda")
    with ctx.register(producer.empty([2, 3, 4], "int64")) as array:
        assert (array.shape, array.dtype, array.nbytes) == ((2, 3, 4), np.int64, 2 * 3 * 4 * 8)
        array.upload(np.arange(24, dtype=np.int64).reshape(2, 3, 4))
        np.testing.assert_array_equal(array.numpy(), np.arange(24).reshape(2, 3, 4))

    # The layout is checked before the memory: a transposed numpy view is refused as strided.
    with pytest.raises(TypeError, match="C-contiguous"):
        ctx.register(np.zeros((4, 4), dtype=np.float32).T)
