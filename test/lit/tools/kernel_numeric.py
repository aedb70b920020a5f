#!/usr/bin/env python3
"""Numeric test of the matmul / conv2d kernels (lowering/Kernels.cpp).

    kernel_numeric.py --tosa-lsp BIN --work DIR [--mode fast] [--opt 3]

tosa.matmul and tosa.conv2d cases (sizes that are and are not multiples of
the register tile, batches, padding, strides 1 and 2, 1x1 / 3x3 / 7x7 taps,
channel counts the kernel does not take) are compiled into one shared
library (`compile --emit=shared`), called through ctypes and compared with a
float64 numpy reference: max |ours - ref| <= 1e-4 * max |ref| (the kernels
sum in another order than the scalar loops). With --expect-kernels, the
`vector` stage of each case must hold vector.fma (the kernel path was taken)
exactly when the case says it should. Outside upstream mode each case's
`F_into` twin (the result written into a caller's buffer) is called and
compared too; the `blocks` cases are residual chains (conv 3x3, clamp, conv
1x1, add, clamp per block) long enough that F becomes a call of F_into's
implementation (DestinationTwin.cpp). Prints `kernels: N passed, M failed`.
"""

import ctypes
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from memref_desc import (compile_and_load, descriptor, make_desc as make,  # noqa: E402
                         numeric_args, read, write_module)

