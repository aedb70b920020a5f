#!/usr/bin/env python3
"""Compute-bound kernels: tosa.matmul and tosa.conv2d compiled by `tosa-lsp
compile` (default mode, and upstream's pipeline as the before) beside numpy
with OpenBLAS (one thread) and the core's measured FMA peak, in one run.

    /usr/bin/python3 bench/kernels/compute.py [--tosa-lsp build/bin/tosa-lsp]
        [--reps 7] [--only NAME,...] [--write]   # --write: update README.md
    /usr/bin/python3 bench/kernels/compute.py --smoke   # small sizes, checks only

numpy: OPENBLAS_NUM_THREADS=1. OpenBLAS 0.3.21 (Debian bookworm) does not
know every CPU a VM reports and then falls back to its generic Prescott
(SSE3) kernels; unless --coretype=auto, the script re-runs itself with
OPENBLAS_CORETYPE set to the best kernels the CPU runs (SkylakeX with
AVX-512, Haswell with AVX2), the bar a user with a well-detected CPU sees.
The core OpenBLAS uses is printed with the results.

Every contender is called `--reps` times, interleaved rep by rep in a new
shuffled order each rep; the FMA peak (bench/kernels/fma_peak.c, built with
cc -O3 -march=native) is one of the contenders, so it is measured under the
same load. Results are compared with a float64 numpy reference first:
max |ours - ref| <= 1e-4 * max |ref|.
"""

import argparse
import ctypes
import ctypes.util
import os
import random
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def best_coretype():
    flags = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("flags"):
                flags = line
                break
    except OSError:
        pass
    if " avx512f" in flags:
        return "SkylakeX"
    if " avx2" in flags:
        return "Haswell"
    return ""


def threads_arg(argv):
    """--threads N / --threads=N (default 1), read before argparse: numpy's
    OpenBLAS takes its thread count from the environment when it loads."""
    for i, a in enumerate(argv):
        if a.startswith("--threads="):
            return a.split("=", 1)[1]
        if a == "--threads" and i + 1 < len(argv):
            return argv[i + 1]
    return "1"


# Must be set before numpy loads OpenBLAS.
if __name__ == "__main__" and "--smoke" not in sys.argv:
    want = "" if "--coretype=auto" in sys.argv else best_coretype()
    nthreads = threads_arg(sys.argv)
    env_ok = os.environ.get("OPENBLAS_NUM_THREADS") == nthreads and \
        os.environ.get("OPENBLAS_CORETYPE", "") == want
    if not env_ok and not os.environ.get("TOSA_LSP_BENCH_CHILD"):
        env = dict(os.environ, OPENBLAS_NUM_THREADS=nthreads, TOSA_LSP_BENCH_CHILD="1")
        env.pop("OPENBLAS_CORETYPE", None)
        if want:
            env["OPENBLAS_CORETYPE"] = want
        sys.exit(subprocess.call([sys.executable] + sys.argv, env=env))

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "test", "lit", "tools"))
from memref_desc import descriptor, make_desc, read  # noqa: E402
from results import cpu_model, write_readme  # noqa: E402


