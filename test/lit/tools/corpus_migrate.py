#!/usr/bin/env python3
"""`tosa-lsp fix --migrate` over every *.mlir file of a corpus (read in
place, never copied). For each file:

  * mlir-opt-22 verifies it already  =>  the migration must not change a
    byte (no effect on files MLIR 22 accepts);
  * otherwise, when the migration changes the file: the migrated file must
    not be worse (tosa-lsp exits 0 and checks it with no more errors than
    the original), and it is counted as *clean* when mlir-opt-22 verifies
    it (`--split-input-file --allow-unregistered-dialect`).

Prints the files that became clean, then
`migrate: N files, U unchanged (already valid), M migrated, C clean after
migration, F failed`; exits 1 when any check fails.
"""

import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from corpus_sweep import find_files, run  # noqa: E402


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
    unchanged = migrated = clean = failed = 0
    for i, path in enumerate(files):
        rel = os.path.relpath(path, args.corpus)
        original = open(path, "rb").read().decode("utf-8", "replace")
        valid = run(opt + [path], 120)[0] == 0
        code, out, err = run([args.tosa_lsp, "fix", "--migrate", path], 120)
        if code != 0:
            # Refused (it would not re-analyse better): the file is left as
            # it is, which is never worse; a crash or timeout is a failure.
            if code is None or code > 1 or valid:
                print(f"FAIL {rel}: fix --migrate exited {code}: {err.strip()}")
                failed += 1
            continue
        if out == original:
            unchanged += valid
            continue
        if valid:
            print(f"FAIL {rel}: mlir-opt-22 accepts it, yet the migration changed it")
            failed += 1
            continue
        migrated += 1
        out_path = os.path.join(args.work, f"{i}.mlir")
        with open(out_path, "w") as f:
            f.write(out)
        before, after = errors(args.tosa_lsp, path), errors(args.tosa_lsp, out_path)
        if after > before:
            print(f"FAIL {rel}: {before} errors before, {after} after")
            failed += 1
            continue
        if run(opt + [out_path], 120)[0] == 0:
            clean += 1
            print(f"clean: {rel}")
    print(f"migrate: {len(files)} files, {unchanged} unchanged (already valid), "
          f"{migrated} migrated, {clean} clean after migration, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