# (name, kind, shapes, attributes, kernel expected)
#   matmul: (B, M, K, N)
#   conv2d: (N, H, W, C, F, KH, KW, pad, stride)
#   blocks: (N, H, W, C, blocks)
#   transpose: (shape, perms): big enough (>= 65536 elements) to be vectorised
#   reduce: (shape, axis, "sum" or "max")
#   dwconv: (N, H, W, C, M, KH, KW, pad, stride)
#   maxpool, avgpool: (N, H, W, C, KH, KW, (top, bottom, left, right), stride)
CASES = [
    ("mm_square", "matmul", (1, 64, 64, 64), True),
    ("mm_odd", "matmul", (1, 13, 70, 40), True),
    ("mm_batch", "matmul", (3, 16, 24, 48), True),
    ("mm_thin", "matmul", (1, 1, 96, 33), True),
    # B packed panel by panel (one K block, several N panels).
    ("mm_panels", "matmul", (1, 24, 768, 96), True),
    ("mm_panels_batch", "matmul", (2, 16, 512, 64), True),
    # Several K blocks (KernelTiles.cpp): tiles from zero, C read and added
    # from the second block on. 2 blocks of 1024; 3, batch 2; a packed C
    # (N = 40) with blocks of 512, 512 and 76.
    ("mm_kblocks", "matmul", (1, 16, 2048, 64), True),
    ("mm_kblocks_batch", "matmul", (2, 8, 3072, 32), True),
    ("mm_kblocks_packed", "matmul", (1, 16, 1100, 40), True),
    ("conv3x3", "conv2d", (1, 14, 14, 16, 32, 3, 3, 1, 1), True),
    ("conv3x3_s2", "conv2d", (2, 15, 13, 8, 64, 3, 3, 1, 2), True),
    ("conv1x1", "conv2d", (1, 7, 7, 32, 16, 1, 1, 0, 1), True),
    # 13 columns: blocks of 8 and a peeled block of 5.
    ("conv3x3_ow13", "conv2d", (1, 5, 13, 8, 32, 3, 3, 1, 1), True),
    ("conv1x1_s2", "conv2d", (1, 15, 15, 16, 32, 1, 1, 0, 2), True),
    # Several channel blocks: weights transposed into panels per block.
    ("conv3x3_panel", "conv2d", (2, 6, 7, 32, 64, 3, 3, 1, 1), True),
    ("conv1x1_s2_panel", "conv2d", (1, 9, 9, 16, 96, 1, 1, 0, 2), True),
    ("conv3x3_panel_ow13", "conv2d", (1, 4, 13, 16, 64, 3, 3, 1, 1), True),
    ("conv7x7_s2", "conv2d", (1, 21, 21, 3, 16, 7, 7, 3, 2), True),
    # Big enough for --threads (2^24 FLOP and up, lowering/Kernels.cpp):
    # N panels on threads, with K blocks and padded rows; channel blocks;
    # 3 channel blocks, whose rows the threads share instead.
    ("mm_threads", "matmul", (1, 512, 256, 512), True),
    ("mm_threads_kblocks", "matmul", (1, 200, 2048, 96), True),
    ("conv_threads", "conv2d", (1, 28, 28, 64, 128, 3, 3, 1, 1), True),
    ("conv_threads_f96", "conv2d", (1, 30, 30, 64, 96, 3, 3, 1, 1), True),
    # One N panel, one channel block: the M panels, the rows.
    ("mm_threads_n32", "matmul", (1, 1024, 512, 32), True),
    ("conv_threads_f32", "conv2d", (1, 56, 56, 32, 32, 3, 3, 1, 1), True),
    # 24 and 40 output channels (MobileNet's): tiles of 8-lane vectors on
    # an AVX-512 host (16 lanes otherwise).
    ("conv_f24", "conv2d", (1, 56, 56, 32, 24, 3, 3, 1, 1), True),
    ("conv1x1_f40", "conv2d", (1, 28, 28, 96, 40, 1, 1, 0, 1), True),
    # 12 output channels: not a multiple of the vector; upstream's loops.
    ("conv_f12", "conv2d", (1, 6, 6, 4, 12, 3, 3, 1, 1), False),
    # From 2^20 FLOP, channels padded to a multiple of 8 for the kernel
    # (PaddedChannels.cpp): YOLO's 255-channel 1x1 head; 100 at 3x3, stride
    # 2, a batch of 2.
    ("conv1x1_f255", "conv2d", (1, 13, 13, 64, 255, 1, 1, 0, 1), True),
    ("conv3x3_f100_s2", "conv2d", (2, 15, 15, 32, 100, 3, 3, 1, 2), True),
    # 10 TOSA ops: F keeps its own body; 20: F calls F_into's.
    ("blocks2", "blocks", (1, 6, 5, 16, 2), True),
    ("blocks4", "blocks", (2, 5, 6, 16, 4), True),
    # Vectorised outside the kernels: 16x16 register transposes with
    # AVX-512 (8x8 when 16 does not divide a blocked dim), row copies.
    ("transpose_nchw", "transpose", ((1, 32, 48, 64), (0, 3, 1, 2)), False),
    ("transpose_nchw8", "transpose", ((1, 40, 48, 40), (0, 3, 1, 2)), False),
    ("transpose_hw", "transpose", ((2, 40, 24, 40), (0, 2, 1, 3)), False),
    # Bigger than L2, F_into streams whole lines on a grid shifted to the
    # caller's buffer (StreamTranspose.cpp): checked at every 4-byte offset
    # of a 64-byte line; with a batch of 2 (planes of both batches).
    ("transpose_stream", "transpose", ((2, 128, 128, 64), (0, 3, 1, 2)), False),
    ("transpose_stream2d", "transpose", ((65536, 48), (1, 0)), False),
    # Innermost reductions as vector reductions (MemoryKernels.cpp): a row
    # of 64, rows of 2048 in chunks of 512; over H: the loops.
    ("reduce_sum_c", "reduce", ((2, 5, 6, 64), 3, "sum"), False),
    ("reduce_max_c", "reduce", ((1, 4, 3, 2048), 3, "max"), False),
    ("reduce_sum_h", "reduce", ((1, 8, 4, 32), 1, "sum"), False),
    # Big enough for 4 rows per pass over the result (OuterReductions.cpp);
    # 36 rows: 9 passes; a sum over W of 2 images (an outer dim, not H).
    ("reduce_max_h", "reduce", ((1, 36, 40, 64), 1, "max"), False),
    ("reduce_max_h8", "reduce", ((1, 32, 40, 64), 1, "max"), False),
    ("reduce_sum_w", "reduce", ((2, 12, 32, 96), 2, "sum"), False),
    # Windows unrolled into element-wise ops (WindowOps.cpp): one input per
    # tap, strided views of the (padded) input; multiplier 2: the loops.
    ("dw3x3", "dwconv", (2, 9, 7, 24, 1, 3, 3, 1, 1), False),
    ("dw3x3_s2", "dwconv", (1, 11, 9, 16, 1, 3, 3, 1, 2), False),
    ("dw3x3_m2", "dwconv", (1, 6, 5, 8, 2, 3, 3, 1, 1), False),
    # 32 channels (whole cache lines): the interior's channel loop is strip
    # mined and prefetches (WindowPrefetch.cpp); no padding: no split, the
    # bias still folded; F_into computing the pieces in the caller's buffer.
    ("dw3x3_c32", "dwconv", (2, 9, 7, 32, 1, 3, 3, 1, 1), False),
    ("dw3x3_nopad", "dwconv", (1, 8, 10, 48, 1, 3, 3, 0, 1), False),
    # Stride 1, 11 interior columns: 4 an iteration (2 iterations), then 3
    # alone (WindowPrefetch.cpp's jam); a max pool's too.
    ("dw3x3_jam", "dwconv", (2, 5, 13, 32, 1, 3, 3, 1, 1), False),
    # One line of channels, one interior column: rows of a single vector;
    # 3 lines of channels and a batch of 2 (WindowStreams.cpp).
    ("dw3x3_c16_w3", "dwconv", (1, 4, 3, 16, 1, 3, 3, 1, 1), False),
    ("dw3x3_c48_b2", "dwconv", (2, 6, 13, 48, 1, 3, 3, 1, 1), False),
    # Pads wider than half the window on a small input: more pieces than a
    # 3x3 grid, so the padded input is copied instead (WindowOps.cpp).
    ("dw2x8_pad4_s2", "dwconv", (2, 4, 10, 64, 1, 2, 8, 4, 2), False),
    # 5x5 windows (MobileNetV3, EfficientNet, YOLO's SPP), on small inputs:
    # pad 2 at stride 1 would be 25 pieces, so the padded copy; at stride
    # 2, a 3x3 grid of pieces. (A big input's bound, the pieces' taps:
    # window-pieces.mlir.)
    ("dw5x5", "dwconv", (1, 9, 11, 32, 1, 5, 5, 2, 1), False),
    ("dw5x5_s2", "dwconv", (2, 11, 9, 16, 1, 5, 5, 2, 2), False),
    ("maxpool5x5_s1", "maxpool", (1, 8, 12, 16, 5, 5, (2, 2, 2, 2), 1), False),
    # 7x7 windows: ConvNeXt's depthwise convs as one generic, the window's
    # loops outside the channels' (WindowOps.cpp's windowLoops), the bias
    # folded; pools (ResNet's final average pool) as the named ops' loops.
    ("dw7x7", "dwconv", (1, 12, 10, 32, 1, 7, 7, 3, 1), False),
    ("dw7x7_s2", "dwconv", (2, 13, 11, 16, 1, 7, 7, 3, 2), False),
    ("maxpool7x7_s1", "maxpool", (1, 9, 10, 16, 7, 7, (3, 3, 3, 3), 1), False),
    ("avgpool7x7_global", "avgpool", (2, 7, 7, 64, 7, 7, (0, 0, 0, 0), 1), False),
    ("maxpool3x3_s1", "maxpool", (1, 6, 12, 16, 3, 3, (1, 1, 1, 1), 1), False),
    ("maxpool3x3_s2", "maxpool", (1, 10, 8, 32, 3, 3, (0, 1, 0, 1), 2), False),
    ("maxpool2x2_s2", "maxpool", (2, 8, 6, 16, 2, 2, (0, 0, 0, 0), 2), False),
    # Average pools: the window generic with the divide fused (no padding),
    # and split around a padded border (the count varies there).
    ("avgpool2x2_s2", "avgpool", (2, 8, 12, 32, 2, 2, (0, 0, 0, 0), 2), False),
    ("avgpool3x3_pad", "avgpool", (1, 9, 7, 16, 3, 3, (1, 1, 1, 1), 1), False),
    # Stride 2, padded on one side: border pieces whose counts differ, the
    # divide applied in each (WindowOps.cpp: foldableFinish).
    ("avgpool3x3_s2_pad", "avgpool", (1, 10, 12, 16, 3, 3, (0, 1, 0, 1), 2), False),
]


