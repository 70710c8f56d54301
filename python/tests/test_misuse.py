"""Mistakes a caller makes are reported as exceptions naming the mistake, and change nothing:
no crash, no wrong result, no half-done call."""

import pickle

import numpy as np
import pytest

import replayrt
from callables import axpy, scale


def test_kernel_init_with_none_among_the_callables_is_a_type_error():
    ctx = replayrt.Context()
    with pytest.raises(TypeError, match=r"callables\[1\] is None"):
        ctx.kernel_init([axpy(4, 2.0), None])
    ctx.kernel_init([axpy(4, 2.0)])  # the refusal left the context without a mode


def test_an_empty_array_whose_byte_count_does_not_fit_is_a_value_error():
    ctx = replayrt.Context()
    ctx.program_init()
    too_large = (([2**62 + 1, 4], "float32"), ([2**32, 2**32], "uint8"), ([2**63 - 1, 2], "uint8"))
    for shape, dtype in too_large:
        with pytest.raises(ValueError, match="too large"):
            ctx.empty(shape, dtype)
    assert ctx.stats()["device_alloc_calls"] == 0


def test_an_empty_array_of_no_elements_is_a_value_error():
    ctx = replayrt.Context()
    ctx.program_init()
    for shape in ([0], [0, 4], [4, 0, 2]):
        with pytest.raises(ValueError, match="holds no elements"):
            ctx.empty(shape, "float32")
    assert ctx.stats()["device_alloc_calls"] == 0


def test_a_callable_another_context_prepared_is_refused_and_nothing_runs():
    double_ctx, triple_ctx = replayrt.Context(), replayrt.Context()
    double_ctx.program_init()
    triple_ctx.program_init()
    double_ctx.prepare(scale(4, 2.0))
    triple = triple_ctx.prepare(scale(4, 3.0))  # the same id in its own context
    x = np.ones(4, dtype=np.float32)
    y = np.zeros(4, dtype=np.float32)
    stream = double_ctx.stream()
    for call in (
        lambda: double_ctx.run(triple, [x, y]),
        lambda: double_ctx.launch(triple, [x, y], stream),
        lambda: double_ctx.prepare_run(triple, [x, y]),
    ):
        with pytest.raises(replayrt.InvalidArgumentError, match="^replayrt: the callable was prepared by another context"):
            call()
    stream.synchronize()
    np.testing.assert_array_equal(y, np.zeros(4))
    triple_ctx.run(triple, [x, y])
    np.testing.assert_array_equal(y, np.full(4, 3.0))


def test_a_negative_int_scalar_is_its_twos_complement_and_one_past_64_bits_an_overflow_error():
    ctx = replayrt.Context()
    ctx.program_init()
    b = replayrt.CallableBuilder()
    x = b.param("x", [4])
    y = b.param("y", [4], direction="out")
    b.scalar("unused")
    b.task("scale", [x, y, replayrt.Operand.immediate_f32(2.0)])
    callable_ = ctx.prepare(b)
    out = np.zeros(4, dtype=np.float32)
    ctx.run(callable_, [np.ones(4, dtype=np.float32), out, -1])
    np.testing.assert_array_equal(out, np.full(4, 2.0))
    for value in (2**64, -(2**63) - 1):
        with pytest.raises(OverflowError, match="64 bits"):
            ctx.run(callable_, [np.ones(4, dtype=np.float32), out, value])


def test_an_error_survives_pickling_with_its_class_and_fields():
    ctx = replayrt.Context()
    ctx.kernel_init([axpy(64, 2.0)])
    with pytest.raises(replayrt.CapacityError) as refused:
        ctx.prepare(axpy(64 * 1024, 2.0))
    error = refused.value
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is replayrt.CapacityError
    assert str(copy) == str(error)
    fields = ("code", "growth_point", "growth_point_name", "requested_bytes", "frozen_bytes")
    assert [getattr(copy, name) for name in fields] == [getattr(error, name) for name in fields]


def test_a_run_used_as_a_context_manager_is_finalized_on_leaving_it():
    ctx = replayrt.Context()
    ctx.program_init()
    callable_ = ctx.prepare(axpy(8, 2.0))
    x = np.arange(8, dtype=np.float32)
    y = np.zeros(8, dtype=np.float32)
    with ctx.prepare_run(callable_, [x, y]) as run:
        run.launch()
    np.testing.assert_array_equal(y, 3.0 * x)  # finalizing waited for the run
    finalized = r"^replayrt: Run\.wait: the run was finalized$"
    with pytest.raises(replayrt.InvalidArgumentError, match=finalized):
        run.wait()


def kernel_mode_doubling():
    """A kernel-mode context with y = 2x over 4 floats prepared, x filled with ones, and a
    stream."""
    ctx = replayrt.Context()
    step = scale(4, 2.0)
    ctx.kernel_init([step])
    callable_ = ctx.prepare(step)
    x, y = ctx.empty([4]), ctx.empty([4])
    x.upload(np.ones(4, dtype=np.float32))
    return ctx, callable_, x, y, ctx.stream()


