"""Tests marked `cuda` run on a CUDA context. Without one (no GPU, or a build without the CUDA
backend) they are skipped, unless REPLAYRT_REQUIRE_CUDA=1: then that is a failure. The ctest
python.pytest_cuda_fake runs them with it set, against the package built on the fake CUDA
platform (<build>/python-cuda-fake), so CI runs them without a GPU."""

import functools
import os

import pytest

import replayrt


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "cuda: runs on a CUDA context; skipped without one (REPLAYRT_REQUIRE_CUDA=1: fails)"
    )


@functools.lru_cache(maxsize=None)
def _why_no_cuda():
    """None when a CUDA context can be made here, else why not."""
    try:
        replayrt.Context("cuda")
    except replayrt.Error as error:
        return f"{type(error).__name__}: {error}"
    return None


def pytest_runtest_setup(item):
    if item.get_closest_marker("cuda") is None:
        return
    why = _why_no_cuda()
    if why is None:
        return
    if os.environ.get("REPLAYRT_REQUIRE_CUDA") == "1":
        pytest.fail(f"REPLAYRT_REQUIRE_CUDA=1 but no CUDA context can be made: {why}", pytrace=False)
    pytest.skip(f"no CUDA context ({why}); ctest python.pytest_cuda_fake runs this on FakeCuda")