def ttype(shape):
    return "tensor<%sxf32>" % "x".join(str(d) for d in shape)


CONV = ("tosa.conv2d %%%s, %%%s, %%bias, %%zp, %%zp {acc_type = f32, "
        "dilation = array<i64: 1, 1>, pad = array<i64: %d, %d, %d, %d>, "
        "stride = array<i64: %d, %d>} : (%s, %s, tensor<%dxf32>, tensor<1xf32>, "
        "tensor<1xf32>) -> %s")
RELU = "tosa.clamp %%%s {max_val = 3.4e38 : f32, min_val = 0.0 : f32} : (%s) -> %s"


def blocks(name, s, zp):
    n, h, w, c, count = s
    x, w3, w1 = ttype((n, h, w, c)), ttype((c, 3, 3, c)), ttype((c, 1, 1, c))
    body = ""
    for i in range(count):
        body += ("  %%c%d = %s\n" % (i, CONV % ("x%d" % i, "w3", 1, 1, 1, 1, 1, 1,
                                               x, w3, c, x))
                 + "  %%r%d = %s\n" % (i, RELU % ("c%d" % i, x, x))
                 + "  %%d%d = %s\n" % (i, CONV % ("r%d" % i, "w1", 0, 0, 0, 0, 1, 1,
                                               x, w1, c, x))
                 + "  %%a%d = tosa.add %%d%d, %%x%d : (%s, %s) -> %s\n"
                 % (i, i, i, x, x, x)
                 + "  %%x%d = %s\n" % (i + 1, RELU % ("a%d" % i, x, x)))
    return ("func.func @%s(%%x0: %s, %%w3: %s, %%w1: %s, %%bias: tensor<%dxf32>) -> %s {\n"
            "%s%s  return %%x%d : %s\n}\n"
            % (name, x, w3, w1, c, x, zp, body, count, x))