def cases(smoke):
    """(name, label, kind, shape). matmul: (B, M, K, N); conv2d:
    (N, H, W, C, F, KH, KW, pad top/left, pad bottom/right, stride)."""
    if smoke:
        return [("mm_smoke", "matmul 1x40x24 . 1x24x72", "matmul", (1, 40, 24, 72)),
                ("conv_smoke", "conv2d 3x3 12x12x8 -> 32", "conv2d",
                 (1, 12, 12, 8, 32, 3, 3, 1, 1, 1)),
                ("conv_smoke_s2", "conv2d 1x1 s2 9x9x16 -> 16", "conv2d",
                 (1, 9, 9, 16, 16, 1, 1, 0, 0, 2))]
    ks = []
    for n in (256, 512, 1024, 2048):
        ks.append(("mm%d" % n, "matmul %d^3" % n, "matmul", (1, n, n, n)))
    ks.append(("mm_bert", "matmul 1x128x768 . 1x768x3072", "matmul", (1, 128, 768, 3072)))
    # ResNet-50 layers (NHWC, batch 1); stride 2 with TOSA's exact-division
    # padding (bottom/right 1).
    for name, h, c, f, k, s in [
            ("conv1_7x7s2", 224, 3, 64, 7, 2),
            ("conv2_3x3", 56, 64, 64, 3, 1),
            ("conv2_1x1a", 56, 64, 256, 1, 1),
            ("conv2_1x1b", 56, 256, 64, 1, 1),
            ("conv3_3x3s2", 56, 128, 128, 3, 2),
            ("conv3_3x3", 28, 128, 128, 3, 1),
            ("conv3_1x1s2", 56, 256, 512, 1, 2),
            ("conv4_3x3", 14, 256, 256, 3, 1),
            ("conv5_3x3", 7, 512, 512, 3, 1),
            ("conv5_1x1", 7, 2048, 512, 1, 1),
            # YOLOv3's detection head: 3 x (80 + 5) = 255 channels, not a
            # multiple of the vector (padded to 256: PaddedChannels.cpp).
            ("yolo_head_1x1", 52, 256, 255, 1, 1)]:
        # TensorFlow's SAME padding; a stride-2 1x1 gets one row and column
        # more, as TOSA wants (H - 1 + pads - (K - 1)) divisible by 2.
        total = k - 1
        if (h - 1 + total - (k - 1)) % s:
            total = total - 1 if k > 1 else 1
        lo, hi = total // 2, total - total // 2
        ks.append((name, "conv2d %dx%d%s %dx%dx%d -> %d" % (
            k, k, " s2" if s == 2 else "", h, h, c, f), "conv2d",
            (1, h, h, c, f, k, k, lo, hi, s)))
    return ks


def out_hw(s):
    n, h, w, c, f, kh, kw, lo, hi, st = s
    return (h - 1 + lo + hi - (kh - 1)) // st + 1, (w - 1 + lo + hi - (kw - 1)) // st + 1


def flops(kind, s):
    if kind == "matmul":
        b, m, k, n = s
        return 2 * b * m * n * k
    oh, ow = out_hw(s)
    return 2 * s[0] * oh * ow * s[4] * s[5] * s[6] * s[3]


def ttype(shape):
    return "tensor<%sxf32>" % "x".join(str(d) for d in shape)


def mlir_function(name, kind, s):
    zp = ('  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : '
          '() -> tensor<1xf32>\n')
    if kind == "matmul":
        b, m, k, n = s
        a, bb, r = ttype((b, m, k)), ttype((b, k, n)), ttype((b, m, n))
        return ("func.func @%s(%%a: %s, %%b: %s) -> %s {\n%s  %%r = tosa.matmul %%a, "
                "%%b, %%zp, %%zp : (%s, %s, tensor<1xf32>, tensor<1xf32>) -> %s\n"
                "  return %%r : %s\n}\n" % (name, a, bb, r, zp, a, bb, r, r))
    n, h, w, c, f, kh, kw, lo, hi, st = s
    oh, ow = out_hw(s)
    x, wt, r = ttype((n, h, w, c)), ttype((f, kh, kw, c)), ttype((n, oh, ow, f))
    return ("func.func @%s(%%x: %s, %%w: %s, %%bias: tensor<%dxf32>) -> %s {\n%s"
            "  %%r = tosa.conv2d %%x, %%w, %%bias, %%zp, %%zp {acc_type = f32, "
            "dilation = array<i64: 1, 1>, pad = array<i64: %d, %d, %d, %d>, "
            "stride = array<i64: %d, %d>} : (%s, %s, tensor<%dxf32>, tensor<1xf32>, "
            "tensor<1xf32>) -> %s\n  return %%r : %s\n}\n"
            % (name, x, wt, f, r, zp, lo, hi, lo, hi, st, st, x, wt, f, r, r))


