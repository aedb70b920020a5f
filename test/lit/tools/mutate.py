#!/usr/bin/env python3
"""Robustness: feed `tosa-lsp check` mutated real files (truncations, deleted
and duplicated lines, swapped tokens, random bytes) and require a clean exit
(0 or 1) every time: bad input must never crash or hang the tool."""
import argparse
import os
import random
import subprocess
import sys
import tempfile


def mutations(text, rng):
    lines = text.split("\n")
    kind = rng.randrange(6)
    if kind == 0:  # truncate anywhere
        return text[: rng.randrange(len(text) + 1)]
    if kind == 1 and lines:  # delete a line
        del lines[rng.randrange(len(lines))]
        return "\n".join(lines)
    if kind == 2 and lines:  # duplicate a line (redefinitions, stray ops)
        i = rng.randrange(len(lines))
        lines.insert(rng.randrange(len(lines) + 1), lines[i])
        return "\n".join(lines)
    if kind == 3:  # delete a random span of characters
        a = rng.randrange(len(text) + 1)
        return text[:a] + text[a + rng.randrange(1, 40):]
    if kind == 4:  # swap two tokens
        toks = text.split(" ")
        if len(toks) > 2:
            i, j = rng.randrange(len(toks)), rng.randrange(len(toks))
            toks[i], toks[j] = toks[j], toks[i]
        return " ".join(toks)
    # insert punctuation that stresses the parser
    a = rng.randrange(len(text) + 1)
    return text[:a] + rng.choice(["{", "}", "(", ")", "<", ">", "%", "^bb9:",
                                  "// -----\n", "\"", "tensor<?x", "->", ":"]) + text[a:]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--tosa-lsp", required=True)
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("inputs", nargs="+", help="files or directories of .mlir")
    args = ap.parse_args()

    files = []
    for p in args.inputs:
        if os.path.isdir(p):
            for root, _, names in os.walk(p):
                files += [os.path.join(root, n) for n in sorted(names) if n.endswith(".mlir")]
        elif os.path.exists(p):
            files.append(p)
    if not files:
        print("mutate: no input files, skipping")
        return 0
    files.sort()
    rng = random.Random(args.seed)
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "mutated.mlir")
        for n in range(args.count):
            src = rng.choice(files)
            with open(src, encoding="utf-8", errors="replace") as f:
                text = f.read()
            for _ in range(rng.randrange(1, 4)):
                text = mutations(text, rng)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            try:
                r = subprocess.run([args.tosa_lsp, "check", "--format=json", path],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                   timeout=60)
                ok = r.returncode in (0, 1, 2)
                why = f"exit code {r.returncode}: {r.stderr.decode(errors='replace')[-300:]}"
            except subprocess.TimeoutExpired:
                ok, why = False, "timeout"
            if not ok:
                failed += 1
                keep = os.path.join(os.environ.get("TMPDIR", "/tmp"),
                                    f"tosa-lsp-crash-{args.seed}-{n}.mlir")
                with open(keep, "w", encoding="utf-8") as f:
                    f.write(text)
                print(f"FAIL #{n} from {src}: {why} (input kept at {keep})")
    print(f"mutate: {args.count - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
