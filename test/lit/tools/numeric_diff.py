#!/usr/bin/env python3
"""Numeric differential test: code compiled by `tosa-lsp compile` against numpy.

For every element-wise TOSA op that MLIR 22 lowers (the RFC's list) and for a
set of shape patterns, generates one function `@<variant>__<pattern>` in ONE
.mlir file, compiles it once with

    tosa-lsp compile FILE -o numeric.so --emit=shared --header -O<n>

loads the shared library with ctypes, passes memref descriptors built from
numpy arrays (strides in elements) to each `_mlir_ciface_<fn>`, reads the
result descriptor the callee filled in (allocated, aligned, offset, sizes,
strides) and compares it with numpy's broadcasting result:

  * integer and boolean results, and float ops that IEEE 754 rounds exactly
    (add, sub, mul, abs, negate, min/max, clamp, ceil/floor, casts,
    reciprocal, select, comparisons): bit-exact (NaN equals NaN);
  * transcendental float ops (exp, log, tanh, sigmoid, erf, sin, cos, pow,
    rsqrt): rtol 1e-5, atol 1e-6 against a float64 reference.

Besides the values it checks the result's sizes (the broadcast shape), that
i1 results are bytes holding 0 or 1, that the inputs were not written to, and
that the generated header declares every entry point with the expected
descriptor types.

Shape patterns (binary shown; unary and select use the same idea):
  static     2x3 , 2x3      -> 2x3       (a) static equal shapes; also called
                                             with sliced / transposed inputs
                                             (non-trivial strides and offset)
  bcast      1x3 , 2x3      -> 2x3       (b) static size-1 broadcast
  bcast3d    2x1x4 , 1x3x1  -> 2x3x4     (b) both operands broadcast
  dyn_one    ?x3 , ?x3      -> ?x3       (c) runtime size 1 on one operand
                                             (1x3+4x3, 4x3+1x3, 1x3+1x3)
  dyn_equal  ?x? , ?x?      -> ?x?       (d) equal runtime sizes (4x5, and 3x67
                                             so that vectorised loop bodies and
                                             their remainders run at -O2)
  dyn_both   ?x? , ?x?      -> ?x?       runtime 4x1 + 1x5 (and swapped), 5x1+1x67
  mixed      ?x3 , 4x3      -> 4x3       dynamic against static (1x3, 4x3)
  rank0      f32 , f32      -> f32       rank 0 (descriptors without sizes)

Variants in KNOWN_NOT_LOWERED are compiled as separate modules so that they cannot
break the main module; while they still fail to lower they are reported as
"not lowered" (not a failure); once they lower their cases run and count.
If the main module fails to compile, every variant is compiled on its own to
find the culprit (those count as failures).

Prints a line per failing case with its max error, a summary table, and
finally `numeric: N passed, M failed`; exits 1 on any failure.
"""

import argparse
import ctypes
import ctypes.util
import faulthandler
import math
import os
import re
import subprocess
import sys
import time

try:
    import numpy as np
except ImportError:  # pragma: no cover - depends on the host
    print("numeric_diff.py: error: numpy is not installed for %s; install it "
          "(Debian: apt-get install python3-numpy) and run with /usr/bin/python3"
          % sys.executable)
    sys.exit(1)

RTOL = 1e-5
ATOL = 1e-6

# Variants whose lowering by tosa-lsp's (MLIR's upstream) pipeline is known to fail;
# value: why (the error seen). They are compiled separately, see above.
# (Empty since the pipeline runs convert-math-to-libm for erf,
# tosa-to-arith{include-apply-rescale=true} for tosa.mul with a shift, and
# convert-bufferization-to-memref for functions returning an argument.)
KNOWN_NOT_LOWERED = {}

# --------------------------------------------------------------------------
# Element types
# --------------------------------------------------------------------------

NP_DTYPE = {"f32": np.float32, "i32": np.int32, "i8": np.int8, "i1": np.bool_}
C_ELEM = {"f32": ctypes.c_float, "i32": ctypes.c_int32, "i8": ctypes.c_int8,
          "i1": ctypes.c_uint8}


# --------------------------------------------------------------------------
# Input generators: f(rng, shape) -> numpy array
# --------------------------------------------------------------------------

def g_float(lo, hi):
    return lambda rng, s: rng.uniform(lo, hi, s).astype(np.float32)


def g_float_specials(rng, s):
    """Uniform values mixed with integers, halves and signed zeros."""
    x = rng.uniform(-4, 4, s).astype(np.float32)
    pick = rng.integers(0, 4, s)
    x = np.where(pick == 0, np.round(x * 2) / 2, x)      # k and k+0.5
    x = np.where(pick == 1, np.where(x > 0, np.float32(-0.0), np.float32(0.0)), x)
    return x.astype(np.float32)


def g_float_ties(rng, s):
    """Small half-integers: many equal pairs for comparisons."""
    return (rng.integers(-3, 4, s) / 2).astype(np.float32)


def g_float_nan(rng, s):
    x = rng.uniform(-4, 4, s).astype(np.float32)
    return np.where(rng.integers(0, 3, s) == 0, np.float32(np.nan), x).astype(np.float32)


