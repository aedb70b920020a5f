#!/usr/bin/env python3
"""Memory-bound TOSA ops (issue 41): depthwise conv 3x3, avg_pool2d 2x2 s2,
max_pool2d 3x3 s2, reduce_sum over C, reduce_max over H, transpose NHWC ->
NCHW, compiled by `tosa-lsp compile` (default mode, fresh result freed in
the timing) beside numpy's best formulation (sliding_window_view + einsum for
the depthwise conv, reshape + mean, sliding_window_view + max) and the
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
fns = {
 "dw3x3": ("func.func @dw3x3(%%x: %s, %%w: %s, %%b: %s) -> %s {\n%s  %%r = tosa.depthwise_conv2d %%x, %%w, %%b, %%zp, %%zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (%s, %s, %s, tensor<1xf32>, tensor<1xf32>) -> %s\n  return %%r : %s\n}\n" % (X, t(3,3,C,1), t(C), X, zp, X, t(3,3,C,1), t(C), X, X), 1.0),
 "avgpool2s2": ("func.func @avgpool2s2(%%x: %s) -> %s {\n%s  %%r = tosa.avg_pool2d %%x, %%zp, %%zp {acc_type = f32, kernel = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>} : (%s, tensor<1xf32>, tensor<1xf32>) -> %s\n  return %%r : %s\n}\n" % (X, t(N,H//2,W//2,C), zp, X, t(N,H//2,W//2,C), t(N,H//2,W//2,C)), 0.625),
 "maxpool3s2": ("func.func @maxpool3s2(%%x: %s) -> %s {\n  %%r = tosa.max_pool2d %%x {kernel = array<i64: 3, 3>, pad = array<i64: 0, 1, 0, 1>, stride = array<i64: 2, 2>} : (%s) -> %s\n  return %%r : %s\n}\n" % (X, t(N,H//2,W//2,C), X, t(N,H//2,W//2,C), t(N,H//2,W//2,C)), 0.625),
 "reducesumC": ("func.func @reducesumC(%%x: %s) -> %s {\n  %%r = tosa.reduce_sum %%x {axis = 3 : i32} : (%s) -> %s\n  return %%r : %s\n}\n" % (X, t(N,H,W,1), X, t(N,H,W,1), t(N,H,W,1)), 0.5),
 "reducemaxH": ("func.func @reducemaxH(%%x: %s) -> %s {\n  %%r = tosa.reduce_max %%x {axis = 1 : i32} : (%s) -> %s\n  return %%r : %s\n}\n" % (X, t(N,1,W,C), X, t(N,1,W,C), t(N,1,W,C)), 0.5),
 "transposeNCHW": ("func.func @transposeNCHW(%%x: %s) -> %s {\n  %%r = tosa.transpose %%x {perms = array<i32: 0, 3, 1, 2>} : (%s) -> %s\n  return %%r : %s\n}\n" % (X, t(N,C,H,W), X, t(N,C,H,W), t(N,C,H,W)), 1.0),
}
src = os.path.join(args.work, "memory.mlir"); open(src, "w").write("\n".join(v[0] for v in fns.values()))
so = os.path.join(args.work, "memory.so")
subprocess.run([B, "compile", src, "-o", so, "--emit=shared", "-O3", "--quiet", "--force"] + args.flag, check=True)
lib = ctypes.CDLL(so); libc = ctypes.CDLL(ctypes.util.find_library("c")); libc.free.argtypes = [ctypes.c_void_p]
rng = np.random.default_rng(0)
x = rng.uniform(-1, 1, (N, H, W, C)).astype(np.float32)
w = rng.uniform(-1, 1, (3, 3, C, 1)).astype(np.float32); b = rng.uniform(-1, 1, (C,)).astype(np.float32)
src_copy = np.empty_like(x); dst_copy = np.empty_like(x)
from numpy.lib.stride_tricks import sliding_window_view as swv
def np_dw():
    xp = np.pad(x, ((0,0),(1,1),(1,1),(0,0)))
    return np.einsum("nhwcij,ijc->nhwc", swv(xp, (3,3), axis=(1,2)), w[:,:,:,0], optimize=True) + b
def np_avg(): return x.reshape(N, H//2, 2, W//2, 2, C).mean(axis=(2, 4))
def np_max():
    xp = np.pad(x, ((0,0),(0,1),(0,1),(0,0)), constant_values=-np.inf)
    return swv(xp, (3,3), axis=(1,2))[:, ::2, ::2].max(axis=(4,5))
refs = {"dw3x3": np_dw, "avgpool2s2": np_avg, "maxpool3s2": np_max,
        "reducesumC": lambda: x.sum(axis=3, keepdims=True), "reducemaxH": lambda: x.max(axis=1, keepdims=True),
        "transposeNCHW": lambda: np.ascontiguousarray(x.transpose(0, 3, 1, 2))}
if not args.smoke:
    print("load average %.1f, shape %s, thread CPU time, median of %d" % (
        os.getloadavg()[0], args.shape, reps))
failures = 0
for name, (_, floorx) in fns.items():
    f = getattr(lib, "_mlir_ciface_" + name); f.restype = None
    want = refs[name]()
    descs = [make_desc(x)] + ([make_desc(w), make_desc(b)] if name == "dw3x3" else [])
    res = descriptor(4)()
    f(ctypes.byref(res), *[ctypes.byref(a) for a in descs]); got = read(res, want.shape); libc.free(res.allocated)
    # F_into: the result in a buffer the caller provides (no fresh pages).
    fi = getattr(lib, "_mlir_ciface_" + name + "_into"); fi.restype = None
    out = np.zeros(want.shape, np.float32); out_d = make_desc(out)
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
