#!/usr/bin/env python3
"""Memory-bound TOSA ops (issue 41): depthwise conv 3x3 and 5x5 (strides 1
and 2), 7x7, avg_pool2d (2x2 s2, 3x3 s2 padded), max_pool2d (3x3 s2, 2x2 s2, 3x3
s1, 5x5 s1), reduce_sum / reduce_max over C and over H, transpose NHWC -> NCHW,
compiled by `tosa-lsp compile` (default mode, fresh result freed in the
timing) beside numpy's best formulation (sliding_window_view + einsum for
the depthwise conv, reshape + mean, sliding_window_view + max or sum) and the
memory floor: np.copyto of the input times the arrays the op must move
(input read once, output written once) over the two of the copy.

    /usr/bin/python3 bench/kernels/memory.py [--tosa-lsp BIN] [--shape 1x256x256x256] [--reps 7]
    /usr/bin/python3 bench/kernels/memory.py --smoke   # tiny shape, checks only

Timing: the calling thread's CPU time, median of --reps, contenders
interleaved in a shuffled order each rep. Results are compared with numpy
first (max |ours - numpy| <= 1e-4 max |numpy|).
"""

import argparse
import ctypes, ctypes.util, os, subprocess, sys, time, random, statistics
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "test", "lit", "tools"))
import numpy as np
from memref_desc import descriptor, make_desc, read
HERE = os.path.dirname(os.path.abspath(__file__))
ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--tosa-lsp", default=os.path.join(HERE, "..", "..", "build", "bin", "tosa-lsp"))
ap.add_argument("--work", default="/tmp/tosa-lsp-bench-memory")
ap.add_argument("--shape", default="1x256x256x256", help="NxHxWxC (H, W even)")
ap.add_argument("--reps", type=int, default=7)
ap.add_argument("--smoke", action="store_true")
ap.add_argument("--align", type=int, default=0,
                help="put the input, the caller's result buffer and the copy's "
                "arrays at this byte alignment (default: where numpy puts them, "
                "16 bytes past a page for big arrays)")
ap.add_argument("--only", default="", help="comma list of op names (dw3x3, maxpool3s1, ...)")
ap.add_argument("--flag", action="append", default=[], help="extra `compile` flag (repeatable), e.g. --flag=--streaming-stores=off")
args = ap.parse_args()
if args.smoke:
    args.shape, args.reps = "1x8x6x16", 1
os.makedirs(args.work, exist_ok=True)
B = args.tosa_lsp
N, H, W, C = map(int, args.shape.split("x"))
reps = args.reps
def t(*s): return "tensor<%sxf32>" % "x".join(map(str, s))
X = t(N, H, W, C)
zp = '  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>\n'
def pool(name, op, k, s, pad):
    """max_pool2d / avg_pool2d `name`, k x k, stride s, pad (t, b, l, r)."""
    oh = (H + pad[0] + pad[1] - k) // s + 1
    ow = (W + pad[2] + pad[3] - k) // s + 1
    O = t(N, oh, ow, C)
    attrs = "kernel = array<i64: %d, %d>, pad = array<i64: %s>, stride = array<i64: %d, %d>" % (
        k, k, ", ".join(map(str, pad)), s, s)
    if op == "max":
        body = "  %%r = tosa.max_pool2d %%x {%s} : (%s) -> %s\n" % (attrs, X, O)
    else:
        body = zp + "  %%r = tosa.avg_pool2d %%x, %%zp, %%zp {acc_type = f32, %s} : (%s, tensor<1xf32>, tensor<1xf32>) -> %s\n" % (attrs, X, O)
    text = "func.func @%s(%%x: %s) -> %s {\n%s  return %%r : %s\n}\n" % (name, X, O, body, O)
    return text, (1 + (oh * ow) / (H * W)) / 2
