"""replayrt: capture accelerator work once, replay it many times.

A thin layer over the C++ API (replayrt.hpp), which is itself a thin layer over the C ABI
(replayrt.h); the C header's comments are the reference for what each call does.
"""

from replayrt import _replayrt
from replayrt._replayrt import (  # noqa: F401  (re-exported)
    Callable,
    CallableBuilder,
    Context,
    DeviceArray,
    Event,
    Graph,
    Operand,
    RegisteredArray,
    Run,
    Stream,
    Trace,
    dtype_value,
)


class Error(Exception):
    """A replayrt call failed. `status` is the C status name, `code` its value. A capacity
    refusal names its growth point (`growth_point`, the rrt_growth_point_t value, and
    `growth_point_name`, "RRT_GROWTH_ARENA_GM_HEAP", ..., the key of Context.stats()'s
    "refusals"); other errors have -1 and None there, and 0 requested and frozen bytes."""

    status = "RRT_ERR_UNKNOWN"

    def __init__(self, message, code, growth_point, requested_bytes, frozen_bytes):
        super().__init__(message)
        self.code = code
        self.growth_point = growth_point
        self.growth_point_name = None
        if growth_point >= 0:
            self.growth_point_name = _replayrt._growth_point_name(growth_point)
        self.requested_bytes = requested_bytes
        self.frozen_bytes = frozen_bytes

    def __reduce__(self):
        """Pickles as its class and fields, so an error crosses process boundaries."""
        fields = (self.code, self.growth_point, self.requested_bytes, self.frozen_bytes)
        return (type(self), (str(self),) + fields)


class InternalError(Error):
    status = "RRT_ERR_INTERNAL"


class CapacityError(InternalError):
    """A kernel-mode request the frozen plan cannot hold; it changed nothing."""


class UnsupportedError(Error):
    status = "RRT_ERR_UNSUPPORTED"


class PreparedIncompatibleError(Error):
    status = "RRT_ERR_PREPARED_INCOMPATIBLE"


class InvalidStateError(Error):
    status = "RRT_ERR_INVALID_STATE"


class InvalidArgumentError(Error):
    status = "RRT_ERR_INVALID_ARGUMENT"


class CallableCountExceededError(Error):
    status = "RRT_ERR_CALLABLE_COUNT_EXCEEDED"


class CallableBytesExceededError(Error):
    status = "RRT_ERR_CALLABLE_BYTES_EXCEEDED"


class CallableNotResidentError(Error):
    status = "RRT_ERR_CALLABLE_NOT_RESIDENT"


class OutOfMemoryError(Error):
    status = "RRT_ERR_OUT_OF_MEMORY"


class StaleAddressError(Error):
    status = "RRT_ERR_STALE_ADDRESS"


class KernelFailedError(Error):
    status = "RRT_ERR_KERNEL_FAILED"


_BY_STATUS = {cls.status: cls for cls in Error.__subclasses__()}


def _error_for(status, message, code, growth_point, requested_bytes, frozen_bytes):
    """Called by the extension: the exception to raise for a failed call."""
    cls = _BY_STATUS.get(status, Error)
    if cls is InternalError and growth_point >= 0:
        cls = CapacityError
    return cls(message, code, growth_point, requested_bytes, frozen_bytes)


_replayrt._set_error_factory(_error_for)