def g_float_to_int(rng, s):
    """Ties (k+0.5 round to even) and values that must saturate."""
    specials = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3e9, -3e9, 1e20,
                         -1e20, 2147483520.0, 2147483648.0, -2147483648.0,
                         -2147483904.0, 0.0, -0.0, 7.49, -7.51],
                        dtype=np.float32)
    x = rng.uniform(-100, 100, s).astype(np.float32)
    idx = rng.integers(0, len(specials), s)
    return np.where(rng.integers(0, 2, s) == 0, specials[idx], x).astype(np.float32)


def g_int(lo, hi):
    return lambda rng, s: rng.integers(lo, hi, s, dtype=np.int64).astype(np.int32)


def g_int_full(rng, s):
    x = rng.integers(-2**31, 2**31, s, dtype=np.int64)
    specials = np.array([0, 1, -1, 2**31 - 1, -2**31, 256, 2**16])
    idx = rng.integers(0, len(specials), s)
    return np.where(rng.integers(0, 3, s) == 0, specials[idx], x).astype(np.int32)


def g_int_ties(rng, s):
    return rng.integers(-3, 4, s).astype(np.int32)


def g_i8_full(rng, s):
    return rng.integers(-128, 128, s).astype(np.int8)


def g_shift(rng, s):
    return rng.integers(0, 32, s).astype(np.int32)


def g_divisor(rng, s):
    x = rng.integers(1, 50, s) * np.where(rng.integers(0, 2, s) == 0, -1, 1)
    return x.astype(np.int32)


def g_bool(rng, s):
    return rng.integers(0, 2, s).astype(np.bool_)


# --------------------------------------------------------------------------
# numpy references (inputs already numpy arrays; broadcasting is numpy's)
# --------------------------------------------------------------------------

_erf = np.vectorize(math.erf, otypes=[np.float64])


def f64(x):
    return x.astype(np.float64)


def r_cast_f_to_i32(x):
    return np.clip(np.rint(f64(x)), -2**31, 2**31 - 1).astype(np.int32)


def r_intdiv(a, b):
    a = a.astype(np.int64)
    b = b.astype(np.int64)
    q = np.abs(a) // np.abs(b)
    return (q * np.sign(a) * np.sign(b)).astype(np.int32)


def r_clz(x):
    u = x.astype(np.int64) & 0xFFFFFFFF
    out = np.full(x.shape, 32, dtype=np.int32)
    for bit in range(32):        # highest set bit decides
        out = np.where((u >> bit) & 1 == 1, 31 - bit, out)
    return out.astype(np.int32)


def r_ashr(rnd):
    def ref(a, b):
        a64 = a.astype(np.int64)
        b64 = b.astype(np.int64)
        c = a64 >> b64
        if rnd:
            c = c + np.where(b64 > 0, (a64 >> np.maximum(b64 - 1, 0)) & 1, 0)
        return c.astype(np.int32)
    return ref


def r_lshl(a, b):
    return ((a.astype(np.int64) << b.astype(np.int64)) & 0xFFFFFFFF).astype(np.uint32).view(np.int32)


def r_lshr(a, b):
    u = a.astype(np.int64) & 0xFFFFFFFF
    return (u >> b.astype(np.int64)).astype(np.uint32).view(np.int32)


def r_mul_shift(shift):
    def ref(a, b):
        p = a.astype(np.int64) * b.astype(np.int64)
        if shift > 0:
            p = (p + (1 << (shift - 1))) >> shift
        return p.astype(np.int32)
    return ref


def r_negate_zp(izp, ozp, lo, hi, dt):
    def ref(x):
        return np.clip(-(x.astype(np.int64) - izp) + ozp, lo, hi).astype(dt)
    return ref


def r_sigmoid(x):
    return 1.0 / (1.0 + np.exp(-f64(x)))


def r_maximum_propagate(a, b):
    return np.maximum(a, b)


def r_minimum_ignore(a, b):
    return np.fmin(a, b)


# --------------------------------------------------------------------------
# Op variants
# --------------------------------------------------------------------------

class Variant:
    """One op at one type: how to spell it in MLIR and how numpy computes it.

    types: element types of the element-wise operands; rtype: of the result;
    gens: one input generator per operand; ref: numpy reference; cmp: "exact"
    or "tol"; attrs: MLIR attribute dictionary text; consts: extra constant
    operands as (MLIR type, dense literal) placed after the element-wise ones.
    """

    def __init__(self, name, op, types, rtype, gens, ref, cmp="exact",
                 attrs="", consts=()):
        self.name, self.op, self.types, self.rtype = name, op, types, rtype
        self.gens, self.ref, self.cmp = gens, ref, cmp
        self.attrs, self.consts = attrs, consts

    @property
    def arity(self):
        return len(self.types)


def V(*a, **k):
    return Variant(*a, **k)


