#!/usr/bin/env python3
"""Compile time of a 200-op model function: `tosa-lsp compile --emit=shared
-O3` of a ResNet-like chain of residual blocks (conv 3x3, clamp, conv 1x1,
add, clamp on 1x56x56x64), issue 41's "a 200-op model function compiles in
<= 5 s at -O3".

    /usr/bin/python3 bench/kernels/compile_time.py [--tosa-lsp BIN ...]
        [--blocks 40] [--reps 3]

Each binary given is timed --reps times, alternating, and reports the
median wall time and the median CPU time of the child (user + system: the
machine is shared, so the CPU time is the steadier figure), with the load
average.
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

X = "tensor<1x56x56x64xf32>"
CONV = ("tosa.conv2d %%%s, %%%s, %%b, %%zp, %%zp {acc_type = f32, dilation = "
        "array<i64: 1, 1>, pad = array<i64: %d, %d, %d, %d>, stride = array<i64: "
        "1, 1>} : (%s, %s, tensor<64xf32>, tensor<1xf32>, tensor<1xf32>) -> %s")
RELU = "tosa.clamp %%%s {max_val = 3.4e38 : f32, min_val = 0.0 : f32} : (%s) -> %s"


def model(blocks):
    w3, w1 = "tensor<64x3x3x64xf32>", "tensor<64x1x1x64xf32>"
    lines = ["func.func @model(%%x0: %s, %%w1: %s, %%w2: %s, %%b: tensor<64xf32>) "
             "-> %s {" % (X, w3, w1, X),
             '  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : '
             '() -> tensor<1xf32>']
    for i in range(blocks):
        lines += ["  %%c1_%d = %s" % (i, CONV % ("x%d" % i, "w1", 1, 1, 1, 1, X, w3, X)),
                  "  %%r1_%d = %s" % (i, RELU % ("c1_%d" % i, X, X)),
                  "  %%c2_%d = %s" % (i, CONV % ("r1_%d" % i, "w2", 0, 0, 0, 0, X, w1, X)),
                  "  %%a_%d = tosa.add %%c2_%d, %%x%d : (%s, %s) -> %s" % (i, i, i, X, X, X),
                  "  %%x%d = %s" % (i + 1, RELU % ("a_%d" % i, X, X))]
    lines += ["  return %%x%d : %s" % (blocks, X), "}"]
    return "\n".join(lines) + "\n"


def timed(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tosa-lsp", action="append",
                    help="binary to time (repeat to compare; default build/bin/tosa-lsp)")
    ap.add_argument("--blocks", type=int, default=40, help="5 TOSA ops each")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    bins = args.tosa_lsp or [os.path.join(root, "build", "bin", "tosa-lsp")]
    work = tempfile.mkdtemp(prefix="tosa-lsp-compile-time-")
    src = os.path.join(work, "model.mlir")
    with open(src, "w") as f:
        f.write(model(args.blocks))
    ops = 5 * args.blocks + 1
    times = {b: [] for b in bins}
    load0 = os.getloadavg()[0]
    for _ in range(args.reps):
        for b in bins:
            times[b].append(timed([b, "compile", src, "-o", os.path.join(work, "m.so"),
                                   "--emit=shared", "-O3", "--quiet", "--force"]))
    print("model: %d TOSA ops (%d blocks), -O3 --emit=shared, median of %d; load "
          "average %.1f at start, %.1f at end" % (ops, args.blocks, args.reps, load0,
                                                  os.getloadavg()[0]))
    for b in bins:
        print("  %s: %.1f s wall, %.1f s CPU" % (
            b, statistics.median(t[0] for t in times[b]),
            statistics.median(t[1] for t in times[b])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