def test_replaying_the_graph_of_a_discarded_capture_says_so():
    ctx, callable_, x, y, stream = kernel_mode_doubling()
    with pytest.raises(ZeroDivisionError):
        with stream.capture() as graph:
            ctx.launch(callable_, [x, y], stream)
            1 / 0
    with pytest.raises(replayrt.InvalidArgumentError, match="no captured work"):
        graph.replay(stream)
    stream.synchronize()


def test_a_capture_scope_entered_twice_makes_two_graphs():
    ctx = replayrt.Context()
    double, triple = scale(4, 2.0), scale(4, 3.0)
    ctx.kernel_init([double, triple])
    double_id, triple_id = ctx.prepare(double), ctx.prepare(triple)
    x, y = ctx.empty([4]), ctx.empty([4])
    x.upload(np.ones(4, dtype=np.float32))
    stream = ctx.stream()
    scope = stream.capture()
    with scope as first:
        ctx.launch(double_id, [x, y], stream)
    with scope as second:
        ctx.launch(triple_id, [x, y], stream)
    assert first is not second
    first.replay(stream)
    stream.synchronize()
    np.testing.assert_array_equal(y.numpy(), np.full(4, 2.0))
    second.replay(stream)
    stream.synchronize()
    np.testing.assert_array_equal(y.numpy(), np.full(4, 3.0))


def test_launch_and_replay_take_their_stream_by_keyword():
    ctx, callable_, x, y, stream = kernel_mode_doubling()
    with stream.capture() as graph:
        ctx.launch(callable_, [x, y], stream=stream)
    graph.replay(stream=stream)
    stream.synchronize()
    np.testing.assert_array_equal(y.numpy(), np.full(4, 2.0))


def test_a_copy_with_its_arguments_swapped_names_the_one_that_must_be_a_device_array():
    ctx = replayrt.Context()
    ctx.program_init()
    device = ctx.empty([4])
    host = np.zeros(4, dtype=np.float32)
    stream = ctx.stream()
    with pytest.raises(TypeError, match="a download's source must be a DeviceArray, not ndarray"):
        stream.download(device, host)
    with pytest.raises(TypeError, match="an upload's destination must be a DeviceArray, not ndarray"):
        stream.upload(host, device)
    stream.synchronize()


def test_an_immediate_upload_takes_what_numpy_converts_and_refuses_none():
    torch = pytest.importorskip("torch")
    ctx = replayrt.Context()
    ctx.program_init()
    device = ctx.empty([4])
    device.upload(torch.arange(4, dtype=torch.float32))
    np.testing.assert_array_equal(device.numpy(), np.arange(4))
    device.upload(np.arange(8, dtype=np.float32)[::2])  # a copy is fine to read from
    np.testing.assert_array_equal(device.numpy(), np.arange(0, 8, 2))
    with pytest.raises(TypeError, match="Python objects"):
        device.upload(None)


def test_numpy_does_not_turn_a_device_array_into_an_object_array():
    ctx = replayrt.Context()
    ctx.program_init()
    device = ctx.empty([3, 2])
    with pytest.raises(TypeError, match=r"\.numpy\(\) for a copy, numpy\.from_dlpack for a view"):
        np.asarray(device)
    assert (len(device), device.itemsize) == (3, 4)
    with pytest.raises(TypeError, match="unsized"):
        len(ctx.empty([]))


def test_a_host_argument_numpy_cannot_take_in_place_is_refused_saying_why():
    ctx = replayrt.Context()
    ctx.program_init()
    callable_ = ctx.prepare(scale(4, 2.0))
    out = np.zeros(4, dtype=np.float32)
    with pytest.raises(TypeError, match="parameter 0: numpy would copy this list, and the results would land"):
        ctx.run(callable_, [[1.0, 2.0, 3.0, 4.0], out])
    strided = np.zeros(8, dtype=np.float32)[::2]
    with pytest.raises(TypeError, match="parameter 1: this ndarray is not C-contiguous"):
        ctx.run(callable_, [np.ones(4, dtype=np.float32), strided])
    torch = pytest.importorskip("torch")
    with pytest.raises(TypeError, match="parameter 0: numpy cannot view this Tensor"):
        ctx.run(callable_, [torch.ones(4, requires_grad=True), out])
    np.testing.assert_array_equal(out, np.zeros(4))


def test_a_misspelled_bind_is_a_value_error_naming_the_choices():
    with pytest.raises(ValueError, match="'device', 'host'.*not 'hots'"):
        replayrt.CallableBuilder("hots")
    assert replayrt.CallableBuilder("host").task_count == 0


def test_every_public_class_and_method_has_a_docstring():
    undocumented = []
    classes = ("Context", "Stream", "Event", "Graph", "Run", "DeviceArray", "RegisteredArray",
               "CallableBuilder", "Callable", "Operand")
    for class_name in classes:
        cls = getattr(replayrt, class_name)
        if not (cls.__doc__ or "").strip():
            undocumented.append(class_name)
        for name, member in vars(cls).items():
            if name.startswith("_") or not callable(member):
                continue
            if not (member.__doc__ or "").split("\n", 1)[-1].strip():
                undocumented.append(f"{class_name}.{name}")
    assert undocumented == []