F, I, B, I8 = "f32", "i32", "i1", "i8"
gf = g_float(-4, 4)
gpos = g_float(0.1, 10)
ZF = ("tensor<1xf32>", "dense<0.0>")
ZI = ("tensor<1xi32>", "dense<0>")
SHIFT0 = ("tensor<1xi8>", "dense<0>")
SHIFT3 = ("tensor<1xi8>", "dense<3>")

VARIANTS = [
    # ---- unary
    V("abs_f32", "abs", [F], F, [g_float_specials], np.abs),
    V("abs_i32", "abs", [I], I, [g_int(-2**30, 2**30)], np.abs),
    V("bitwise_not_i32", "bitwise_not", [I], I, [g_int_full], np.invert),
    V("cast_f32_i32", "cast", [F], I, [g_float_to_int], r_cast_f_to_i32),
    V("cast_i32_f32", "cast", [I], F, [g_int_full], lambda x: x.astype(np.float32)),
    V("cast_i32_i1", "cast", [I], B, [g_int_ties], lambda x: x != 0),
    V("cast_i1_i32", "cast", [B], I, [g_bool], lambda x: x.astype(np.int32)),
    V("cast_f32_i1", "cast", [F], B, [g_float_ties], lambda x: x != 0),
    V("cast_i32_i8", "cast", [I], I8, [g_int_full], lambda x: x.astype(np.int8)),
    V("cast_f32_f32", "cast", [F], F, [gf], lambda x: x.copy()),
    V("cast_i8_i32", "cast", [I8], I, [g_i8_full], lambda x: x.astype(np.int32)),
    V("ceil_f32", "ceil", [F], F, [g_float_specials], np.ceil),
    V("clamp_f32", "clamp", [F], F, [gf], lambda x: np.clip(x, np.float32(-1.5), np.float32(2.25)),
      attrs="{min_val = -1.5 : f32, max_val = 2.25 : f32}"),
    V("clamp_i32", "clamp", [I], I, [g_int(-20, 20)], lambda x: np.clip(x, -5, 7).astype(np.int32),
      attrs="{min_val = -5 : i32, max_val = 7 : i32}"),
    V("clz_i32", "clz", [I], I, [g_int_full], r_clz),
    V("erf_f32", "erf", [F], F, [gf], lambda x: _erf(f64(x)), cmp="tol"),
    V("exp_f32", "exp", [F], F, [g_float(-5, 5)], lambda x: np.exp(f64(x)), cmp="tol"),
    V("floor_f32", "floor", [F], F, [g_float_specials], np.floor),
    V("log_f32", "log", [F], F, [gpos], lambda x: np.log(f64(x)), cmp="tol"),
    V("logical_not_i1", "logical_not", [B], B, [g_bool], np.logical_not),
    V("negate_f32", "negate", [F], F, [g_float_specials], np.negative, consts=(ZF, ZF)),
    V("negate_i32", "negate", [I], I, [g_int(-2**30, 2**30)], np.negative, consts=(ZI, ZI)),
    V("negate_i8_zp", "negate", [I8], I8, [g_i8_full],
      r_negate_zp(5, -3, -128, 127, np.int8),
      consts=(("tensor<1xi8>", "dense<5>"), ("tensor<1xi8>", "dense<-3>"))),
    V("reciprocal_f32", "reciprocal", [F], F, [g_float(-10, 10)],
      lambda x: (np.float32(1) / x).astype(np.float32)),
    V("rsqrt_f32", "rsqrt", [F], F, [gpos], lambda x: 1.0 / np.sqrt(f64(x)), cmp="tol"),
    V("sigmoid_f32", "sigmoid", [F], F, [g_float(-6, 6)], r_sigmoid, cmp="tol"),
    V("tanh_f32", "tanh", [F], F, [g_float(-6, 6)], lambda x: np.tanh(f64(x)), cmp="tol"),
    V("sin_f32", "sin", [F], F, [g_float(-6, 6)], lambda x: np.sin(f64(x)), cmp="tol"),
    V("cos_f32", "cos", [F], F, [g_float(-6, 6)], lambda x: np.cos(f64(x)), cmp="tol"),
    # ---- binary
    V("add_f32", "add", [F, F], F, [gf, gf], np.add),
    V("add_i32", "add", [I, I], I, [g_int(-2**29, 2**29)] * 2, np.add),
    V("sub_f32", "sub", [F, F], F, [gf, gf], np.subtract),
    V("sub_i32", "sub", [I, I], I, [g_int(-2**29, 2**29)] * 2, np.subtract),
    V("mul_f32", "mul", [F, F], F, [gf, gf], np.multiply, consts=(SHIFT0,)),
    V("mul_i32", "mul", [I, I], I, [g_int(-2**15, 2**15)] * 2, r_mul_shift(0), consts=(SHIFT0,)),
    V("mul_i32_shift3", "mul", [I, I], I, [g_int(-2**15, 2**15)] * 2, r_mul_shift(3),
      consts=(SHIFT3,)),
    V("pow_f32", "pow", [F, F], F, [g_float(0.5, 3), g_float(-2, 2)],
      lambda a, b: np.power(f64(a), f64(b)), cmp="tol"),
    V("maximum_f32", "maximum", [F, F], F, [g_float_ties] * 2, np.maximum),
    V("maximum_i32", "maximum", [I, I], I, [g_int_full] * 2, np.maximum),
    V("minimum_f32", "minimum", [F, F], F, [g_float_ties] * 2, np.minimum),
    V("minimum_i32", "minimum", [I, I], I, [g_int_full] * 2, np.minimum),
    V("maximum_f32_nan", "maximum", [F, F], F, [g_float_nan] * 2, r_maximum_propagate),
    V("minimum_f32_nan_ignore", "minimum", [F, F], F, [g_float_nan] * 2, r_minimum_ignore,
      attrs="{nan_mode = IGNORE}"),
    V("maximum_f32_nan_ignore", "maximum", [F, F], F, [g_float_nan] * 2, np.fmax,
      attrs="{nan_mode = IGNORE}"),
    V("arithmetic_right_shift_i32", "arithmetic_right_shift", [I, I], I,
      [g_int_full, g_shift], r_ashr(False), attrs="{round = false}"),
    V("arithmetic_right_shift_i32_round", "arithmetic_right_shift", [I, I], I,
      [g_int_full, g_shift], r_ashr(True), attrs="{round = true}"),
    V("logical_left_shift_i32", "logical_left_shift", [I, I], I, [g_int_full, g_shift], r_lshl),
    V("logical_right_shift_i32", "logical_right_shift", [I, I], I, [g_int_full, g_shift], r_lshr),
    V("bitwise_and_i32", "bitwise_and", [I, I], I, [g_int_full] * 2, np.bitwise_and),
    V("bitwise_or_i32", "bitwise_or", [I, I], I, [g_int_full] * 2, np.bitwise_or),
    V("bitwise_xor_i32", "bitwise_xor", [I, I], I, [g_int_full] * 2, np.bitwise_xor),
    V("intdiv_i32", "intdiv", [I, I], I, [g_int(-1000, 1000), g_divisor], r_intdiv),
    V("equal_f32", "equal", [F, F], B, [g_float_ties] * 2, np.equal),
    V("equal_i32", "equal", [I, I], B, [g_int_ties] * 2, np.equal),
    V("greater_f32", "greater", [F, F], B, [g_float_ties] * 2, np.greater),
    V("greater_i32", "greater", [I, I], B, [g_int_ties] * 2, np.greater),
    V("greater_equal_f32", "greater_equal", [F, F], B, [g_float_ties] * 2, np.greater_equal),
    V("greater_equal_i32", "greater_equal", [I, I], B, [g_int_ties] * 2, np.greater_equal),
    V("logical_and_i1", "logical_and", [B, B], B, [g_bool] * 2, np.logical_and),
    V("logical_or_i1", "logical_or", [B, B], B, [g_bool] * 2, np.logical_or),
    V("logical_xor_i1", "logical_xor", [B, B], B, [g_bool] * 2, np.logical_xor),
    # ---- ternary
    V("select_f32", "select", [B, F, F], F, [g_bool, gf, gf], np.where),
    V("select_i32", "select", [B, I, I], I, [g_bool, g_int_full, g_int_full], np.where),
    V("select_i1", "select", [B, B, B], B, [g_bool] * 3, np.where),
]

