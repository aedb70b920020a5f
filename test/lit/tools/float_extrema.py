#!/usr/bin/env python3
"""Exactness of compiled maxima and minima on special values.

    float_extrema.py --tosa-lsp BIN --work DIR [--mode fast] [--opt 3]

tosa.max_pool2d (3x3 stride 1 with padding: trees of 9 maxima; 2x2 stride
2), tosa.reduce_max / reduce_min over H (the rows a pass of
OuterReductions.cpp) and over C, tosa.maximum / minimum and tosa.clamp, on
inputs full of NaN (both signs), +-0, +-inf, subnormals and ties, compiled
into one shared library and called through ctypes (F, and F_into into a
NaN-filled buffer outside upstream mode). The reference is IEEE 754-2019
maximum / minimum (TOSA's PROPAGATE mode, MLIR's arith.maximumf): NaN if an
operand is NaN, -0 < +0. Every element must be NaN where the reference is,
else bit-identical to it. Prints `extrema: N passed, M failed`.
"""

import ctypes
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from memref_desc import (compile_and_load, descriptor, make_desc as make,  # noqa: E402
                         numeric_args, read, write_module)


def t(shape):
    return "tensor<%sxf32>" % "x".join(map(str, shape))


def pool(name, shape, k, stride, pad):
    n, h, w, c = shape
    oh = (h + pad[0] + pad[1] - k) // stride + 1
    ow = (w + pad[2] + pad[3] - k) // stride + 1
    out = (n, oh, ow, c)
    text = ("func.func @%s(%%x: %s) -> %s {\n  %%r = tosa.max_pool2d %%x {kernel = "
            "array<i64: %d, %d>, pad = array<i64: %s>, stride = array<i64: %d, %d>}"
            " : (%s) -> %s\n  return %%r : %s\n}\n" % (
                name, t(shape), t(out), k, k, ", ".join(map(str, pad)), stride,
                stride, t(shape), t(out), t(out)))
    return text, [shape], ("pool", k, stride, pad, out)


def pool_of_pool(name, shape):
    """A padded 2x2 max pool, then a 2x2 stride-2 one: the second op's window
    read the first's result (unrolled first: an erased value, then a crash)."""
    mid = pool("", shape, 2, 1, (1, 0, 1, 0))[2][4]
    out = pool("", mid, 2, 2, (0, 0, 0, 0))[2][4]
    n = "func.func @%s(%%x: %s) -> %s {\n" % (name, t(shape), t(out))
    n += ("  %%m = tosa.max_pool2d %%x {kernel = array<i64: 2, 2>, pad = array<i64: 1, 0, 1, 0>, "
          "stride = array<i64: 1, 1>} : (%s) -> %s\n" % (t(shape), t(mid)))
    n += ("  %%r = tosa.max_pool2d %%m {kernel = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, "
          "stride = array<i64: 2, 2>} : (%s) -> %s\n  return %%r : %s\n}\n" % (t(mid), t(out), t(out)))
    return n, [shape], ("pools", ("pool", 2, 1, (1, 0, 1, 0), mid), ("pool", 2, 2, (0, 0, 0, 0), out))


def reduce(name, op, shape, axis):
    out = list(shape)
    out[axis] = 1
    text = ("func.func @%s(%%x: %s) -> %s {\n  %%r = tosa.%s %%x {axis = %d : i32}"
            " : (%s) -> %s\n  return %%r : %s\n}\n" % (
                name, t(shape), t(out), op, axis, t(shape), t(out), t(out)))
    return text, [shape], (op, axis)


def binary(name, op, shape):
    text = ("func.func @%s(%%a: %s, %%b: %s) -> %s {\n  %%r = tosa.%s %%a, %%b : "
            "(%s, %s) -> %s\n  return %%r : %s\n}\n" % (
                name, t(shape), t(shape), t(shape), op, t(shape), t(shape),
                t(shape), t(shape)))
    return text, [shape, shape], (op,)


def clamp(name, shape):
    text = ("func.func @%s(%%x: %s) -> %s {\n  %%r = tosa.clamp %%x {min_val = "
            "-0.0 : f32, max_val = 6.0 : f32} : (%s) -> %s\n  return %%r : %s\n}\n"
            % (name, t(shape), t(shape), t(shape), t(shape), t(shape)))
    return text, [shape], ("clamp",)


CASES = {
    "pool3s1": pool("pool3s1", (1, 9, 14, 32), 3, 1, (1, 1, 1, 1)),
    "pool2s2": pool("pool2s2", (1, 8, 12, 48), 2, 2, (0, 0, 0, 0)),
    "pool3s2": pool("pool3s2", (1, 10, 10, 16), 3, 2, (0, 1, 0, 1)),
    "poolpool": pool_of_pool("poolpool", (1, 8, 8, 16)),
    # 64 rows x 1024 elements: OuterReductions' 8 rows a pass.
    "rmaxH": reduce("rmaxH", "reduce_max", (1, 64, 32, 32), 1),
    "rminH": reduce("rminH", "reduce_min", (1, 64, 32, 32), 1),
    "rmaxC": reduce("rmaxC", "reduce_max", (2, 5, 7, 64), 3),
    "maximum": binary("maximum", "maximum", (4, 256)),
    "minimum": binary("minimum", "minimum", (4, 256)),
    "clamp": clamp("clamp", (4, 256)),
}


