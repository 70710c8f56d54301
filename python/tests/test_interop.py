"""numpy and torch see device arrays through DLPack without a copy, and a graph keeps the host
arrays its capture read alive for every replay."""

import gc
import weakref

import numpy as np
import pytest
import torch
import torch.utils.dlpack

import replayrt
from callables import scale


def test_numpy_views_a_device_array_through_dlpack_without_a_copy():
    ctx = replayrt.Context()
    ctx.program_init()
    array = ctx.empty([2, 3], np.float32)
    assert array.__dlpack_device__() == (1, 0)  # kDLCPU: the simulator's memory is the host's
    array.upload(np.arange(6, dtype=np.float32).reshape(2, 3))
    view = np.from_dlpack(array)
    assert view.shape == (2, 3) and view.dtype == np.float32
    np.testing.assert_array_equal(view, np.arange(6).reshape(2, 3))
    array.upload(np.full((2, 3), 7, dtype=np.float32))
    np.testing.assert_array_equal(view, np.full((2, 3), 7))  # the same memory
    del array
    gc.collect()
    np.testing.assert_array_equal(view, np.full((2, 3), 7))  # the view holds the buffer


def test_dlpack_export_takes_the_standards_keywords_and_never_copies():
    ctx = replayrt.Context()
    ctx.program_init()
    array = ctx.empty([4], np.float32)
    array.upload(np.arange(4, dtype=np.float32))
    # A consumer that asks for DLPack 1.x gets the unversioned capsule, which it must accept.
    view = torch.utils.dlpack.from_dlpack(array.__dlpack__(max_version=(1, 0)))
    assert torch.equal(view, torch.arange(4, dtype=torch.float32))
    view = torch.utils.dlpack.from_dlpack(array.__dlpack__(dl_device=(1, 0), copy=False))
    assert torch.equal(view, torch.arange(4, dtype=torch.float32))
    with pytest.raises(BufferError, match="never copies"):
        array.__dlpack__(copy=True)
    with pytest.raises(BufferError, match=r"device \(2, 0\)"):
        array.__dlpack__(dl_device=(2, 0))
    with pytest.raises(BufferError, match="stream"):
        array.__dlpack__(stream=1)


def test_torch_views_a_device_array_through_dlpack_and_sees_a_replay_write_it():
    ctx = replayrt.Context()
    step = scale(8, 2.0)
    ctx.kernel_init([step])
    callable_ = ctx.prepare(step)
    x = ctx.empty([8], "float32")
    y = ctx.empty([8], "float32")
    y_torch = torch.utils.dlpack.from_dlpack(y)
    assert y_torch.dtype == torch.float32 and tuple(y_torch.shape) == (8,)
    stream = ctx.stream()
    with stream.capture() as graph:
        ctx.launch(callable_, [x, y], stream)
    for start in (0.0, 10.0):
        x.upload(np.arange(start, start + 8, dtype=np.float32))
        graph.replay(stream)
        stream.synchronize()
        assert torch.equal(y_torch, 2 * torch.arange(start, start + 8, dtype=torch.float32))


def host_input_and_device_output(ctx):
    """An 8-float host input, a weak reference to it, an 8-float device output and a stream."""
    host_in = np.arange(8, dtype=np.float32)
    return host_in, weakref.ref(host_in), ctx.empty([8], "float32"), ctx.stream()


def expect_replays_read_the_held_array(held, graph, stream, y):
    """The host array behind `held` (no other reference left) is alive, and a replay of
    `graph` (y = 2x) reads what it holds now."""
    gc.collect()
    assert held() is not None, "the graph let go of a host array its replays read"
    held()[:] = 5.0
    graph.replay(stream)
    stream.synchronize()
    np.testing.assert_array_equal(y.numpy(), np.full(8, 10.0))


def test_a_graph_keeps_the_host_arrays_its_capture_read_alive():
    ctx = replayrt.Context()
    step = scale(8, 2.0)
    ctx.kernel_init([step])
    callable_ = ctx.prepare(step)
    host_in, held, y, stream = host_input_and_device_output(ctx)
    with stream.capture() as graph:
        ctx.launch(callable_, [host_in, y], stream)
    del host_in
    expect_replays_read_the_held_array(held, graph, stream, y)
    del graph
    gc.collect()
    assert held() is None, "the host array outlived the graph that read it"


def test_a_graph_keeps_the_arguments_of_a_run_it_captured_alive():
    ctx = replayrt.Context()
    ctx.program_init()
    callable_ = ctx.prepare(scale(8, 2.0))
    host_in, held, y, stream = host_input_and_device_output(ctx)
    with stream.capture() as graph:
        run = ctx.prepare_run(callable_, [host_in, y])
        run.launch(stream)
    run.wait()
    run.finalize()
    del run, host_in
    expect_replays_read_the_held_array(held, graph, stream, y)
    del graph
    stream.synchronize()
    gc.collect()
    assert held() is None, "the host array outlived the graph that read it"


def test_a_run_writes_a_cpu_torch_tensor_in_place_and_refuses_a_list():
    ctx = replayrt.Context()
    ctx.program_init()
    callable_ = ctx.prepare(scale(4, 2.0))
    x = torch.arange(4, dtype=torch.float32)
    y = torch.zeros(4, dtype=torch.float32)
    ctx.run(callable_, [x, y])
    assert torch.equal(y, 2 * x)
    with pytest.raises(TypeError, match="without a copy"):
        ctx.run(callable_, [x, [0.0, 0.0, 0.0, 0.0]])