# --------------------------------------------------------------------------
# Shape patterns: per arity, the declared operand shapes (None = "?") and the
# runtime shapes of each call.
# --------------------------------------------------------------------------

D = None


class Pattern:
    def __init__(self, name, label, shapes, calls, strided=False):
        self.name, self.label, self.shapes, self.calls = name, label, shapes, calls
        self.strided = strided  # also call with sliced / transposed inputs


PATTERNS = {
    1: [
        Pattern("static", "a", [[2, 3]], [[[2, 3]]], strided=True),
        Pattern("dyn_one", "c", [[D, 3]], [[[1, 3]], [[4, 3]]]),
        Pattern("dyn_equal", "d", [[D, D]], [[[4, 5]], [[1, 1]], [[3, 67]]]),
        Pattern("rank0", "a", [[]], [[[]]]),
    ],
    2: [
        Pattern("static", "a", [[2, 3], [2, 3]], [[[2, 3], [2, 3]]], strided=True),
        Pattern("bcast", "b", [[1, 3], [2, 3]], [[[1, 3], [2, 3]]]),
        Pattern("bcast3d", "b", [[2, 1, 4], [1, 3, 1]], [[[2, 1, 4], [1, 3, 1]]]),
        Pattern("dyn_one", "c", [[D, 3], [D, 3]],
                [[[1, 3], [4, 3]], [[4, 3], [1, 3]], [[1, 3], [1, 3]], [[33, 3], [1, 3]]]),
        Pattern("dyn_equal", "d", [[D, D], [D, D]], [[[4, 5], [4, 5]], [[3, 67], [3, 67]]]),
        Pattern("dyn_both", "c", [[D, D], [D, D]],
                [[[4, 1], [1, 5]], [[1, 5], [4, 1]], [[5, 1], [1, 67]]]),
        Pattern("mixed", "c", [[D, 3], [4, 3]], [[[1, 3], [4, 3]], [[4, 3], [4, 3]]]),
        Pattern("rank0", "a", [[], []], [[[], []]]),
    ],
    3: [
        Pattern("static", "a", [[2, 3]] * 3, [[[2, 3]] * 3], strided=True),
        Pattern("bcast", "b", [[2, 1], [1, 3], [1, 1]], [[[2, 1], [1, 3], [1, 1]]]),
        Pattern("bcast3d", "b", [[1, 3, 1], [2, 1, 4], [1, 1, 4]],
                [[[1, 3, 1], [2, 1, 4], [1, 1, 4]]]),
        Pattern("dyn_one", "c", [[D, 3]] * 3,
                [[[1, 3], [4, 3], [4, 3]], [[4, 3], [1, 3], [4, 3]],
                 [[4, 3], [4, 3], [1, 3]], [[1, 3], [1, 3], [1, 3]]]),
        Pattern("dyn_equal", "d", [[D, D]] * 3, [[[4, 5]] * 3, [[3, 67]] * 3]),
        Pattern("dyn_both", "c", [[D, D]] * 3,
                [[[4, 1], [1, 5], [4, 5]], [[1, 1], [4, 1], [1, 5]]]),
        Pattern("mixed", "c", [[D, 3], [4, 3], [D, 3]],
                [[[1, 3], [4, 3], [4, 3]], [[4, 3], [4, 3], [1, 3]]]),
        Pattern("rank0", "a", [[], [], []], [[[], [], []]]),
    ],
}

