#!/usr/bin/env python3
"""Robustness and first-error agreement of tosa-lsp over a corpus of files.

For every *.mlir file under --corpus, runs `tosa-lsp check --format=json FILE`
and `mlir-opt --split-input-file --allow-unregistered-dialect -o /dev/null
FILE` (both with a timeout) and checks:

  * tosa-lsp never crashes or times out: exit code 0 or 1, JSON on stdout,
    and exit code 1 exactly when it reports an error diagnostic;
  * mlir-opt succeeds  =>  tosa-lsp reports no error-severity diagnostic;
  * mlir-opt fails     =>  tosa-lsp's first error diagnostic (in output order)
    has mlir-opt's first error's line, column and message.

Why: real-world files exercise the parser and verifiers far beyond what the
hand-written tests do, and mlir-opt is the reference for the first error
(mlir-opt stops at the first verifier error per function, so later errors
are not comparable).
"""

import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys

# "path:LINE:COL: error: MESSAGE" (mlir-opt prints the source line and a caret
# after it, which never start like this).
DIAG_RE = re.compile(r"^(.*?):(\d+):(\d+): (error|warning|note|remark): (.*)$")

# mlir-opt-22 (Debian 22.1.8) scans `expected-*` annotations even without
# --verify-diagnostics and, after all real diagnostics, prints one error per
# annotation, e.g. `expected error "foo" was not produced`, while still
# exiting 0. These are not diagnostics of the input and are ignored.
VERIFIER_NOISE_RE = re.compile(
    r'^expected (error|warning|note|remark) ".*" was not produced$')


def find_files(corpus):
    """All *.mlir files under `corpus`, sorted for a stable report."""
    found = []
    for root, dirs, files in os.walk(corpus):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(".mlir"):
                found.append(os.path.join(root, name))
    return found


def run(cmd, timeout):
    """Runs cmd; returns (returncode or None on timeout, stdout, stderr)."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True,
                              errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "", ""
    return proc.returncode, proc.stdout, proc.stderr


def first_mlir_error(stderr):
    """(path, line, column, message) of mlir-opt's first error, or None."""
    for line in stderr.splitlines():
        m = DIAG_RE.match(line)
        if m and m.group(4) == "error" and \
                not VERIFIER_NOISE_RE.match(m.group(5)):
            return m.group(1), int(m.group(2)), int(m.group(3)), m.group(5)
    return None


def file_entry(data, path):
    """The `files[]` entry of tosa-lsp's JSON output for `path`."""
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, list):
        return None
    for entry in files:
        if isinstance(entry, dict) and entry.get("path") in (
                path, os.path.abspath(path)):
            return entry
    if len(files) == 1 and isinstance(files[0], dict):
        return files[0]
    return None


def fmt_diag(d):
    return "%s:%s: %s" % (d.get("line"), d.get("column"), d.get("message"))


def check_file(path, tosa_lsp, mlir_opt, timeout):
    """Returns (status, [problems]); status is 'pass', 'fail' or 'skip'."""
    problems = []
    rc, out, err = run([tosa_lsp, "check", "--format=json", path], timeout)
    if rc is None:
        return "fail", ["tosa-lsp timed out after %d s" % timeout]
    if rc < 0:
        return "fail", ["tosa-lsp killed by signal %d; stderr: %s"
                        % (-rc, err.strip()[-500:])]
    if rc not in (0, 1):
        return "fail", ["tosa-lsp exit code %d; stderr: %s"
                        % (rc, err.strip()[-500:])]
    try:
        data = json.loads(out)
    except ValueError as e:
        return "fail", ["tosa-lsp output is not JSON (%s): %r" % (e, out[:300])]
    entry = file_entry(data, path)
    if entry is None:
        return "fail", ["no files[] entry for the input in tosa-lsp output"]
    diags = entry.get("diagnostics") or []
    errors = [d for d in diags if d.get("severity") == "error"]
    if (rc == 1) != bool(errors):
        problems.append("tosa-lsp exit code %d but %d error diagnostic(s)"
                        % (rc, len(errors)))

    mrc, _, merr = run([mlir_opt, "--split-input-file",
                        "--allow-unregistered-dialect", "-o", os.devnull,
                        path], timeout)
    if mrc is None or mrc < 0 or mrc not in (0, 1):
        why = "timed out" if mrc is None else "exit code %d" % mrc
        return ("fail" if problems else "skip"), problems + [
            "mlir-opt %s, reference unavailable" % why]

    if mrc == 0:
        for d in errors:
            problems.append("mlir-opt accepts the file, tosa-lsp reports "
                            "error [%s] %s" % (d.get("source"), fmt_diag(d)))
        return ("fail" if problems else "pass"), problems

    ref = first_mlir_error(merr)
    if ref is None:
        problems.append("mlir-opt failed without a located error: %s"
                        % merr.strip()[:300])
        if not errors:
            problems.append("tosa-lsp reports no error")
        return "fail", problems
    rpath, rline, rcol, rmsg = ref
    where = "" if rpath == path else " (mlir-opt location in %s)" % rpath
    if not errors:
        problems.append("mlir-opt: %d:%d: %s%s; tosa-lsp reports no error"
                        % (rline, rcol, rmsg, where))
    else:
        first = errors[0]
        if (first.get("line"), first.get("column"), first.get("message")) != \
                (rline, rcol, rmsg):
            problems.append("first error differs%s:\n      mlir-opt: %d:%d: %s"
                            "\n      tosa-lsp: %s [%s]"
                            % (where, rline, rcol, rmsg, fmt_diag(first),
                               first.get("source")))
    return ("fail" if problems else "pass"), problems


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", required=True, help="directory to sweep")
    p.add_argument("--tosa-lsp", required=True, help="path to tosa-lsp")
    p.add_argument("--mlir-opt", default="mlir-opt-22",
                   help="path to mlir-opt (default: mlir-opt-22)")
    p.add_argument("--jobs", type=int, default=2,
                   help="files checked in parallel (default 2)")
    p.add_argument("--timeout", type=int, default=60,
                   help="timeout per tool run in seconds (default 60)")
    return p.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    if not os.path.isdir(args.corpus):
        print("corpus not found: %s, skipping" % args.corpus)
        return 0
    files = find_files(args.corpus)
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        results = list(pool.map(
            lambda f: check_file(f, args.tosa_lsp, args.mlir_opt,
                                 args.timeout), files))

    counts = {"pass": 0, "fail": 0, "skip": 0}
    for path, (status, problems) in zip(files, results):
        counts[status] += 1
        if problems:
            label = "FAIL" if status == "fail" else "SKIP"
            print("%s: %s" % (label, os.path.relpath(path, args.corpus)))
            for problem in problems:
                print("    " + problem)
    if counts["skip"]:
        print("corpus: %d skipped (mlir-opt crashed or timed out)"
              % counts["skip"])
    print("corpus: %d passed, %d failed" % (counts["pass"], counts["fail"]))
    return 1 if counts["fail"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
