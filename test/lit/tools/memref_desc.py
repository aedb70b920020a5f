"""MLIR's memref descriptors for f32 arrays, for calling `compile --emit=shared`
functions through their C interface with ctypes (the numeric tests and
bench/kernels share these)."""

import ctypes

import numpy as np


def descriptor(rank):
    class D(ctypes.Structure):
        _fields_ = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
                    ("offset", ctypes.c_int64), ("sizes", ctypes.c_int64 * rank),
                    ("strides", ctypes.c_int64 * rank)]
    return D


def make_desc(arr):
    """A descriptor viewing `arr` (no copy; `arr` must outlive the call)."""
    d = descriptor(arr.ndim)()
    d.allocated = d.aligned = arr.ctypes.data
    for i in range(arr.ndim):
        d.sizes[i] = arr.shape[i]
        d.strides[i] = arr.strides[i] // arr.itemsize
    return d


def read(d, shape):
    """A copy of the f32 data a (contiguous) result descriptor points to."""
    count = int(np.prod(shape))
    buf = (ctypes.c_float * count).from_address(d.aligned + d.offset * 4)
    return np.frombuffer(buf, dtype=np.float32).reshape(shape).copy()