PATTERN_ORDER = ["static", "bcast", "bcast3d", "dyn_one", "dyn_equal", "dyn_both", "mixed",
                 "rank0"]


def result_shape(shapes):
    """Declared result shape: static if any operand has a static size > 1
    there (or all are static 1), else dynamic."""
    out = []
    for dims in zip(*shapes):
        big = [d for d in dims if d is not None and d != 1]
        if big:
            out.append(big[0])
        elif all(d == 1 for d in dims):
            out.append(1)
        else:
            out.append(None)
    return out


def tensor_type(shape, t):
    return "tensor<%s%s>" % ("".join(("?" if d is None else str(d)) + "x" for d in shape), t)


def fn_name(variant, pattern):
    return "%s__%s" % (variant.name, pattern.name)


def mlir_function(v, p):
    shapes = p.shapes
    rshape = result_shape(shapes)
    args = ", ".join("%%a%d: %s" % (i, tensor_type(s, t))
                     for i, (s, t) in enumerate(zip(shapes, v.types)))
    rty = tensor_type(rshape, v.rtype)
    lines = ["func.func @%s(%s) -> %s {" % (fn_name(v, p), args, rty)]
    operands = ["%%a%d" % i for i in range(v.arity)]
    optypes = [tensor_type(s, t) for s, t in zip(shapes, v.types)]
    for k, (cty, lit) in enumerate(v.consts):
        lines.append('  %%k%d = "tosa.const"() <{values = %s : %s}> : () -> %s'
                     % (k, lit, cty, cty))
        operands.append("%%k%d" % k)
        optypes.append(cty)
    attrs = (" " + v.attrs) if v.attrs else ""
    lines.append("  %%r = tosa.%s %s%s : (%s) -> %s"
                 % (v.op, ", ".join(operands), attrs, ", ".join(optypes), rty))
    lines.append("  return %%r : %s" % rty)
    lines.append("}")
    return "\n".join(lines)


def mlir_module(cases):
    head = "// Generated by numeric_diff.py: one function per op variant x shape pattern.\n"
    return head + "\n\n".join(mlir_function(v, p) for v, p in cases) + "\n"


# --------------------------------------------------------------------------
# Memref descriptors
# --------------------------------------------------------------------------

_DESC = {}


