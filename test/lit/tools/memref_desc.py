"""MLIR's memref descriptors for f32 arrays, for calling `compile --emit=shared`
functions through their C interface with ctypes (the numeric tests and
bench/kernels share these)."""

import argparse
import ctypes
import ctypes.util
import os
import subprocess

import numpy as np


def numeric_args():
    """The arguments the numeric tests share: the binary, a work directory,
    the compile mode and -O level."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--tosa-lsp", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--mode", default="fast")
    ap.add_argument("--opt", default="3")
    return ap


def write_module(work, stem, functions):
    """`functions` (MLIR text each) as WORK/STEM.mlir; returns its path."""
    os.makedirs(work, exist_ok=True)
    src = os.path.join(work, stem + ".mlir")
    with open(src, "w") as f:
        f.write("\n".join(functions))
    return src


def compile_and_load(tosa_lsp, src, lib, mode="fast", opt="3", extra=()):
    """`src` compiled by `tosa_lsp compile --emit=shared` into `lib`, loaded:
    (the library, libc with `free` typed for the results' buffers)."""
    subprocess.run([tosa_lsp, "compile", src, "-o", lib, "--emit=shared",
                    "-O" + opt, "--mode=" + mode, "--quiet", "--force"] + list(extra),
                   check=True)
    so = ctypes.CDLL(lib)
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    libc.free.argtypes = [ctypes.c_void_p]
    return so, libc


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
