#!/usr/bin/env python3
"""Element-wise kernel benchmark: `tosa-lsp compile` in every mode beside numpy,
upstream's pipeline and the memory floor, in one process run.

    /usr/bin/python3 bench/kernels/bench.py [--tosa-lsp build/bin/tosa-lsp]
        [--n 4096] [--reps 7] [--clock wall|thread] [--write]  # --write: update README.md
    /usr/bin/python3 bench/kernels/bench.py --smoke   # tiny sizes, checks only

Every kernel is compiled once per mode (`--emit=shared --header -O3`) and
called through its C interface (ctypes, memref descriptors of contiguous
numpy arrays):

  * `F_into` (modes other than upstream): the result goes into a buffer the
    caller provides, so a call allocates nothing;
  * `F`: the callee allocates the result with malloc (as numpy allocates a
    fresh array); the timing includes the free().

The memory floor is `np.copyto` of one N x N float32 array (read once, write
once), timed in each pattern's loop between its calls; a pattern's floor
is its median copy time scaled by the bytes the pattern must move (inputs read once,
output written once) over the bytes of the copy. All timings are medians of
`--reps` calls, interleaved (rep by rep) so that load from other processes
affects every contender alike. Every result is compared with numpy first
(bit-exact: the ops are exactly rounded and evaluated in numpy's order).
"""

import argparse
import ctypes
import ctypes.util
import os
import platform
import random
import statistics
import subprocess
import sys
import time

import numpy as np

from results import cpu_model, write_readme

HERE = os.path.dirname(os.path.abspath(__file__))
MODES = ["fast", "versioned", "safe", "upstream"]
# Before issue 11: upstream's pipeline and a generic x86-64 back end.
BASELINE = "upstream-generic"