def descriptor_type(rank):
    if rank not in _DESC:
        fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
                  ("offset", ctypes.c_int64)]
        if rank > 0:
            fields += [("sizes", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]
        _DESC[rank] = type("MemRef%dD" % rank, (ctypes.Structure,), {"_fields_": fields})
    return _DESC[rank]


def make_descriptor(view, base):
    """Descriptor of numpy `view`, a view into the C-contiguous array `base`:
    aligned = base's data, offset = where view starts, strides in elements."""
    item = view.itemsize
    desc = descriptor_type(view.ndim)()
    desc.allocated = base.ctypes.data
    desc.aligned = base.ctypes.data
    byte_off = view.ctypes.data - base.ctypes.data
    assert byte_off % item == 0
    desc.offset = byte_off // item
    for i in range(view.ndim):
        assert view.strides[i] % item == 0
        desc.sizes[i] = view.shape[i]
        desc.strides[i] = view.strides[i] // item
    return desc


def read_descriptor(desc, rank, etype):
    """Copy of the array a result descriptor describes (raw bytes for i1)."""
    sizes = [desc.sizes[i] for i in range(rank)]
    strides = [desc.strides[i] for i in range(rank)]
    if any(s == 0 for s in sizes):
        return np.zeros(sizes, dtype=NP_DTYPE[etype]), sizes, strides
    if not desc.aligned:
        raise RuntimeError("result descriptor has a null aligned pointer")
    lo = desc.offset + sum(min(0, (n - 1) * st) for n, st in zip(sizes, strides))
    hi = desc.offset + sum(max(0, (n - 1) * st) for n, st in zip(sizes, strides))
    if lo < 0:
        raise RuntimeError("result descriptor reaches before aligned (offset %d, strides %s)"
                           % (desc.offset, strides))
    ctype = C_ELEM[etype]
    flat = np.ctypeslib.as_array(ctypes.cast(desc.aligned, ctypes.POINTER(ctype)),
                                 shape=(hi + 1,))
    item = ctypes.sizeof(ctype)
    arr = np.lib.stride_tricks.as_strided(flat[desc.offset:], shape=sizes,
                                          strides=[s * item for s in strides])
    return np.array(arr, copy=True), sizes, strides


def layouts(arr, kind):
    """(view, base) with the values of `arr` in a given memory layout."""
    if kind == "contiguous":
        base = np.array(arr, order="C")     # keeps rank 0
        return base, base
    if kind == "sliced":        # every other row/column, non-zero offset
        big = np.zeros([2 * n + 1 for n in arr.shape], dtype=arr.dtype)
        sl = tuple(slice(1, 1 + 2 * n, 2) for n in arr.shape)
        big[sl] = arr
        return big[sl], big
    if kind == "transposed":    # column-major
        base = np.ascontiguousarray(arr.T)
        return base.T, base
    raise ValueError(kind)


# --------------------------------------------------------------------------
# Compile and run
# --------------------------------------------------------------------------

def compile_module(args, text, stem):
    src = os.path.join(args.work, stem + ".mlir")
    lib = os.path.join(args.work, stem + ".so")
    with open(src, "w") as f:
        f.write(text)
    for path in (lib, os.path.join(args.work, stem + ".h")):
        if os.path.exists(path):
            os.remove(path)
    cmd = [args.tosa_lsp, "compile", src, "-o", lib, "--emit=shared", "--header",
           "-O%d" % args.opt, "--mode=%s" % args.mode, "--quiet"]
    if args.strided:
        cmd.append("--strided")
    if args.streaming_stores:
        cmd.append("--streaming-stores=%s" % args.streaming_stores)
    t0 = time.time()
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True)
    except OSError as e:
        print("numeric_diff.py: error: cannot run %s: %s" % (args.tosa_lsp, e))
        sys.exit(1)
    dt = time.time() - t0
    ok = proc.returncode == 0 and os.path.exists(lib)
    msg = (proc.stderr + proc.stdout).strip()
    return ok, lib, msg, dt


def header_decl_re(fn, v, p):
    def ty(t, rank):
        return r"tosa_memref_%s_%dd" % (re.escape(t), rank)
    rank = len(p.shapes[0])
    parts = [ty(v.rtype, rank) + r" \*result"]
    parts += [ty(t, rank) + r" \*arg%d" % i for i, t in enumerate(v.types)]
    return re.compile(r"void _mlir_ciface_%s\(%s\);" % (re.escape(fn), r", ".join(parts)))


def header_into_re(fn, v, p):
    """The destination-passing twin: inputs, then the caller's result."""
    rank = len(p.shapes[0])
    parts = [r"tosa_memref_%s_%dd \*arg%d" % (re.escape(t), rank, i)
             for i, t in enumerate(v.types)]
    parts.append(r"tosa_memref_%s_%dd \*out0" % (re.escape(v.rtype), rank))
    return re.compile(r"void _mlir_ciface_%s_into\(%s\);"
                      % (re.escape(fn), r", ".join(parts)))


def contiguous_abi(args):
    """Outside upstream mode entry points read inputs as contiguous arrays
    (unless --strided) and have a `_into` twin."""
    return args.mode != "upstream" and not args.strided


class Result:
    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.lines = []
        self.cell = {}        # (variant, pattern) -> "ok" | "FAIL" | "n/l"

    def mark(self, vname, pname, ok):
        prev = self.cell.get((vname, pname))
        self.cell[(vname, pname)] = "FAIL" if (not ok or prev == "FAIL") else "ok"

    def fail(self, vname, pname, msg):
        self.failed += 1
        self.mark(vname, pname, False)
        self.lines.append("FAIL %s__%s: %s" % (vname, pname, msg))

    def ok(self, vname, pname):
        self.passed += 1
        self.mark(vname, pname, True)