ZP = '  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>\n'


def pool_shapes(s):
    """A pool's input and output shapes (NHWC) from its case."""
    n, h, w, c, kh, kw, pads, st = s
    oh = (h + pads[0] + pads[1] - kh) // st + 1
    ow = (w + pads[2] + pads[3] - kw) // st + 1
    return (n, h, w, c), (n, oh, ow, c)


def function(name, kind, s):
    if kind == "dwconv":
        n, h, w, c, m, kh, kw, p, st = s
        oh, ow = (h + 2 * p - kh) // st + 1, (w + 2 * p - kw) // st + 1
        x, wt, r = (n, h, w, c), (kh, kw, c, m), (n, oh, ow, c * m)
        return ("func.func @%s(%%x: %s, %%w: %s, %%bias: tensor<%dxf32>) -> %s {\n%s"
                "  %%r = tosa.depthwise_conv2d %%x, %%w, %%bias, %%zp, %%zp {acc_type = f32, "
                "dilation = array<i64: 1, 1>, pad = array<i64: %d, %d, %d, %d>, "
                "stride = array<i64: %d, %d>} : (%s, %s, tensor<%dxf32>, tensor<1xf32>, "
                "tensor<1xf32>) -> %s\n  return %%r : %s\n}\n"
                % (name, ttype(x), ttype(wt), c * m, ttype(r), ZP, p, p, p, p, st, st,
                   ttype(x), ttype(wt), c * m, ttype(r), ttype(r)))
    if kind == "avgpool":
        kh, kw, pads, st = s[4:]
        x, r = pool_shapes(s)
        return ("func.func @%s(%%x: %s) -> %s {\n%s  %%r = tosa.avg_pool2d %%x, %%zp, %%zp "
                "{acc_type = f32, kernel = array<i64: %d, %d>, pad = array<i64: %s>, "
                "stride = array<i64: %d, %d>} : (%s, tensor<1xf32>, tensor<1xf32>) -> %s\n"
                "  return %%r : %s\n}\n"
                % (name, ttype(x), ttype(r), ZP, kh, kw, ", ".join(map(str, pads)), st, st,
                   ttype(x), ttype(r), ttype(r)))
    if kind == "maxpool":
        kh, kw, pads, st = s[4:]
        x, r = pool_shapes(s)
        return ("func.func @%s(%%x: %s) -> %s {\n  %%r = tosa.max_pool2d %%x {kernel = "
                "array<i64: %d, %d>, pad = array<i64: %s>, stride = array<i64: %d, %d>}"
                " : (%s) -> %s\n  return %%r : %s\n}\n"
                % (name, ttype(x), ttype(r), kh, kw, ", ".join(map(str, pads)), st, st,
                   ttype(x), ttype(r), ttype(r)))
    if kind == "reduce":
        shape, axis, op = s
        out = tuple(1 if i == axis else d for i, d in enumerate(shape))
        return ("func.func @%s(%%x: %s) -> %s {\n  %%r = tosa.reduce_%s %%x {axis = %d : i32}"
                " : (%s) -> %s\n  return %%r : %s\n}\n"
                % (name, ttype(shape), ttype(out), op, axis, ttype(shape), ttype(out),
                   ttype(out)))
    if kind == "transpose":
        shape, perms = s
        out = tuple(shape[p] for p in perms)
        return ("func.func @%s(%%x: %s) -> %s {\n  %%r = tosa.transpose %%x {perms = "
                "array<i32: %s>} : (%s) -> %s\n  return %%r : %s\n}\n"
                % (name, ttype(shape), ttype(out), ", ".join(map(str, perms)),
                   ttype(shape), ttype(out), ttype(out)))
    zp = '  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>\n'
    if kind == "blocks":
        return blocks(name, s, zp)
    if kind == "matmul":
        b, m, k, n = s
        a, bb, r = (b, m, k), (b, k, n), (b, m, n)
        return ("func.func @%s(%%a: %s, %%b: %s) -> %s {\n%s"
                "  %%r = tosa.matmul %%a, %%b, %%zp, %%zp : (%s, %s, tensor<1xf32>, "
                "tensor<1xf32>) -> %s\n  return %%r : %s\n}\n"
                % (name, ttype(a), ttype(bb), ttype(r), zp, ttype(a), ttype(bb),
                   ttype(r), ttype(r)))
    n, h, w, c, f, kh, kw, p, st = s
    oh, ow = (h + 2 * p - kh) // st + 1, (w + 2 * p - kw) // st + 1
    x, wt, r = (n, h, w, c), (f, kh, kw, c), (n, oh, ow, f)
    return ("func.func @%s(%%x: %s, %%w: %s, %%bias: tensor<%dxf32>) -> %s {\n%s"
            "  %%r = tosa.conv2d %%x, %%w, %%bias, %%zp, %%zp {acc_type = f32, "
            "dilation = array<i64: 1, 1>, pad = array<i64: %d, %d, %d, %d>, "
            "stride = array<i64: %d, %d>} : (%s, %s, tensor<%dxf32>, tensor<1xf32>, "
            "tensor<1xf32>) -> %s\n  return %%r : %s\n}\n"
            % (name, ttype(x), ttype(wt), f, ttype(r), zp, p, p, p, p, st, st,
               ttype(x), ttype(wt), f, ttype(r), ttype(r)))