def make_inputs(kind, s, rng):
    if kind == "matmul":
        b, m, k, n = s
        shapes = [(b, m, k), (b, k, n)]
    else:
        n, h, w, c, f, kh, kw = s[:7]
        shapes = [(n, h, w, c), (f, kh, kw, c), (f,)]
    return [rng.uniform(-1, 1, sh).astype(np.float32) for sh in shapes]


def numpy_fn(kind, s, ins):
    """numpy's best formulation: BLAS sgemm; conv2d as im2col + sgemm (a
    plain reshape for stride-1 1x1), bias added after."""
    if kind == "matmul":
        a, b = ins
        if a.shape[0] == 1:
            a2, b2 = a[0], b[0]
            return lambda: a2 @ b2
        return lambda: a @ b
    x, w, bias = ins
    n, h, wd, c, f, kh, kw, lo, hi, st = s
    oh, ow = out_hw(s)
    w2 = np.ascontiguousarray(w.transpose(1, 2, 3, 0).reshape(kh * kw * c, f))
    if kh == kw == 1 and lo == hi == 0:
        def conv1x1():
            xs = x[:, ::st, ::st, :] if st > 1 else x
            return (np.ascontiguousarray(xs).reshape(-1, c) @ w2 + bias).reshape(
                n, oh, ow, f)
        return conv1x1

    def im2col():
        xp = np.pad(x, ((0, 0), (lo, hi), (lo, hi), (0, 0)))
        v = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(1, 2))
        v = v[:, :st * (oh - 1) + 1:st, :st * (ow - 1) + 1:st]
        cols = np.ascontiguousarray(v.transpose(0, 1, 2, 4, 5, 3)).reshape(
            n * oh * ow, kh * kw * c)
        return (cols @ w2 + bias).reshape(n, oh, ow, f)
    return im2col


def reference(kind, s, ins):
    ins = [a.astype(np.float64) for a in ins]
    if kind == "matmul":
        return ins[0] @ ins[1]
    x, w, bias = ins
    n, h, wd, c, f, kh, kw, lo, hi, st = s
    oh, ow = out_hw(s)
    xp = np.pad(x, ((0, 0), (lo, hi), (lo, hi), (0, 0)))
    out = np.broadcast_to(bias, (n, oh, ow, f)).copy()
    for i in range(kh):
        for j in range(kw):
            win = xp[:, i:i + st * (oh - 1) + 1:st, j:j + st * (ow - 1) + 1:st, :]
            out += win @ w[:, i, j, :].T
    return out


def compile_lib(args, src, mode):
    out = os.path.join(args.work, "compute-%s-t%d.so" % (mode, args.threads))
    t0 = time.time()
    proc = subprocess.run([args.tosa_lsp, "compile", src, "-o", out, "--emit=shared",
                           "-O3", "--quiet", "--force", "--mode=%s" % mode,
                           "--threads=%d" % args.threads],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)
    if proc.returncode != 0:
        sys.exit("compute: compile --mode=%s failed:\n%s" % (mode, proc.stderr))
    return ctypes.CDLL(out), time.time() - t0


def fma_peak(args):
    so = os.path.join(args.work, "fma_peak.so")
    subprocess.run(["cc", "-O3", "-march=native", "-ffp-contract=fast", "-shared",
                    "-fPIC", os.path.join(HERE, "fma_peak.c"), "-o", so], check=True)
    lib = ctypes.CDLL(so)
    lib.fma_peak_flops.restype = ctypes.c_double
    lib.fma_peak_flops.argtypes = [ctypes.c_long]
    return lib.fma_peak_flops


