"""Reads the DLTensor inside a DLPack capsule without consuming it (ctypes), so tests see
what a consumer would be handed: device, data pointer, shape, strides and dtype."""

import ctypes


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def describe(capsule):
    """The capsule's tensor as a dict; the capsule keeps its tensor (its deleter still runs)."""
    tensor = _DLTensor.from_address(_get_pointer(capsule, b"dltensor"))
    return {
        "device": (tensor.device.device_type, tensor.device.device_id),
        "data": tensor.data + tensor.byte_offset,
        "shape": tuple(tensor.shape[i] for i in range(tensor.ndim)),
        "strides": None if not tensor.strides else tuple(tensor.strides[i] for i in range(tensor.ndim)),
        "dtype": (tensor.dtype.code, tensor.dtype.bits, tensor.dtype.lanes),
    }