def inputs(kind, s, rng):
    if kind == "dwconv":
        n, h, w, c, m, kh, kw, _, _ = s
        return [rng.uniform(-1, 1, (n, h, w, c)), rng.uniform(-1, 1, (kh, kw, c, m)),
                rng.uniform(-1, 1, (c * m,))]
    if kind in ("maxpool", "avgpool"):
        return [rng.uniform(-1, 1, s[:4])]
    if kind in ("transpose", "reduce"):
        return [rng.uniform(-1, 1, s[0])]
    if kind == "blocks":
        n, h, w, c, _ = s
        # Small weights: the chain's values stay of the inputs' magnitude.
        return [rng.uniform(-1, 1, (n, h, w, c)),
                rng.uniform(-0.1, 0.1, (c, 3, 3, c)),
                rng.uniform(-0.3, 0.3, (c, 1, 1, c)), rng.uniform(-1, 1, (c,))]
    if kind == "matmul":
        b, m, k, n = s
        return [rng.uniform(-1, 1, (b, m, k)), rng.uniform(-1, 1, (b, k, n))]
    n, h, w, c, f, kh, kw, p, st = s
    return [rng.uniform(-1, 1, (n, h, w, c)), rng.uniform(-1, 1, (f, kh, kw, c)),
            rng.uniform(-1, 1, (f,))]


