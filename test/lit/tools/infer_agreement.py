#!/usr/bin/env python3
"""Agreement of tosa-lsp's shape inference with `mlir-opt --tosa-infer-shapes`.

For every *.mlir file under --corpus (or the files given with --file), runs

  tosa-lsp explain --format=json FILE
  mlir-opt --split-input-file --allow-unregistered-dialect
           --tosa-infer-shapes --mlir-print-debuginfo --mlir-print-local-scope
           --mlir-print-op-generic FILE

and, for each op tosa-lsp reports under "shapes", finds the op mlir-opt
printed at the same file:line:col with the same name and compares the
result types: tosa-lsp's "inferred" must equal what the pass left.

Also checks, with plain `mlir-opt --split-input-file
--allow-unregistered-dialect FILE`: on a file mlir-opt accepts, tosa-lsp
reports no error diagnostic; a contradiction MLIR's verifier rejects on
the refined op ("rejection": an error) only where `--tosa-infer-shapes`
fails on that very op (its output no longer verifies), one it accepts is a
warning; and wherever the pass fails on an op tosa-lsp reports, tosa-lsp
reports a contradiction there too (none missed).

Prints per-file problems and one summary line:
  infer: N ops agree, D disagree, U unmatched, R refined, K contradictions
         confirmed by the pass, C unconfirmed, W warnings, M missed and E
         errors on accepted files; F files, X runs failed
and exits 1 on any disagreement or new error. An op is "unmatched" when
mlir-opt printed nothing at its location (a section mlir-opt rejected, or an
input with its own loc(...) annotations).
"""

import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys

LOC_RE = re.compile(r'loc\("((?:[^"\\]|\\.)*)":(\d+):(\d+)\)\s*$')
OPNAME_RE = re.compile(r'^\s*(?:%[^=]*=\s*)?"([^"]+)"\(')


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corpus_sweep import find_files, run  # noqa: E402  (one copy of each)


def split_top(text, sep):
    """Splits `text` on `sep` outside brackets and strings."""
    parts, depth, cur, i = [], 0, [], 0
    while i < len(text):
        c = text[i]
        if c == '"':
            j = i + 1
            while j < len(text) and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            cur.append(text[i:j + 1])
            i = j + 1
            continue
        if text.startswith("->", i):
            if depth == 0 and sep == "->":
                parts.append("".join(cur))
                cur = []
            else:
                cur.append("->")
            i += 2
            continue
        if c in "([{<":
            depth += 1
        elif c in ")]}>":
            depth -= 1
        if depth == 0 and sep != "->" and text.startswith(sep, i):
            parts.append("".join(cur))
            cur = []
            i += len(sep)
            continue
        cur.append(c)
        i += 1
    parts.append("".join(cur))
    return parts


def result_types(signature):
    """['tensor<..>', ...] of ' (a, b) -> (c, d)' or ' (a) -> c'."""
    parts = split_top(signature, "->")
    if len(parts) < 2:
        return None
    res = parts[-1].strip()
    if res.startswith("(") and res.endswith(")"):
        inner = res[1:-1].strip()
        return [t.strip() for t in split_top(inner, ",")] if inner else []
    return [res]


def mlir_opt_types(output):
    """{(line, col, name): [result types]} from generic, located output."""
    out = {}
    stack = []  # names of ops whose regions are open
    for raw in output.splitlines():
        line = raw.rstrip()
        m = OPNAME_RE.match(line)
        opens = line.endswith("({") or line.endswith("{")
        if m and opens and not LOC_RE.search(line):
            stack.append(m.group(1))
            continue
        loc = LOC_RE.search(line)
        if not loc:
            continue
        body = line[:loc.start()]
        stripped = body.lstrip()
        if stripped.startswith("})") or stripped.startswith("}"):
            if not stack:
                continue
            name = stack.pop()
            parts = split_top(stripped[2:] if stripped.startswith("})")
                              else stripped[1:], " : ")
        else:
            if not m:
                continue
            name = m.group(1)
            parts = split_top(body, " : ")
        if len(parts) < 2:
            continue
        types = result_types(parts[-1])
        if types is None:
            continue
        key = (int(loc.group(2)), int(loc.group(3)), name)
        # Casts inserted by the pass share their producer's location but
        # have another name; the first op printed at a location wins.
        out.setdefault(key, types)
    return out


