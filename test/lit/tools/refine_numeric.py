#!/usr/bin/env python3
"""`fix --refine-all` on a model-like chain: the refined file verifies with
mlir-opt, is a fixed point of the inference, and computes the same numbers.

  1. tosa-lsp fix --refine-all INPUT            -> WORK/refined.mlir
  2. mlir-opt --split-input-file WORK/refined.mlir must succeed
  3. tosa-lsp explain --format=json on the input reports R > 0 refinable
     ops, on the refined file 0 (nothing left to refine), and the refined
     file has fewer `?` sizes
  4. for each --mode and seed: tosa-lsp run --function=F --random=SEED on
     both files (JIT-compiled by MLIR's pipeline); the results must have the
     same shapes and values (floats within rtol 1e-6, atol 1e-7: static
     shapes may change the order of vectorised reductions).

Prints
  refined: R ops, `?` sizes D -> E, verifies with mlir-opt, fixed point
  refine-numeric: N runs equal, M differ
"""

import argparse
import json
import math
import os
import re
import subprocess
import sys


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout, p.stderr


def count_dynamic(text):
    return len(re.findall(r"(?<=[<x])\?(?=x)", text))


def refined_ops(tosa_lsp, path):
    rc, out, err = run([tosa_lsp, "explain", "--format=json", path])
    if rc != 0:
        sys.exit("explain failed on %s: %s" % (path, err))
    return sum(1 for op in json.loads(out)["shapes"] if op["refined"])


def close(a, b):
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if isinstance(a, float) and math.isnan(a):
            return isinstance(b, float) and math.isnan(b)
        return abs(a - b) <= 1e-7 + 1e-6 * abs(b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(close(a[k], b[k]) for k in a)
    return a == b


def main(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--tosa-lsp", required=True)
    p.add_argument("--mlir-opt", default="mlir-opt-22")
    p.add_argument("--input", required=True)
    p.add_argument("--function", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--modes", default="upstream,fast")
    p.add_argument("--seeds", default="1,2")
    args = p.parse_args(argv)
    os.makedirs(args.work, exist_ok=True)

    rc, refined, err = run([args.tosa_lsp, "fix", "--refine-all", args.input])
    if rc != 0:
        sys.exit("fix --refine-all failed: %s" % err)
    out = os.path.join(args.work, "refined.mlir")
    with open(out, "w") as f:
        f.write(refined)
    rc, _, err = run([args.mlir_opt, "--split-input-file", "-o", os.devnull,
                      out])
    if rc != 0:
        sys.exit("mlir-opt rejects the refined file:\n%s" % err)
    with open(args.input) as f:
        original = f.read()
    before = refined_ops(args.tosa_lsp, args.input)
    after = refined_ops(args.tosa_lsp, out)
    print("refined: %d ops, `?` sizes %d -> %d, verifies with mlir-opt%s"
          % (before, count_dynamic(original), count_dynamic(refined),
             ", fixed point" if after == 0 else
             ", %d ops still refinable" % after))

    equal = differ = 0
    for mode in args.modes.split(","):
        for seed in args.seeds.split(","):
            results = []
            for path in (args.input, out):
                rc, o, err = run([args.tosa_lsp, "run",
                                  "--function=" + args.function,
                                  "--random=" + seed, "--mode=" + mode, path])
                if rc != 0:
                    sys.exit("run failed on %s (mode %s): %s"
                             % (path, mode, err))
                results.append(json.loads(o))
            a, b = results
            if a["inputs"] == b["inputs"] and close(a["results"],
                                                    b["results"]):
                equal += 1
            else:
                differ += 1
                print("DIFFER: mode %s seed %s" % (mode, seed))
    print("refine-numeric: %d runs equal, %d differ" % (equal, differ))
    return 1 if differ or not equal else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