def reference(kind, s, ins):
    ins = [a.astype(np.float64) for a in ins]
    if kind == "dwconv":
        x, w, bias = ins
        n, h, wd, c, m, kh, kw, p, st = s
        # Output channel c * M + j: input channel c, multiplier j.
        wf = np.zeros((c * m, kh, kw, c))
        for ci in range(c):
            for j in range(m):
                wf[ci * m + j, :, :, ci] = w[:, :, ci, j]
        return conv(x, wf, bias, (n, h, wd, c, c * m, kh, kw, p, st))
    if kind == "avgpool":
        # The sum over the window's in-bounds elements over their count.
        n, h, w, c, kh, kw, pads, st = s
        xp = np.pad(ins[0], ((0, 0), pads[:2], pads[2:], (0, 0)))
        ones = np.pad(np.ones((1, h, w, 1)), ((0, 0), pads[:2], pads[2:], (0, 0)))
        oh, ow = (xp.shape[1] - kh) // st + 1, (xp.shape[2] - kw) // st + 1
        total, count = np.zeros((n, oh, ow, c)), np.zeros((1, oh, ow, 1))
        for i in range(kh):
            for j in range(kw):
                win = (slice(None), slice(i, i + st * (oh - 1) + 1, st),
                       slice(j, j + st * (ow - 1) + 1, st), slice(None))
                total += xp[win]
                count += ones[win]
        return total / count
    if kind == "maxpool":
        n, h, w, c, kh, kw, pads, st = s
        xp = np.pad(ins[0], ((0, 0), pads[:2], pads[2:], (0, 0)), constant_values=-np.inf)
        oh, ow = (xp.shape[1] - kh) // st + 1, (xp.shape[2] - kw) // st + 1
        out = np.full((n, oh, ow, c), -np.inf)
        for i in range(kh):
            for j in range(kw):
                out = np.maximum(out, xp[:, i:i + st * (oh - 1) + 1:st, j:j + st * (ow - 1) + 1:st, :])
        return out
    if kind == "reduce":
        f = np.sum if s[2] == "sum" else np.max
        return f(ins[0], axis=s[1], keepdims=True)
    if kind == "transpose":
        return ins[0].transpose(s[1])
    if kind == "blocks":
        x, w3, w1, bias = ins
        n, h, w, c, count = s
        for _ in range(count):
            r = np.maximum(conv(x, w3, bias, (n, h, w, c, c, 3, 3, 1, 1)), 0)
            x = np.maximum(conv(r, w1, bias, (n, h, w, c, c, 1, 1, 0, 1)) + x, 0)
        return x
    if kind == "matmul":
        return ins[0] @ ins[1]
    return conv(*ins, s)


def conv(x, w, bias, s):
    n, h, wd, c, f, kh, kw, p, st = s
    xp = np.pad(x, ((0, 0), (p, p), (p, p), (0, 0)))
    oh, ow = (h + 2 * p - kh) // st + 1, (wd + 2 * p - kw) // st + 1
    out = np.broadcast_to(bias, (n, oh, ow, f)).copy()
    for i in range(kh):
        for j in range(kw):
            win = xp[:, i:i + st * (oh - 1) + 1:st, j:j + st * (ow - 1) + 1:st, :]
            out += win @ w[:, i, j, :].T
    return out


def kernel_flops(kind, s):
    if kind == "matmul":
        b, m, k, n = s
        return 2 * b * m * k * n
    n, h, w, c, f, kh, kw, p, st = s
    oh, ow = (h + 2 * p - kh) // st + 1, (w + 2 * p - kw) // st + 1
    return 2 * n * oh * ow * f * kh * kw * c


# Stride-1 windows with whole lines of channels: F_into's rows run as
# line-aligned streams when the input and the result start at the same
# offset in a 64-byte line (WindowStreams.cpp).
STREAM_WINDOWS = {"dw3x3_c32", "dw3x3_nopad", "dw3x3_jam", "dw3x3_c16_w3",
                  "maxpool3x3_s1", "dw3x3_c48_b2"}


