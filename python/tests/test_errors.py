"""Every error class is raised by a real refusal of the library."""

import numpy as np
import pytest

import replayrt
from callables import axpy


def test_a_capacity_refusal_carries_its_growth_point_and_bytes():
    ctx = replayrt.Context()
    ctx.kernel_init([axpy(64, 2.0)])
    with pytest.raises(replayrt.CapacityError) as refused:
        ctx.prepare(axpy(64 * 1024, 2.0))
    assert isinstance(refused.value, replayrt.InternalError)
    # axpy's intermediate outgrows the frozen gm_heap.
    assert "refusal at gm_heap" in str(refused.value)
    assert refused.value.growth_point == 0
    assert refused.value.growth_point_name == "RRT_GROWTH_ARENA_GM_HEAP"
    assert refused.value.requested_bytes > refused.value.frozen_bytes
    refusals = ctx.stats()["refusals"]
    assert len(refusals) == 8  # every growth point, counted or not
    assert refusals == {name: int(name == refused.value.growth_point_name) for name in refusals}
    assert ctx.prepare(axpy(64, 2.0)).id >= 0  # the refusal changed nothing


def test_an_unknown_kernel_is_an_invalid_argument_with_the_whole_message():
    ctx = replayrt.Context()
    ctx.program_init()
    b = replayrt.CallableBuilder()
    x = b.param("x", [4])
    b.task("no_such_kernel_" + "x" * 300, [x])
    with pytest.raises(replayrt.InvalidArgumentError) as refused:
        ctx.prepare(b)
    assert "x" * 300 in str(refused.value)
    assert (refused.value.growth_point, refused.value.growth_point_name) == (-1, None)


def test_synchronizing_a_capturing_stream_is_an_invalid_state():
    ctx = replayrt.Context()
    ctx.program_init()
    stream = ctx.stream()
    with stream.capture():
        with pytest.raises(replayrt.InvalidStateError):
            stream.synchronize()


def test_a_program_mode_run_reads_and_writes_numpy_arrays_in_place():
    ctx = replayrt.Context()
    ctx.program_init()
    callable_ = ctx.prepare(axpy(16, 2.0))
    x = np.arange(16, dtype=np.float32)
    y = np.zeros(16, dtype=np.float32)
    ctx.run(callable_, [x, y])
    np.testing.assert_array_equal(y, 3 * x)


def test_the_builder_names_the_choices_of_a_misspelled_option():
    b = replayrt.CallableBuilder()
    with pytest.raises(ValueError, match="one of 'in', 'out', 'inout', not 'sideways'"):
        b.param("x", [4], direction="sideways")
    with pytest.raises(ValueError, match="'float32'.*not 'float33'"):
        b.param("x", [4], dtype="float33")