def ieee(op, a, b):
    """IEEE 754-2019 maximum ("max") or minimum ("min") of float32 arrays."""
    pick = np.where(a > b, a, b) if op == "max" else np.where(a < b, a, b)
    zeros = (a == 0) & (b == 0)
    if op == "max":  # +0 if either is +0
        z = np.where(np.signbit(a), b, a)
    else:  # -0 if either is -0
        z = np.where(np.signbit(a), a, b)
    r = np.where(zeros, z, pick)
    return np.where(np.isnan(a) | np.isnan(b), np.float32(np.nan), r).astype(np.float32)


def fold(op, arrays):
    r = arrays[0]
    for x in arrays[1:]:
        r = ieee(op, r, x)
    return r


def reference(what, ins):
    kind = what[0]
    x = ins[0]
    if kind == "pools":
        for step in what[1:]:
            x = reference(step, [x])
        return x
    if kind == "pool":
        _, k, s, pad, out = what
        xp = np.pad(x, ((0, 0), (pad[0], pad[1]), (pad[2], pad[3]), (0, 0)),
                    constant_values=-np.inf)
        taps = [xp[:, i:i + s * out[1]:s, j:j + s * out[2]:s, :][:, :out[1], :out[2], :]
                for i in range(k) for j in range(k)]
        return fold("max", taps)
    if kind in ("reduce_max", "reduce_min"):
        axis = what[1]
        parts = [np.take(x, [i], axis=axis) for i in range(x.shape[axis])]
        return fold("max" if kind == "reduce_max" else "min", parts)
    if kind in ("maximum", "minimum"):
        return ieee("max" if kind == "maximum" else "min", ins[0], ins[1])
    if kind == "clamp":  # TOSA: min(max(x, lo), hi), NaN propagated
        lo = np.full_like(x, -0.0)
        hi = np.full_like(x, 6.0)
        return ieee("min", ieee("max", x, lo), hi)
    raise ValueError(kind)


SPECIAL = np.array([np.nan, -np.nan, 0.0, -0.0, np.inf, -np.inf, 1e-40, -1e-40,
                    1.0, -1.0, 6.0, 3.5, np.finfo(np.float32).max,
                    -np.finfo(np.float32).max], dtype=np.float32)


def inputs(shapes, rng, nan_share):
    out = []
    for shape in shapes:
        x = rng.uniform(-8, 8, shape).astype(np.float32)
        # Ties and signed zeros everywhere; NaN only in some lanes so that
        # most results are numbers.
        pick = rng.random(shape)
        special = rng.choice(SPECIAL[2:], size=shape)
        x = np.where(pick < 0.4, special, x).astype(np.float32)
        x = np.where(pick > 1 - nan_share, rng.choice(SPECIAL[:2], size=shape), x)
        out.append(x.astype(np.float32))
    return out


def same(got, want):
    nan = np.isnan(want)
    bits_ok = got.view(np.uint32) == want.view(np.uint32)
    return bool(np.all(np.where(nan, np.isnan(got), bits_ok)))


def main():
    args = numeric_args().parse_args()
    src = write_module(args.work, "extrema-" + args.mode, [c[0] for c in CASES.values()])
    lib = os.path.join(args.work, "extrema-%s-O%s.so" % (args.mode, args.opt))
    so, libc = compile_and_load(args.tosa_lsp, src, lib, args.mode, args.opt)
    rng = np.random.default_rng(5)
    passed = failed = 0
    for name, (_, shapes, what) in CASES.items():
        # Few NaNs (most results are numbers, ties and zeros decide), then
        # many (most results are NaN).
        for nan_share in (0.002, 0.2):
            ins = inputs(shapes, rng, nan_share)
            want = reference(what, ins)
            descs = [make(a) for a in ins]
            fn = getattr(so, "_mlir_ciface_" + name)
            fn.restype = None
            res = descriptor(want.ndim)()
            fn(ctypes.byref(res), *[ctypes.byref(d) for d in descs])
            got = read(res, want.shape)
            libc.free(res.allocated)
            results = [("F", got)]
            if args.mode != "upstream":
                into = getattr(so, "_mlir_ciface_%s_into" % name)
                into.restype = None
                dest = np.full(want.shape, np.nan, dtype=np.float32)
                into(*[ctypes.byref(d) for d in descs], ctypes.byref(make(dest)))
                results.append(("F_into", dest))
            for which, r in results:
                if same(r, want):
                    passed += 1
                    continue
                failed += 1
                bad = np.argwhere(~np.where(np.isnan(want), np.isnan(r),
                                            r.view(np.uint32) == want.view(np.uint32)))
                at = tuple(bad[0])
                print("FAIL %s %s --mode=%s -O%s (NaN share %g): %d elements differ, "
                      "first at %s: got %r (%08x), want %r (%08x)" % (
                          name, which, args.mode, args.opt, nan_share, len(bad), at,
                          float(r[at]), r[at].view(np.uint32), float(want[at]),
                          want[at].view(np.uint32)))
    print("extrema: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