def kernels(n):
    """(name, label, mlir function text, make_inputs(rng), numpy fn, bytes)."""
    f = "f32"
    ks = []

    def t(shape, e=f):
        return "tensor<%sx%s>" % ("x".join("?" if d is None else str(d) for d in shape), e)

    def fn(name, args, body, rty):
        sig = ", ".join("%%%s: %s" % (a, ty) for a, ty in args)
        return ("func.func @%s(%s) -> %s {\n%s\n  return %%r : %s\n}\n"
                % (name, sig, rty, body, rty))

    D = (None, None)
    row, col, full = (1, n), (n, 1), (n, n)

    def binary(name, label, op, np_fn, sa, sb, sr, extra="", runtime=None):
        args = [("a", t(sa)), ("b", t(sb))]
        operands = "%a, %b"
        types = "%s, %s" % (t(sa), t(sb))
        consts = ""
        if op == "mul":
            consts = ('  %s = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : '
                      '() -> tensor<1xi8>\n' % "%s0")
            operands += ", %s0"
            types += ", tensor<1xi8>"
        body = consts + "  %%r = tosa.%s %s : (%s) -> %s" % (op, operands, types, t(sr))
        shapes = runtime or [full if s == D else s for s in (sa, sb)]
        ks.append((name, label, fn(name, args, body, t(sr)), shapes, ["f32", "f32"],
                   np_fn))

    binary("add_row_dyn", "`?x?` + `1x%d`" % n, "add", np.add, D, row, (None, n))
    binary("add_col_dyn", "`?x?` + `%dx1`" % n, "add", np.add, D, col, (n, None))
    binary("add_dyn_dyn", "`?x?` + `?x?`", "add", np.add, D, D, D)
    # Spec 004's case: nothing in the types says which operand is size-1.
    binary("add_dyn_rowrt", "`?x?` + `?x?` (second 1x%d at run time)" % n, "add",
           np.add, D, D, D, runtime=[full, row])
    binary("add_dyn_colrt", "`?x?` + `?x?` (second %dx1 at run time)" % n, "add",
           np.add, D, D, D, runtime=[full, col])
    binary("add_dyn_rowrt_first", "`?x?` + `?x?` (first 1x%d at run time)" % n, "add",
           np.add, D, D, D, runtime=[row, full])
    # NHWC, n*n elements: a bias (1x1x1xC), a per-image scale (Nx1x1xC) and
    # a per-pixel mask (NxHxWx1), all `?x?x?x?` in the types.
    D4 = (None,) * 4
    c = 128 if n >= 1024 else 8
    batch = 16 if n >= 1024 else 2
    hw = n * n // c // batch
    h = 1 << ((hw.bit_length() - 1) // 2)
    nhwc = (batch, h, hw // h, c)
    for name4, what, shape4 in [("bias", "1x1x1xC", (1, 1, 1, c)),
                                ("scale", "Nx1x1xC", (batch, 1, 1, c)),
                                ("mask", "NxHxWx1", nhwc[:3] + (1,)),
                                ("image", "1xHxWxC", (1,) + nhwc[1:])]:
        binary("add4_%s_rt" % name4, "NHWC `?x?x?x?` + `?x?x?x?` (second %s at run "
               "time, %s)" % (what, "x".join(map(str, nhwc))), "add", np.add, D4, D4, D4,
               runtime=[nhwc, shape4])
    # A sequence model's (batch, tokens, channels), n*n elements: a
    # per-sequence bias Bx1xC, `?x?x?` in the types.
    D3 = (None,) * 3
    btc = (batch, n * n // batch // c, c)
    binary("add3_seq_rt", "`?x?x?` + `?x?x?` (second Bx1xC at run time, %s)"
           % "x".join(map(str, btc)), "add", np.add, D3, D3, D3,
           runtime=[btc, (batch, 1, c)])
    binary("add_row_static", "`%dx%d` + `1x%d`" % (n, n, n), "add", np.add, full, row, full)
    binary("mul_row_dyn", "mul `?x?` * `1x%d`" % n, "mul", np.multiply, D, row, (None, n))
    binary("mul_row_static", "mul `%dx%d` * `1x%d`" % (n, n, n), "mul", np.multiply,
           full, row, full)
    binary("max_col_dyn", "maximum `?x?`, `%dx1`" % n, "maximum", np.maximum, D, col,
           (n, None))
    binary("max_col_static", "maximum `%dx%d`, `%dx1`" % (n, n, n), "maximum",
           np.maximum, full, col, full)

    def select(name, label, sc, sa, sb, sr):
        args = [("c", t(sc, "i1")), ("a", t(sa)), ("b", t(sb))]
        body = "  %%r = tosa.select %%c, %%a, %%b : (%s, %s, %s) -> %s" % (
            t(sc, "i1"), t(sa), t(sb), t(sr))
        ks.append((name, label, fn(name, args, body, t(sr)), [full, full, row],
                   ["i1", "f32", "f32"], lambda c, a, b: np.where(c, a, b)))

    select("select_dyn", "select `?x?` i1, `?x?`, `1x%d`" % n, D, D, row, (None, n))
    select("select_static", "select `%dx%d` i1, `%dx%d`, `1x%d`" % (n, n, n, n, n),
           full, full, row, full)

    def chain(name, label, sx):
        sr1 = (None, n) if sx == D else full
        args = [("x", t(sx)), ("r1", t(row)), ("c1", t(col)), ("r2", t(row)), ("c2", t(col))]
        body = "\n".join([
            '  %s0 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>'
            % "%s",
            "  %%0 = tosa.add %%x, %%r1 : (%s, %s) -> %s" % (t(sx), t(row), t(sr1)),
            "  %%1 = tosa.mul %%0, %%c1, %%s0 : (%s, %s, tensor<1xi8>) -> %s"
            % (t(sr1), t(col), t(full)),
            "  %%2 = tosa.maximum %%1, %%r2 : (%s, %s) -> %s" % (t(full), t(row), t(full)),
            "  %%r = tosa.sub %%2, %%c2 : (%s, %s) -> %s" % (t(full), t(col), t(full))])
        ks.append((name, label, fn(name, args, body, t(full)), [full, row, col, row, col],
                   ["f32"] * 5,
                   lambda x, r, c, r2, c2: np.maximum((x + r) * c, r2) - c2))

    chain("chain_static", "chain add, mul, maximum, sub (`%dx%d`)" % (n, n), full)
    chain("chain_dyn", "chain add, mul, maximum, sub (`?x?` first)", D)
    return ks


_DESCS = {}


def Desc(rank):
    """The memref descriptor struct of a rank."""
    if rank not in _DESCS:
        class D(ctypes.Structure):
            _fields_ = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
                        ("offset", ctypes.c_int64), ("sizes", ctypes.c_int64 * rank),
                        ("strides", ctypes.c_int64 * rank)]
        _DESCS[rank] = D
    return _DESCS[rank]


def desc(arr):
    d = Desc(arr.ndim)()
    d.allocated = d.aligned = arr.ctypes.data
    d.offset = 0
    for i in range(arr.ndim):
        d.sizes[i] = arr.shape[i]
        d.strides[i] = arr.strides[i] // arr.itemsize
    return d


def read(d, dtype):
    shape = tuple(d.sizes)
    count = shape[0] * d.strides[0] if shape[0] else 0
    buf = (ctypes.c_char * (count * np.dtype(dtype).itemsize)).from_address(
        d.aligned + d.offset * np.dtype(dtype).itemsize)
    flat = np.frombuffer(buf, dtype=dtype)
    return np.lib.stride_tricks.as_strided(
        flat, shape=shape,
        strides=[s * np.dtype(dtype).itemsize for s in d.strides]).copy()


def compile_mode(args, src, mode):
    out = os.path.join(args.work, "kernels-%s.so" % mode)
    for p in (out, out[:-3] + ".h"):
        if os.path.exists(p):
            os.remove(p)
    cmd = [args.tosa_lsp, "compile", src, "-o", out, "--emit=shared", "--header",
           "-O3", "--quiet"]
    cmd += (["--mode=upstream", "--cpu=x86-64"] if mode == BASELINE
            else ["--mode=%s" % mode])
    if args.streaming_stores and mode != BASELINE and mode != "upstream":
        cmd.append("--streaming-stores=%s" % args.streaming_stores)
    t0 = time.time()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)
    if proc.returncode != 0:
        sys.exit("bench: compile --mode=%s failed:\n%s" % (mode, proc.stderr))
    return ctypes.CDLL(out), time.time() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    root = os.path.dirname(os.path.dirname(HERE))
    ap.add_argument("--tosa-lsp", default=os.path.join(root, "build", "bin", "tosa-lsp"))
    ap.add_argument("--work", default="/tmp/tosa-lsp-bench-kernels")
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--only", default="", help="comma-separated kernel names")
    ap.add_argument("--smoke", action="store_true",
                    help="n=64, one call each: correctness only")
    ap.add_argument("--streaming-stores", default="",
                    help="passed to compile (the smoke run uses 1K, so that "
                    "its 64x64 results take the streaming loops)")
    ap.add_argument("--write", action="store_true",
                    help="write the results table into bench/kernels/README.md")
    ap.add_argument("--clock", default="wall", choices=["wall", "thread"],
                    help="wall: elapsed time (default); thread: the calling "
                    "thread's CPU time (every contender runs on it; time spent "
                    "preempted by other processes does not count, page faults "
                    "do)")
    ap.add_argument("--no-settle", dest="settle", action="store_false",
                    help="time each call right after the previous one, "
                    "without the untimed read that leaves the caches clean")
    args = ap.parse_args()
    clock = time.perf_counter if args.clock == "wall" else time.thread_time
    if args.smoke:
        args.n, args.reps = 64, 1
        args.streaming_stores = args.streaming_stores or "1K"
    os.makedirs(args.work, exist_ok=True)
    ks = kernels(args.n)
    if args.only:
        ks = [k for k in ks if k[0] in args.only.split(",")]
    src = os.path.join(args.work, "kernels.mlir")
    with open(src, "w") as fsrc:
        fsrc.write("// Generated by bench/kernels/bench.py\n" + "\n".join(k[2] for k in ks))
    libs, ctime = {}, {}
    for m in MODES + [BASELINE]:
        libs[m], ctime[m] = compile_mode(args, src, m)
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    libc.free.argtypes = [ctypes.c_void_p]

    rng = np.random.default_rng(7)
    n = args.n
    copy_src = rng.uniform(-4, 4, (n, n)).astype(np.float32)
    copy_dst = np.empty_like(copy_src)
    copy_bytes = copy_src.nbytes * 2
    # Untimed, before each timed call: a read of a buffer bigger than the
    # caches writes back what the previous call left dirty and leaves clean
    # lines, so no call pays for its predecessor's results in the caches.
    # (It alone did not level the F_into of modes with the same machine
    # code; timing the groups apart below did.)
    settle_buf = np.ones(copy_src.size, np.float32)

    def settle():
        settle_buf.max()
    load0 = os.getloadavg()
    rows, failures = [], 0
    floor_samples = []
    for name, label, _, shapes, types, np_fn in ks:
        ins = []
        for s, ty in zip(shapes, types):
            if ty == "i1":
                ins.append(rng.integers(0, 2, s).astype(np.bool_))
            else:
                ins.append(rng.uniform(-4, 4, s).astype(np.float32))
        want = np_fn(*ins)
        moved = sum(a.nbytes for a in ins) + want.nbytes
        descs = [desc(a) for a in ins]
        dptrs = [ctypes.byref(d) for d in descs]
        out = np.empty_like(want)
        out_d = desc(out)

        contenders = {}

        def np_fresh():
            r = np_fn(*ins)
            del r
        contenders["numpy"] = np_fresh
        if name.startswith("chain"):
            def np_out():
                x, r, c, r2, c2 = ins
                np.add(x, r, out=out)
                np.multiply(out, c, out=out)
                np.maximum(out, r2, out=out)
                np.subtract(out, c2, out=out)
        elif name.startswith("select"):
            def np_out():
                np.copyto(out, ins[2])
                np.copyto(out, ins[1], where=ins[0])
        else:
            def np_out():
                np_fn(*ins, out=out)
        contenders["numpy out="] = np_out

        def copy():
            np.copyto(copy_dst, copy_src)
        contenders["copy"] = copy

        for m in MODES + [BASELINE]:
            fresh = getattr(libs[m], "_mlir_ciface_" + name)
            fresh.restype = None
            res = Desc(want.ndim)()

            def call_fresh(fresh=fresh, res=res):
                fresh(ctypes.byref(res), *dptrs)
                libc.free(res.allocated)
            # correctness first
            fresh(ctypes.byref(res), *dptrs)
            got = read(res, want.dtype)
            libc.free(res.allocated)
            if not np.array_equal(got, want):
                failures += 1
                print("FAIL %s --mode=%s: result differs from numpy" % (name, m))
            contenders[m] = call_fresh
            if not m.startswith("upstream"):
                into = getattr(libs[m], "_mlir_ciface_%s_into" % name)
                into.restype = None

                def call_into(into=into):
                    into(*dptrs, ctypes.byref(out_d))
                out.fill(0)
                into(*dptrs, ctypes.byref(out_d))
                if not np.array_equal(out, want):
                    failures += 1
                    print("FAIL %s_into --mode=%s: result differs from numpy" % (name, m))
                contenders[m + " into"] = call_into
        times = {k: [] for k in contenders}
        # Those writing the caller's buffer (and the copy, the floor) apart
        # from those returning a fresh result: a call right after a 64 MiB
        # result was freed ran up to 1.5x slower on this VM (whichever
        # F_into came after more of them in the fixed orders looked slower,
        # with the same machine code).
        writing = [k for k in contenders if k.endswith(" into") or k in ("numpy out=", "copy")]
        groups = [writing, [k for k in contenders if k not in writing]]
        for order in groups:
            for rep in range(args.reps):
                # A new order each rep: a contender's place after another
                # is no bias.
                random.Random(rep).shuffle(order)
                for k in order:
                    f = contenders[k]
                    if args.settle:
                        settle()
                    t0 = clock()
                    f()
                    times[k].append(clock() - t0)
        floor_samples += times["copy"]
        med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
        # This pattern's own copy samples: the floor under the same load.
        rows.append((name, label, moved / copy_bytes, med))
        if not args.smoke:
            print("%-16s " % name + " ".join("%s=%.1f" % (k, v) for k, v in med.items()),
                  flush=True)
    load1 = os.getloadavg()
    if args.smoke:
        print("kernels-smoke: %d kernels x %d modes, %s" %
              (len(ks), len(MODES) + 1, "ok" if not failures else "%d FAILED" % failures))
        return 1 if failures else 0

    floor = statistics.median(floor_samples) * 1e3
    text = report(rows, floor, args, load0, load1, ctime)
    print(text)
    if args.write:
        write_readme(text, "results")
    return 1 if failures else 0


def report(rows, floor, args, load0, load1, ctime):
    cpu = cpu_model()
    out = []
    out.append("Run: %s, n = %d, median of %d (%s), %d cores (%s), load average "
               "%.1f at start, %.1f at end; copy (np.copyto, %d MiB) %.2f ms, median of "
               "all %d copy samples of the run; each row uses the median of its own "
               "%d copy samples, timed between its calls; %s; numpy %s.\n"
               % (time.strftime("%Y-%m-%d %H:%M"), args.n, args.reps,
                  "wall time" if args.clock == "wall" else "thread CPU time",
                  os.cpu_count(),
                  cpu or platform.machine(), load0[0], load1[0],
                  args.n * args.n * 4 >> 20, floor, len(rows) * args.reps, args.reps,
                  "each call after an untimed read of %d MiB (clean caches)"
                  % (args.n * args.n * 4 >> 20) if args.settle
                  else "each call right after the previous one", np.__version__))
    out.append("Caller-provided result (`F_into`; numpy `out=`): milliseconds and "
               "× the pattern's floor (copy time × bytes moved / bytes of the copy).\n")
    out.append("| pattern | copy ms | floor = copy × | fast | versioned | safe | numpy out= |")
    out.append("|---|---|---|---|---|---|---|")
    for name, label, factor, med in rows:
        pf = med["copy"] * factor
        cell = lambda k: "%.1f (%.2f×)" % (med[k], med[k] / pf)
        out.append("| %s | %.1f | %.3g | %s | %s | %s | %s |"
                   % (label, med["copy"], factor, cell("fast into"),
                      cell("versioned into"), cell("safe into"), cell("numpy out=")))
    out.append("")
    out.append("Fresh result per call (`F`, malloc'ed by the callee, freed in the "
               "timing; numpy allocates too): milliseconds, × numpy, and how many "
               "times faster than upstream's pipeline.\n")
    out.append("| pattern | numpy | upstream, x86-64 | upstream | fast | versioned | safe "
               "| fast vs upstream |")
    out.append("|---|---|---|---|---|---|---|---|")
    for name, label, factor, med in rows:
        cell = lambda k: "%.1f (%.2f× numpy)" % (med[k], med[k] / med["numpy"])
        out.append("| %s | %.1f | %s | %s | %s | %s | %s | %.1f× faster |"
                   % (label, med["numpy"], cell(BASELINE), cell("upstream"), cell("fast"),
                      cell("versioned"), cell("safe"),
                      med["upstream"] / med["fast"]))
    out.append("")
    out.append("Compile times (-O3, all %d kernels): %s.\n" % (
        len(rows), ", ".join("%s %.1f s" % (m, ctime[m]) for m in MODES + [BASELINE])))
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