def at_offset(a, off):
    """A copy of `a` starting `off` elements past a 64-byte boundary."""
    base = np.full(a.size + 16, np.nan, dtype=a.dtype)
    at = (off - base.ctypes.data // a.itemsize) % 16
    view = base[at:at + a.size].reshape(a.shape)
    view[...] = a
    return view


def main():
    ap = numeric_args()
    ap.add_argument("--expect-kernels", action="store_true")
    ap.add_argument("--streaming-stores", help="passed to compile")
    ap.add_argument("--threads", type=int, default=1, help="passed to compile")
    args = ap.parse_args()
    src = write_module(args.work, "kernels-" + args.mode,
                       [function(n, k, s) for n, k, s, _ in CASES])
    lib = os.path.join(args.work, "kernels-%s-t%d.so" % (args.mode, args.threads))
    so, libc = compile_and_load(
        args.tosa_lsp, src, lib, args.mode, args.opt,
        (["--streaming-stores=" + args.streaming_stores] if args.streaming_stores else [])
        + ["--threads=%d" % args.threads])
    one = None
    if args.threads > 1:
        # Each thread sums in the serial order: the results must equal the
        # one-thread library's bit for bit, call after call (a race would
        # not, or not always).
        one, _ = compile_and_load(
            args.tosa_lsp, src, os.path.join(args.work, "kernels-%s-t1.so" % args.mode),
            args.mode, args.opt)
    rng = np.random.default_rng(11)
    passed = failed = 0
    for name, kind, s, kernel in CASES:
        ins = [a.astype(np.float32) for a in inputs(kind, s, rng)]
        want = reference(kind, s, ins)
        fn = getattr(so, "_mlir_ciface_" + name)
        fn.restype = None
        res = descriptor(want.ndim)()
        descs = [make(a) for a in ins]
        fn(ctypes.byref(res), *[ctypes.byref(d) for d in descs])
        got = read(res, want.shape)
        libc.free(res.allocated)
        err = np.abs(got - want).max() / np.abs(want).max()
        why = "max |ours - ref| = %.2g x max |ref|" % err
        if one is not None:
            serial = getattr(one, "_mlir_ciface_" + name)
            serial.restype = None
            serial(ctypes.byref(res), *[ctypes.byref(d) for d in descs])
            base = read(res, want.shape)
            libc.free(res.allocated)
            for _ in range(8):
                fn(ctypes.byref(res), *[ctypes.byref(d) for d in descs])
                again = read(res, want.shape)
                libc.free(res.allocated)
                if not np.array_equal(again.view(np.uint32), base.view(np.uint32)):
                    err = float("inf")
                    why = "%d threads differ from 1 thread" % args.threads
                    break
        if args.mode != "upstream":
            # F_into into a buffer holding garbage (NaN): every element written;
            # big transposes at each 4-byte offset into a 64-byte line too.
            into = getattr(so, "_mlir_ciface_%s_into" % name)
            into.restype = None
            into_err = 0.0
            offsets = [(-1, -1)]
            if name.startswith("transpose_stream"):
                offsets += [(-1, off) for off in range(16)]
            if name in STREAM_WINDOWS:
                # Input and result at the same offset (the stream path,
                # every head and tail length), and at different ones.
                offsets += [(off, off) for off in range(16)] + [(3, 0), (0, 5)]
            for in_off, off in offsets:
                dest = np.full(want.shape, np.nan, dtype=np.float32)
                if off >= 0:
                    dest = at_offset(dest, off)
                # (The copies stay referenced while the call reads them.)
                placed = [at_offset(a, in_off) for a in ins] if in_off >= 0 else ins
                moved = [make(a) for a in placed] if in_off >= 0 else descs
                into(*[ctypes.byref(d) for d in moved], ctypes.byref(make(dest)))
                e = np.abs(dest - want).max() / np.abs(want).max()
                into_err = e if e != e else max(into_err, e)
            if not into_err <= 1e-4:
                why += "; F_into: %.2g" % into_err
            err = max(err, into_err) if into_err == into_err else into_err
        ok = err <= 1e-4
        if ok and args.expect_kernels:
            stage = subprocess.run(
                [args.tosa_lsp, "lower", src, "--function", name, "--stage=vector",
                 "--mode=" + args.mode], stdout=subprocess.PIPE, check=True,
                universal_newlines=True).stdout
            if ("vector.fma" in stage) != kernel:
                ok = False
                why = "kernel path %s" % ("not taken" if kernel else "taken")
        if ok and args.threads > 1:
            # Threads for the kernels of 2^24 FLOP and more (Kernels.cpp's
            # kMinParallelFlops), none for the others.
            stage = subprocess.run(
                [args.tosa_lsp, "lower", src, "--function", name, "--stage=loops",
                 "--mode=" + args.mode, "--threads=%d" % args.threads],
                stdout=subprocess.PIPE, check=True, universal_newlines=True).stdout
            want_parallel = kernel and kind in ("matmul", "conv2d") and \
                kernel_flops(kind, s) >= 1 << 24
            if ("scf.parallel" in stage) != want_parallel:
                ok = False
                why = "threads %s" % ("not used" if want_parallel else "used")
        if ok:
            passed += 1
        else:
            failed += 1
            print("FAIL %s --mode=%s: %s" % (name, args.mode, why))
    print("kernels: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