def check_file(path, args):
    """(counts dict, [problems])."""
    counts = {"agree": 0, "disagree": 0, "unmatched": 0, "refined": 0,
              "contradictions": 0, "errors": 0, "confirmed": 0,
              "warnings": 0, "missed": 0,
              "refineFiles": 0, "refineChanged": 0, "refineRejected": 0}
    problems = []
    rc, out, err = run([args.tosa_lsp, "explain", "--format=json", path],
                       args.timeout)
    if rc != 0:
        problems.append("tosa-lsp explain failed (exit %s): %s"
                        % (rc, err.strip()[-300:]))
        return counts, problems, True
    try:
        data = json.loads(out)
    except ValueError as e:
        problems.append("tosa-lsp output is not JSON: %s" % e)
        return counts, problems, True
    shapes = data.get("shapes", [])
    diags = data.get("diagnostics", [])
    mrc, mout, merr = run([args.mlir_opt, "--split-input-file",
                        "--allow-unregistered-dialect", "--tosa-infer-shapes",
                        "--mlir-print-debuginfo", "--mlir-print-local-scope",
                        "--mlir-print-op-generic", path], args.timeout)
    if mrc is None or mrc < 0:
        problems.append("mlir-opt --tosa-infer-shapes crashed or timed out")
        ref = {}
    else:
        ref = mlir_opt_types(mout)
    # Errors of the pass run (its output fails to verify): they confirm a
    # contradiction at the same op.
    pass_errors = set()
    for line in merr.splitlines():
        m = re.match(r"^(.*?):(\d+):(\d+): error: ", line)
        if m:
            pass_errors.add((int(m.group(2)), int(m.group(3))))
    for op in shapes:
        inferred = [r["inferred"] for r in op["results"]]
        if op.get("refined"):
            counts["refined"] += 1
        key = (op["line"], op["column"], op["name"])
        if key not in ref:
            counts["unmatched"] += 1
            continue
        if ref[key] == inferred:
            counts["agree"] += 1
        else:
            counts["disagree"] += 1
            problems.append("%d:%d %s: tosa-lsp infers %s, mlir-opt "
                            "--tosa-infer-shapes gives %s"
                            % (key[0], key[1], key[2], inferred, ref[key]))
    arc, _, _ = run([args.mlir_opt, "--split-input-file",
                     "--allow-unregistered-dialect", "-o", os.devnull, path],
                    args.timeout)
    if arc == 0:
        for op in shapes:
            at = (op["line"], op["column"])
            if not op.get("contradiction"):
                if at in pass_errors:
                    counts["missed"] += 1
                    problems.append("%d:%d %s: --tosa-infer-shapes fails "
                                    "there, tosa-lsp reports no contradiction"
                                    % (at[0], at[1], op["name"]))
                continue
            if at in pass_errors:
                counts["confirmed"] += 1
                continue
            if op.get("rejection") is None:
                counts["warnings"] += 1  # MLIR's verifier accepts the op
                continue
            counts["contradictions"] += 1
            problems.append("%d:%d %s: contradiction reported on a file "
                            "mlir-opt accepts, and --tosa-infer-shapes "
                            "reports no error there"
                            % (op["line"], op["column"], op["name"]))
        for d in diags:
            if d.get("severity") == "error":
                counts["errors"] += 1
                problems.append("error on a file mlir-opt accepts: %s:%s: %s"
                                % (d.get("line"), d.get("column"),
                                   d.get("message")))
    if args.refine and arc == 0:
        # The refine-all edit keeps an accepted file accepted.
        rrc, refined, rerr = run([args.tosa_lsp, "fix", "--refine-all", path],
                                 args.timeout)
        if rrc != 0:
            problems.append("fix --refine-all failed: %s" % rerr.strip()[-300:])
        else:
            counts["refineFiles"] += 1
            with open(path, errors="replace") as f:
                original = f.read()
            if refined != original:
                counts["refineChanged"] += 1
                vrc, _, verr = run_input(
                    [args.mlir_opt, "--split-input-file",
                     "--allow-unregistered-dialect", "-o", os.devnull, "-"],
                    refined, args.timeout)
                if vrc != 0:
                    problems.append("mlir-opt rejects the refined file: %s"
                                    % verr.strip()[:300])
                    counts["refineRejected"] += 1
    return counts, problems, False


def run_input(cmd, text, timeout):
    try:
        proc = subprocess.run(cmd, input=text, capture_output=True, text=True,
                              errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "", ""
    return proc.returncode, proc.stdout, proc.stderr


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", help="directory of *.mlir files")
    p.add_argument("--file", action="append", default=[],
                   help="a single file (repeatable)")
    p.add_argument("--tosa-lsp", required=True)
    p.add_argument("--mlir-opt", default="mlir-opt-22")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--timeout", type=int, default=120)
    p.add_argument("--refine", action="store_true",
                   help="also: fix --refine-all keeps every accepted file "
                        "accepted by mlir-opt")
    args = p.parse_args(argv)
    files = list(args.file)
    if args.corpus:
        if not os.path.isdir(args.corpus):
            print("corpus not found: %s, skipping" % args.corpus)
            return 0
        files += find_files(args.corpus)
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        results = list(pool.map(lambda f: check_file(f, args), files))
    total = {"agree": 0, "disagree": 0, "unmatched": 0, "refined": 0,
             "contradictions": 0, "errors": 0, "confirmed": 0,
             "warnings": 0, "missed": 0, "refineFiles": 0, "refineChanged": 0, "refineRejected": 0}
    failed_runs = 0
    for path, (counts, problems, run_failed) in zip(files, results):
        failed_runs += run_failed
        for k in total:
            total[k] += counts[k]
        if problems:
            print("FAIL: %s" % (os.path.relpath(path, args.corpus)
                                if args.corpus else path))
            for pr in problems[:20]:
                print("    " + pr)
    print("infer: %d ops agree, %d disagree, %d unmatched, %d refined, "
          "%d contradictions confirmed by the pass, %d unconfirmed, %d "
          "warnings, %d missed and %d errors on accepted files; %d files, "
          "%d runs failed"
          % (total["agree"], total["disagree"], total["unmatched"],
             total["refined"], total["confirmed"], total["contradictions"],
             total["warnings"], total["missed"], total["errors"], len(files),
             failed_runs))
    if args.refine:
        print("refine-all: %d accepted files, %d changed, %d rejected by "
              "mlir-opt" % (total["refineFiles"], total["refineChanged"],
                            total["refineRejected"]))
    bad = total["disagree"] or total["contradictions"] or total["errors"] \
        or total["missed"] \
        or failed_runs or total["refineRejected"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