def compare(v, out, raw_u8, ref, exp_shape):
    """None if equal (within tolerance), else a message with the max error."""
    if list(out.shape) != list(exp_shape):
        return "result sizes %s, expected %s" % (list(out.shape), list(exp_shape))
    if v.rtype == "i1":
        bad = ~np.isin(raw_u8, [0, 1])
        if bad.any():
            return "i1 result bytes not 0/1: %s" % sorted(set(raw_u8[bad].tolist()))[:5]
    ref = np.broadcast_to(np.asarray(ref), exp_shape)
    if v.cmp == "exact":
        want = ref.astype(NP_DTYPE[v.rtype])
        if v.rtype == "f32":
            same = (out == want) | (np.isnan(out) & np.isnan(want))
            # -0.0 vs 0.0 counts as a mismatch for exact float ops
            same &= np.signbit(out) == np.signbit(want)
        else:
            same = out == want
        if same.all():
            return None
        i = np.argwhere(~same)[0]
        with np.errstate(invalid="ignore"):
            err = np.nanmax(np.abs(out.astype(np.float64) - want.astype(np.float64))) \
                if not np.isnan(out.astype(np.float64) - want.astype(np.float64)).all() else float("nan")
        return ("%d/%d elements differ, max abs error %g; first at %s: got %r, expected %r"
                % ((~same).sum(), same.size, err, tuple(int(k) for k in i),
                   out[tuple(i)].item(), want[tuple(i)].item()))
    ref64 = ref.astype(np.float64)
    o64 = out.astype(np.float64)
    close = np.isclose(o64, ref64, rtol=RTOL, atol=ATOL, equal_nan=True)
    if close.all():
        return None
    with np.errstate(invalid="ignore"):
        diff = np.abs(o64 - ref64)
        rel = diff / np.maximum(np.abs(ref64), 1e-30)
    i = np.argwhere(~close)[0]
    return ("%d/%d elements outside rtol %g atol %g, max abs error %g, max rel error %g; "
            "first at %s: got %r, expected %r"
            % ((~close).sum(), close.size, RTOL, ATOL, np.nanmax(diff), np.nanmax(rel),
               tuple(int(k) for k in i), o64[tuple(i)], ref64[tuple(i)]))


def run_cases(args, lib_path, cases, res, rng, libc):
    lib = ctypes.CDLL(lib_path)
    header_path = lib_path[:-3] + ".h"
    header = open(header_path).read() if os.path.exists(header_path) else ""
    if not header:
        res.failed += 1
        res.lines.append("FAIL header %s missing or empty" % header_path)
    for v, p in cases:
        fn = fn_name(v, p)
        if header and not header_decl_re(fn, v, p).search(header):
            res.fail(v.name, p.name, "header has no declaration matching %s"
                     % header_decl_re(fn, v, p).pattern)
        try:
            cfun = getattr(lib, "_mlir_ciface_" + fn)
        except AttributeError:
            res.fail(v.name, p.name, "symbol _mlir_ciface_%s not in %s" % (fn, lib_path))
            continue
        cfun.restype = None
        into = None
        if args.mode != "upstream":
            if header and not header_into_re(fn, v, p).search(header):
                res.fail(v.name, p.name, "header has no declaration matching %s"
                         % header_into_re(fn, v, p).pattern)
            into = getattr(lib, "_mlir_ciface_%s_into" % fn, None)
            if into is None:
                res.fail(v.name, p.name, "symbol _mlir_ciface_%s_into missing" % fn)
            else:
                into.restype = None
        rank = len(p.shapes[0])
        calls = [(shapes, "contiguous") for shapes in p.calls]
        if p.strided and not contiguous_abi(args):
            calls += [(p.calls[0], "sliced"), (p.calls[0], "transposed")]
        for shapes, layout in calls:
            inputs = [np.array(g(rng, tuple(s))) for g, s in zip(v.gens, shapes)]
            keep = []
            descs = []
            for arr in inputs:
                view, base = layouts(arr, layout)
                keep.append((view, base, base.copy()))
                descs.append(make_descriptor(view, base))
            out_desc = descriptor_type(rank)()
            what = "call %s%s" % ("+".join("x".join(map(str, s)) or "rank0" for s in shapes),
                                  "" if layout == "contiguous" else " (%s inputs)" % layout)
            if args.verbose:   # before the call: names the culprit of a crash
                sys.stderr.write("numeric_diff: %s %s\n" % (fn, what))
                sys.stderr.flush()
            cfun(ctypes.byref(out_desc), *[ctypes.byref(d) for d in descs])
            try:
                raw, sizes, strides = read_descriptor(
                    out_desc, rank, "i1" if v.rtype == "i1" else v.rtype)
            except RuntimeError as e:
                res.fail(v.name, p.name, "%s: %s" % (what, e))
                continue
            if v.rtype == "i1":
                raw_u8 = raw
                out = raw.astype(np.bool_)
            else:
                raw_u8 = None
                out = raw
            exp_shape = list(np.broadcast_shapes(*[tuple(s) for s in shapes]))
            with np.errstate(all="ignore"):
                ref = v.ref(*inputs)
            msg = compare(v, out, raw_u8, ref, exp_shape)
            for view, base, orig in keep:
                if not np.array_equal(base, orig, equal_nan=(base.dtype.kind == "f")):
                    msg = (msg + "; " if msg else "") + "an input buffer was modified"
            if msg:
                res.fail(v.name, p.name, "%s: %s" % (what, msg))
            else:
                res.ok(v.name, p.name)
            if out_desc.allocated and all(out_desc.allocated != b.ctypes.data
                                          for _, b, _ in keep):
                libc.free(ctypes.c_void_p(out_desc.allocated))
            if into is None or msg:
                continue
            # The same call into a caller-provided result buffer.
            dst = np.full(exp_shape, 7, dtype=np.uint8 if v.rtype == "i1"
                          else NP_DTYPE[v.rtype])
            into(*[ctypes.byref(d) for d in descs],
                 ctypes.byref(make_descriptor(dst, dst)))
            out = dst.astype(np.bool_) if v.rtype == "i1" else dst
            msg = compare(v, out, dst if v.rtype == "i1" else None, ref, exp_shape)
            if msg:
                res.fail(v.name, p.name, "%s into a caller buffer: %s" % (what, msg))
            else:
                res.ok(v.name, p.name)


