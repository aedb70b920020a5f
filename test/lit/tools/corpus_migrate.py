#!/usr/bin/env python3
"""`tosa-lsp fix --migrate` over every *.mlir file of a corpus (read in
place, never copied). For each file:

  * mlir-opt-22 verifies it already  =>  the migration exits 0 and does not
    change a byte (no effect on files MLIR 22 accepts);
  * otherwise the migration either
      - refuses (exit 1, nothing printed: the result would re-analyse
        worse), which leaves the file as it is, or
      - exits 1 with the migrated text and the exact list of ops left
        (`FILE:LINE:COL: error: ...` on stderr, one per op, and the count
        line `migrated N ops; K left ...` whose K matches the list), or
      - exits 0: the migrated file verifies (the server's analysis) and
        mlir-opt-22 accepts it (`--split-input-file
        --allow-unregistered-dialect`), unless mlir-opt-22 cannot parse
        the custom syntax of a dialect it does not have (which tosa-lsp
        parses leniently; the TOSA in it is counted clean);
    and the migrated file never has more errors than the original.

Prints each file that became clean and each file left with its list, then
`migrate: N files, V valid (unchanged), R rejected by mlir-opt-22, M
migrated (O ops), C clean after migration, L left with a list, X refused,
F failed`; exits 1 when any check fails.
"""

import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(__file__))
from corpus_sweep import find_files, run  # noqa: E402

FOREIGN = re.compile(r"error: Dialect `\w+' not found for custom op")


def errors(tosa_lsp, path):
    code, out, _ = run([tosa_lsp, "check", path], 120)
    return sum(1 for l in out.splitlines() if ": error: " in l)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--tosa-lsp", required=True)
    ap.add_argument("--mlir-opt", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    if not os.path.isdir(args.corpus):
        print(f"migrate: corpus {args.corpus} absent, skipped")
        return 0
    os.makedirs(args.work, exist_ok=True)
    opt = [args.mlir_opt, "--split-input-file", "--allow-unregistered-dialect",
           "-o", "/dev/null"]
    files = find_files(args.corpus)
    n = dict(valid=0, rejected=0, migrated=0, ops=0, clean=0, left=0,
             refused=0, failed=0)

    def fail(rel, why):
        print(f"FAIL {rel}: {why}")
        n["failed"] += 1

    for i, path in enumerate(files):
        rel = os.path.relpath(path, args.corpus)
        original = open(path, "rb").read().decode("utf-8", "replace")
        valid = run(opt + [path], 120)[0] == 0
        n["valid" if valid else "rejected"] += 1
        code, out, err = run([args.tosa_lsp, "fix", "--migrate",
                              "--format=json", path], 120)
        if code is None or code > 1:
            fail(rel, f"fix --migrate exited {code}: {err.strip()[:300]}")
            continue
        if code == 1 and not out:
            if valid:
                fail(rel, "mlir-opt-22 accepts it, yet the migration refused")
            n["refused"] += 1
            continue
        result = json.loads(out)
        text, listed = result["text"], result["manual"]
        if valid:
            if code != 0 or text != original:
                fail(rel, "mlir-opt-22 accepts it, yet the migration changed "
                     f"it or exited {code}: {err.strip()[:300]}")
            continue
        if (code == 0) != (not listed) or (code == 0) != result["verifies"]:
            fail(rel, f"exit {code} with {len(listed)} ops listed")
            continue
        lines = [l for l in err.splitlines() if ": error: " in l]
        if len(lines) != len(listed) or (listed and not re.search(
                rf"migrated \d+ ops; {len(listed)} left", err)):
            fail(rel, f"{len(listed)} ops left but stderr names {len(lines)}")
            continue
        out_path = os.path.join(args.work, f"{i}.mlir")
        with open(out_path, "w") as f:
            f.write(text)
        if text != original:
            n["migrated"] += 1
            n["ops"] += result["migrated"]
            before, after = errors(args.tosa_lsp, path), errors(
                args.tosa_lsp, out_path)
            if after > before:
                fail(rel, f"{before} errors before, {after} after")
                continue
        if listed:
            n["left"] += 1
            print(f"left: {rel}: {len(listed)} ops, first at line "
                  f"{listed[0]['line']}: {listed[0]['message'][:120]}")
            continue
        ok, _, opt_err = run(opt + [out_path], 120)
        if ok == 0:
            n["clean"] += 1
            print(f"clean: {rel}")
        elif not FOREIGN.search(opt_err):
            fail(rel, "exit 0, yet mlir-opt-22 rejects the migrated file: "
                 + opt_err.strip().splitlines()[0][:300])
    print(f"migrate: {len(files)} files, {n['valid']} valid (unchanged), "
          f"{n['rejected']} rejected by mlir-opt-22, {n['migrated']} migrated "
          f"({n['ops']} ops), {n['clean']} clean after migration, "
          f"{n['left']} left with a list, {n['refused']} refused, "
          f"{n['failed']} failed")
    return 1 if n["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