def openblas_core():
    for name in ("libopenblas.so.0", "libopenblasp-r0.3.21.so"):
        try:
            lib = ctypes.CDLL(name)
            lib.openblas_get_corename.restype = ctypes.c_char_p
            return "OpenBLAS %s" % lib.openblas_get_corename().decode()
        except (OSError, AttributeError):
            continue
    return "no OpenBLAS (numpy's BLAS: see numpy.show_config())"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    root = os.path.dirname(os.path.dirname(HERE))
    ap.add_argument("--tosa-lsp", default=os.path.join(root, "build", "bin", "tosa-lsp"))
    ap.add_argument("--work", default="/tmp/tosa-lsp-bench-compute")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--only", default="")
    ap.add_argument("--coretype", default="best", help="best (default) or auto")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--upstream-max-gflop", type=float, default=1.0,
                    help="time upstream's scalar loops (one call) up to this size")
    ap.add_argument("--clock", default="thread", choices=["thread", "wall"],
                    help="thread: the calling thread's CPU time (default; the "
                    "contenders all run on it, and time spent preempted by other "
                    "processes does not count); wall: elapsed time")
    ap.add_argument("--threads", type=int, default=1,
                    help="N > 1: ours compiled with --threads=N, numpy's OpenBLAS "
                    "on N threads, elapsed time, each contender's calls back to "
                    "back, the peak N x one core's; upstream not timed; --write "
                    "fills its own table")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    if args.threads > 1:
        # The other threads' work is not the calling thread's CPU time.
        args.clock = "wall"
        args.upstream_max_gflop = 0
    clock = time.thread_time if args.clock == "thread" else time.perf_counter
    if args.smoke:
        args.reps = 1
    os.makedirs(args.work, exist_ok=True)
    ks = cases(args.smoke)
    if args.only:
        ks = [k for k in ks if k[0] in args.only.split(",")]
    src = os.path.join(args.work, "compute.mlir")
    with open(src, "w") as f:
        f.write("// Generated by bench/kernels/compute.py\n" +
                "\n".join(mlir_function(n, k, s) for n, _, k, s in ks))
    modes = ["fast", "versioned", "safe", "upstream"] if args.smoke else ["fast", "upstream"]
    libs, ctime = {}, {}
    for m in modes:
        libs[m], ctime[m] = compile_lib(args, src, m)
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    libc.free.argtypes = [ctypes.c_void_p]
    peak = None if args.smoke else fma_peak(args)
    rng = np.random.default_rng(5)
    load0 = os.getloadavg()
    rows, failures = [], 0
    for name, label, kind, s in ks:
        ins = make_inputs(kind, s, rng)
        want = reference(kind, s, ins)
        fl = flops(kind, s)
        descs = [make_desc(a) for a in ins]
        contenders = {"numpy": numpy_fn(kind, s, ins)}
        for m in modes:
            fn = getattr(libs[m], "_mlir_ciface_" + name)
            fn.restype = None
            res = descriptor(want.ndim)()

            def call(fn=fn, res=res):
                fn(ctypes.byref(res), *[ctypes.byref(d) for d in descs])
                libc.free(res.allocated)
            fn(ctypes.byref(res), *[ctypes.byref(d) for d in descs])
            got = read(res, want.shape)
            libc.free(res.allocated)
            err = np.abs(got - want).max() / np.abs(want).max()
            if not err <= 1e-4:
                failures += 1
                print("FAIL %s --mode=%s: max |ours - ref| = %.2g x max |ref|"
                      % (name, m, err))
            if m != "upstream":
                contenders[m] = call
            elif fl <= args.upstream_max_gflop * 1e9 and not args.smoke:
                t0 = time.perf_counter()
                call()
                upstream_ms = (time.perf_counter() - t0) * 1e3
        if args.smoke:
            continue
        if fl > args.upstream_max_gflop * 1e9:
            upstream_ms = None
        iters = max(1, int(fl / (2 * 16 * 16)))
        contenders["peak"] = lambda iters=iters: peak(iters)
        times = {k: [] for k in contenders}
        order = list(contenders)

        def timed(k):
            t0 = clock()
            done = contenders[k]()
            dt = clock() - t0
            times[k].append(dt if k != "peak" else dt * fl / done)
        if args.threads == 1:
            for rep in range(args.reps):
                random.Random(rep).shuffle(order)
                for k in order:
                    timed(k)
        else:
            # Each runtime's idle workers spin for a while after a call
            # (libomp 200 ms, OpenBLAS ~0.1 s) and would slow the next
            # contender's: a contender's calls run back to back, after a
            # pause in which the others' workers go to sleep, and 30 ms of
            # calls that wake its own (a sleeping vCPU of these VMs takes
            # milliseconds to run again).
            random.Random(len(rows)).shuffle(order)
            for k in order:
                time.sleep(0.3)
                t0 = time.perf_counter()
                while time.perf_counter() - t0 < 0.03:
                    contenders[k]()
                for rep in range(args.reps):
                    timed(k)
        if os.environ.get("TOSA_LSP_BENCH_DEBUG"):
            print(name, {k: ["%.2f" % (x * 1e3) for x in v] for k, v in times.items()})
        med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
        med["peak"] /= args.threads  # N cores' peak: the same FMA loop on each
        rows.append((label, fl, med, upstream_ms))
        print("%-14s " % name + " ".join("%s=%.2f" % kv for kv in med.items()) +
              (" upstream(1 call)=%.0f" % upstream_ms if upstream_ms else ""), flush=True)
    if args.smoke:
        print("compute-smoke: %d kernels x %d modes, %s" % (
            len(ks), len(modes), "ok" if not failures else "%d FAILED" % failures))
        return 1 if failures else 0
    text = report(rows, args, load0, os.getloadavg(), ctime)
    print(text)
    if args.write:
        write_readme(text, "compute" if args.threads == 1 else "compute-threads")
    return 1 if failures else 0