def patterns_for(v):
    return PATTERNS[v.arity]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tosa-lsp", required=True)
    ap.add_argument("--work", required=True, help="directory for temporary files")
    ap.add_argument("--seed", type=int, default=20240607)
    ap.add_argument("--opt", type=int, default=2, choices=[0, 1, 2, 3])
    ap.add_argument("--mode", default="upstream",
                    choices=["upstream", "fast", "safe", "versioned"],
                    help="lowering mode passed to tosa-lsp compile")
    ap.add_argument("--strided", action="store_true",
                    help="compile with --strided (entry points take any strides)")
    ap.add_argument("--streaming-stores", default="",
                    help="compile with --streaming-stores=VALUE (1: every "
                    "loop nest that may stream does, whatever its size)")
    ap.add_argument("--only", default="", help="comma-separated variant names")
    ap.add_argument("--verbose", action="store_true",
                    help="name every call on stderr before making it")
    args = ap.parse_args()
    faulthandler.enable()     # a crash in compiled code still says where
    os.makedirs(args.work, exist_ok=True)
    t_start = time.time()
    rng = np.random.default_rng(args.seed)
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    libc.free.argtypes = [ctypes.c_void_p]
    libc.free.restype = None

    variants = VARIANTS
    if args.only:
        names = set(args.only.split(","))
        variants = [v for v in variants if v.name in names or v.op in names]
    res = Result()
    not_lowered = {}     # variant name -> error text
    compile_time = 0.0

    def cases_of(vs):
        return [(v, p) for v in vs for p in patterns_for(v)]

    main_vs = [v for v in variants if v.name not in KNOWN_NOT_LOWERED]
    side_vs = [v for v in variants if v.name in KNOWN_NOT_LOWERED]
    groups = []   # (cases, lib path)
    if main_vs:
        ok, lib, msg, dt = compile_module(args, mlir_module(cases_of(main_vs)), "numeric")
        compile_time += dt
        if ok:
            groups.append((cases_of(main_vs), lib))
        else:
            res.lines.append("note: the main module failed to compile; compiling each "
                             "variant alone:\n    " + msg.replace("\n", "\n    "))
            side_vs = main_vs + side_vs
    for v in side_vs:
        ok, lib, msg, dt = compile_module(args, mlir_module(cases_of([v])), "numeric_" + v.name)
        compile_time += dt
        if ok:
            groups.append((cases_of([v]), lib))
            if v.name in KNOWN_NOT_LOWERED:
                res.lines.append("note: %s now lowers; its cases run (drop it from "
                                 "KNOWN_NOT_LOWERED)" % v.name)
        elif v.name in KNOWN_NOT_LOWERED:
            not_lowered[v.name] = msg
            for p in patterns_for(v):
                res.cell[(v.name, p.name)] = "n/l"
        else:
            for p in patterns_for(v):
                res.fail(v.name, p.name, "does not compile: " + msg.splitlines()[0]
                         if msg else "does not compile")
            res.lines.append("  %s: %s" % (v.name, msg.replace("\n", "\n    ")))

    t_run = time.time()
    for cases, lib in groups:
        run_cases(args, lib, cases, res, rng, libc)
    t_end = time.time()

    for line in res.lines:
        print(line)
    # Summary table: one row per variant, one column per pattern.
    width = max(len(v.name) for v in variants) if variants else 10
    hdr = "%-*s" % (width, "variant") + "".join(" %-9s" % p for p in PATTERN_ORDER)
    print(hdr)
    print("-" * len(hdr))
    for v in variants:
        names = {p.name for p in patterns_for(v)}
        cells = [res.cell.get((v.name, p), "?") if p in names else "-" for p in PATTERN_ORDER]
        print("%-*s" % (width, v.name) + "".join(" %-9s" % c for c in cells))
    print("(ok: every call matched numpy; FAIL: see above; n/l: not lowered; -: n/a)")
    for name, msg in sorted(not_lowered.items()):
        first = [l for l in msg.splitlines() if "error" in l]
        print("not lowered: %s: %s" % (name, first[0] if first else msg))
    print("timing: compile %.2fs, run %.2fs, total %.2fs (-O%d, seed %d)"
          % (compile_time, t_end - t_run, t_end - t_start, args.opt, args.seed))
    print("numeric: %d passed, %d failed" % (res.passed, res.failed))
    return 1 if res.failed else 0


if __name__ == "__main__":
    sys.exit(main())