def test_a_bfloat16_torch_tensor_is_a_host_tensor_through_dlpack_without_a_copy():
    ctx = replayrt.Context()
    ctx.program_init()
    b = replayrt.CallableBuilder()
    imm = replayrt.Operand.immediate
    table = b.param("table", [3, 2], dtype="bfloat16")
    ids = b.param("ids", [2], dtype="int32")
    out = b.param("out", [2, 2], direction="out")
    b.task("embedding", [table, ids, out, imm(3), imm(2), imm(2), imm(2)])  # 2: RRT_DTYPE_BF16
    callable_ = ctx.prepare(b)
    weights = torch.tensor([[1.5, -2.0], [0.25, 3.0], [-1.0, 8.0]], dtype=torch.bfloat16)
    rows = torch.zeros(2, 2)
    ctx.run(callable_, [weights, torch.tensor([2, 0], dtype=torch.int32), rows])
    assert torch.equal(rows, weights.float()[[2, 0]])
    with pytest.raises(TypeError, match="is bfloat16"):  # its parameter's dtype is still checked
        ctx.run(callable_, [weights.float(), torch.tensor([2, 0], dtype=torch.int32), rows])
    with pytest.raises(TypeError, match="not C-contiguous"):
        ctx.run(callable_, [weights.t(), torch.tensor([2, 0], dtype=torch.int32), rows])
    table_on_device = ctx.empty([3, 2], "bfloat16")  # uint16, its bits
    table_on_device.upload(weights.t().contiguous().t())  # a strided view uploads as a copy
    rows.zero_()
    ctx.run(callable_, [table_on_device, torch.tensor([1, 2], dtype=torch.int32), rows])
    assert table_on_device.dtype == np.uint16
    assert torch.equal(rows, weights.float()[[1, 2]])


@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")
def test_a_tensor_numpy_cannot_view_is_refused_unless_it_is_bfloat16_without_lazy_bits():
    ctx = replayrt.Context()
    ctx.program_init()
    callable_ = ctx.prepare(scale(4, 2.0))
    y = torch.zeros(4)
    refused = [
        (torch.arange(1.0, 5.0)._neg_view(), "is_neg"),  # DLPack would drop the negation
        (torch.zeros(4, dtype=torch.complex32), "not bfloat16"),
        (torch.zeros(4, dtype=torch.bfloat16)._neg_view(), "is_neg"),
    ]
    for x, reason in refused:
        with pytest.raises(TypeError, match=f"parameter 0: .*{reason}"):
            ctx.run(callable_, [x, y])
    with pytest.raises(TypeError, match="parameter 1: .*is_neg"):
        ctx.run(callable_, [torch.ones(4), torch.zeros(4)._neg_view()])
    with pytest.raises(ValueError, match="parameter 0: this Tensor holds no elements"):
        ctx.run(callable_, [torch.empty(0), y])

    class BadDevice:
        def __array__(self):
            raise TypeError("no numpy view")

        def __dlpack_device__(self):
            return "garbage"

        def __dlpack__(self, stream=None):
            raise AssertionError("read before its device")

    with pytest.raises(TypeError, match="__dlpack_device__.. is 'garbage'"):
        ctx.run(callable_, [BadDevice(), y])
    assert torch.equal(y, torch.zeros(4))


def test_a_simulator_array_is_cpu_memory_to_dlpack_whatever_the_contexts_device_id():
    ctx = replayrt.Context("sim", device=3)
    assert (ctx.platform, ctx.device) == ("sim", 3)
    ctx.program_init()
    array = ctx.empty([4], "float32")
    assert array.__dlpack_device__() == (1, 0)  # kDLCPU has the one device 0
    assert np.from_dlpack(array).shape == (4,)  # numpy takes it


def test_contexts_and_device_arrays_describe_themselves():
    ctx = replayrt.Context("sim", device=3)
    assert repr(ctx) == "replayrt.Context(platform='sim', device=3)"
    ctx.program_init()
    array = ctx.empty([4, 3], "int32")
    assert repr(array) == "replayrt.DeviceArray(shape=(4, 3), dtype=int32, device='sim:3')"
    assert (array.ndim, array.size, array.nbytes) == (2, 12, 48)
    scalar = ctx.empty([], "float32")
    assert (scalar.shape, scalar.ndim, scalar.size, scalar.nbytes) == ((), 0, 1, 4)


def test_a_platform_name_is_checked():
    with pytest.raises(ValueError, match="'sim', 'cuda'"):
        replayrt.Context("gpu")


def test_the_simulator_admits_no_foreign_memory():
    ctx = replayrt.Context()
    with pytest.raises(replayrt.UnsupportedError, match="CUDA contexts only"):
        ctx.register(np.zeros(4, dtype=np.float32))
    with pytest.raises(replayrt.UnsupportedError, match="CUDA contexts only"):
        ctx.register(torch.zeros(4))


def test_simulator_streams_have_no_native_handle_and_none_can_be_wrapped():
    ctx = replayrt.Context()
    with pytest.raises(replayrt.UnsupportedError, match="native"):
        ctx.stream().native_handle
    with pytest.raises(replayrt.UnsupportedError, match="native"):
        ctx.wrap_stream(0x1234)