def report(rows, args, load0, load1, ctime):
    cpu = cpu_model()
    out = ["Run: %s, median of %d (%s), %d cores (%s), load average %.1f at start, "
           "%.1f at end; numpy %s with %s, OPENBLAS_NUM_THREADS=%s; FMA peak from "
           "fma_peak.c (cc -O3 -march=native), timed among the contenders of each "
           "row%s.\n" % (time.strftime("%Y-%m-%d %H:%M"), args.reps,
                       "thread CPU time" if args.clock == "thread" else "wall time",
                       os.cpu_count(), cpu, load0[0], load1[0], np.__version__,
                       openblas_core(), os.environ.get("OPENBLAS_NUM_THREADS", "unset"),
                       "" if args.threads == 1 else
                       ", times %d (the peak of %d cores); ours compiled with "
                       "--threads=%d" % (args.threads, args.threads, args.threads)),
           "",
           "| kernel | GFLOP | FMA peak GFLOP/s | numpy ms (GFLOP/s, of peak) | "
           "fast ms (GFLOP/s, of peak) | fast / numpy time | upstream ms (1 call) "
           "| fast vs upstream |",
           "|---|---|---|---|---|---|---|---|"]
    for label, fl, med, up in rows:
        pk = fl / med["peak"] / 1e6

        def cell(k):
            g = fl / med[k] / 1e6
            return "%.2f (%.1f, %.0f%%)" % (med[k], g, 100 * g / pk)
        out.append("| %s | %.2f | %.0f | %s | %s | %.2f× | %s | %s |" % (
            label, fl / 1e9, pk, cell("numpy"), cell("fast"),
            med["fast"] / med["numpy"], "%.0f" % up if up else "—",
            "%.0f× faster" % (up / med["fast"]) if up else "—"))
    out.append("")
    out.append("Compile times (-O3, all %d kernels): %s.\n" % (
        len(rows), ", ".join("%s %.1f s" % kv for kv in ctime.items())))
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