def dw_pad(k, s):
    """Same-size padding at stride 1; at stride 2 TF's "same" (more at the end)."""
    return [k // 2] * 4 if s == 1 else [(k - 2) // 2, k // 2, (k - 2) // 2, k // 2]
dw_size = {}  # a depthwise function's window size, for its weights
def dw(name, s, k=3):
    dw_size[name] = k
    pad = dw_pad(k, s)
    oh = (H + pad[0] + pad[1] - k) // s + 1
    ow = (W + pad[2] + pad[3] - k) // s + 1
    O = t(N, oh, ow, C)
    text = ("func.func @%s(%%x: %s, %%w: %s, %%b: %s) -> %s {\n%s  %%r = tosa.depthwise_conv2d %%x, %%w, %%b, %%zp, %%zp "
            "{acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: %s>, stride = array<i64: %d, %d>} : "
            "(%s, %s, %s, tensor<1xf32>, tensor<1xf32>) -> %s\n  return %%r : %s\n}\n" % (
                name, X, t(k,k,C,1), t(C), O, zp, ", ".join(map(str, pad)), s, s, X, t(k,k,C,1), t(C), O, O))
    return text, (1 + (oh * ow) / (H * W)) / 2
def reduce(name, op, axis):
    shape = [N, H, W, C]
    shape[axis] = 1
    O = t(*shape)
    text = "func.func @%s(%%x: %s) -> %s {\n  %%r = tosa.%s %%x {axis = %d : i32} : (%s) -> %s\n  return %%r : %s\n}\n" % (
        name, X, O, op, axis, X, O, O)
    return text, 0.5
fns = {
 # MobileNet's depthwise 3x3 (stride 1 and 2), ResNet's max pool 3x3 s2,
 # VGG's max pool 2x2 s2, Inception's 3x3 s1 pools, average pools.
 "dw3x3": dw("dw3x3", 1),
 "dw3x3s2": dw("dw3x3s2", 2),
 # MobileNetV3's and EfficientNet's depthwise 5x5, YOLO's SPP max pool.
 "dw5x5": dw("dw5x5", 1, 5),
 "dw5x5s2": dw("dw5x5s2", 2, 5),
 # ConvNeXt's depthwise 7x7.
 "dw7x7": dw("dw7x7", 1, 7),
 "maxpool5s1": pool("maxpool5s1", "max", 5, 1, (2, 2, 2, 2)),
 "avgpool2s2": pool("avgpool2s2", "avg", 2, 2, (0, 0, 0, 0)),
 "avgpool3s2": pool("avgpool3s2", "avg", 3, 2, (0, 1, 0, 1)),
 "maxpool3s2": pool("maxpool3s2", "max", 3, 2, (0, 1, 0, 1)),
 "maxpool2s2": pool("maxpool2s2", "max", 2, 2, (0, 0, 0, 0)),
 "maxpool3s1": pool("maxpool3s1", "max", 3, 1, (1, 1, 1, 1)),
 "reducesumC": reduce("reducesumC", "reduce_sum", 3),
 "reducemaxC": reduce("reducemaxC", "reduce_max", 3),
 "reducemaxH": reduce("reducemaxH", "reduce_max", 1),
 "reducesumH": reduce("reducesumH", "reduce_sum", 1),
 "transposeNCHW": ("func.func @transposeNCHW(%%x: %s) -> %s {\n  %%r = tosa.transpose %%x {perms = array<i32: 0, 3, 1, 2>} : (%s) -> %s\n  return %%r : %s\n}\n" % (X, t(N,C,H,W), X, t(N,C,H,W), t(N,C,H,W)), 1.0),
}
src = os.path.join(args.work, "memory.mlir"); open(src, "w").write("\n".join(v[0] for v in fns.values()))
so = os.path.join(args.work, "memory.so")
subprocess.run([B, "compile", src, "-o", so, "--emit=shared", "-O3", "--quiet", "--force"] + args.flag, check=True)
lib = ctypes.CDLL(so); libc = ctypes.CDLL(ctypes.util.find_library("c")); libc.free.argtypes = [ctypes.c_void_p]
rng = np.random.default_rng(0)
def placed(a):
    """`a` copied to an --align boundary (as is without --align)."""
    if not args.align:
        return a
    buf = np.empty(a.size + args.align // 4, a.dtype)
    off = (-buf.ctypes.data % args.align) // a.itemsize
    out = buf[off:off + a.size].reshape(a.shape)
    out[...] = a
    return out
x = placed(rng.uniform(-1, 1, (N, H, W, C)).astype(np.float32))
ws = {k: rng.uniform(-1, 1, (k, k, C, 1)).astype(np.float32) for k in set(dw_size.values())}; b = rng.uniform(-1, 1, (C,)).astype(np.float32)
src_copy = np.empty_like(x); dst_copy = placed(np.empty_like(x))
from numpy.lib.stride_tricks import sliding_window_view as swv
def np_dw(s, k=3):
    p = dw_pad(k, s)
    xp = np.pad(x, ((0,0),(p[0],p[1]),(p[2],p[3]),(0,0)))
    return np.einsum("nhwcij,ijc->nhwc", swv(xp, (k,k), axis=(1,2))[:, ::s, ::s], ws[k][:,:,:,0], optimize=True) + b
def np_pool(op, k, s, pad):
    fill = -np.inf if op == "max" else 0.0
    xp = np.pad(x, ((0,0),(pad[0],pad[1]),(pad[2],pad[3]),(0,0)), constant_values=fill)
    win = swv(xp, (k,k), axis=(1,2))[:, ::s, ::s]
    if op == "max":
        return win.max(axis=(4,5))
    if k == 2 and s == 2 and not any(pad):
        return x.reshape(N, H//2, 2, W//2, 2, C).mean(axis=(2, 4))
    ones = np.pad(np.ones((1, H, W, 1), np.float32), ((0,0),(pad[0],pad[1]),(pad[2],pad[3]),(0,0)))
    count = swv(ones, (k,k), axis=(1,2))[:, ::s, ::s].sum(axis=(4,5))
    return win.sum(axis=(4,5)) / count
refs = {"dw3x3": lambda: np_dw(1), "dw3x3s2": lambda: np_dw(2),
        "dw5x5": lambda: np_dw(1, 5), "dw5x5s2": lambda: np_dw(2, 5),
        "dw7x7": lambda: np_dw(1, 7),
        "maxpool5s1": lambda: np_pool("max", 5, 1, (2, 2, 2, 2)),
        "avgpool2s2": lambda: np_pool("avg", 2, 2, (0, 0, 0, 0)),
        "avgpool3s2": lambda: np_pool("avg", 3, 2, (0, 1, 0, 1)),
        "maxpool3s2": lambda: np_pool("max", 3, 2, (0, 1, 0, 1)),
        "maxpool2s2": lambda: np_pool("max", 2, 2, (0, 0, 0, 0)),
        "maxpool3s1": lambda: np_pool("max", 3, 1, (1, 1, 1, 1)),
        "reducesumC": lambda: x.sum(axis=3, keepdims=True), "reducemaxC": lambda: x.max(axis=3, keepdims=True),
        "reducemaxH": lambda: x.max(axis=1, keepdims=True), "reducesumH": lambda: x.sum(axis=1, keepdims=True),
        "transposeNCHW": lambda: np.ascontiguousarray(x.transpose(0, 3, 1, 2))}
if not args.smoke:
    print("load average %.1f, shape %s, thread CPU time, median of %d, arrays at %s" % (
        os.getloadavg()[0], args.shape, reps,
        "%d-byte boundaries" % args.align if args.align else
        "numpy's addresses (x %% 64 = %d)" % (x.ctypes.data % 64)))
failures = 0
for name, (_, floorx) in fns.items():
    if args.only and name not in args.only.split(","):
        continue
    f = getattr(lib, "_mlir_ciface_" + name); f.restype = None
    want = refs[name]()
    descs = [make_desc(x)] + ([make_desc(ws[dw_size[name]]), make_desc(b)] if name in dw_size else [])
    res = descriptor(4)()
    f(ctypes.byref(res), *[ctypes.byref(a) for a in descs]); got = read(res, want.shape); libc.free(res.allocated)
    # F_into: the result in a buffer the caller provides (no fresh pages).
    fi = getattr(lib, "_mlir_ciface_" + name + "_into"); fi.restype = None
    out = placed(np.zeros(want.shape, np.float32)); out_d = make_desc(out)
    fi(*[ctypes.byref(a) for a in descs], ctypes.byref(out_d))
    err = max(np.abs(got - want).max(), np.abs(out - want).max()) / np.abs(want).max()
    if not err <= 1e-4:
        failures += 1
        print("FAIL %s: max |ours - numpy| = %.2g x max |numpy|" % (name, err))
    if args.smoke:
        continue
    def ours():
        f(ctypes.byref(res), *[ctypes.byref(a) for a in descs]); libc.free(res.allocated)
    def ours_into():
        fi(*[ctypes.byref(a) for a in descs], ctypes.byref(out_d))
    cont = {"copy": lambda: np.copyto(dst_copy, x), "numpy": refs[name], "ours": ours,
            "into": ours_into, "fresh copy": lambda: x.copy()}
    times = {k: [] for k in cont}; order = list(cont)
    for r in range(reps):
        random.Random(r).shuffle(order)
        for k in order:
            t0 = time.thread_time(); cont[k](); times[k].append(time.thread_time() - t0)
    med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
    floor = med["copy"] * floorx
    print("%-14s err %.1e  floor %.1f ms  ours %.1f ms (%.2fx floor)  numpy %.1f ms (%.2fx floor)  ours/numpy %.2f"
          "  into %.1f ms (%.2fx floor)  fresh copy %.2fx copy" % (
        name, err, floor, med["ours"], med["ours"] / floor, med["numpy"], med["numpy"] / floor, med["ours"] / med["numpy"],
        med["into"], med["into"] / floor, med["fresh copy"] / med["copy"]), flush=True)
if args.smoke:
    print("memory-smoke: %d ops, %s" % (len(fns), "ok" if not failures else "%d FAILED" % failures))
sys.exit(1 if failures else 0)
