#!/usr/bin/env python3
"""Checks tosa-lsp against the `expected-*` annotations of MLIR test files.

Parses `-verify-diagnostics` annotations the way MLIR does
(mlir/lib/IR/Diagnostics.cpp, SourceMgrDiagnosticVerifierHandler):

    // expected-error {{msg}}            diagnostic on this line
    // expected-error@+N {{msg}}         N lines below (@-N: above)
    // expected-error@above {{msg}}      last preceding non-annotation line
    // expected-error@below {{msg}}      next non-annotation line
    // expected-error@unknown {{msg}}    unknown location (matched anywhere)
    // expected-error-re {{a {{[0-9]+}} b}}   literal text with regex parts

`msg` is everything between the first `{{` after the designator and the
`}}` ending the line; it must be a substring of the diagnostic message (or,
with `-re`, the regex must match somewhere in it). With --split-input-file
semantics every `// -----` chunk is scanned on its own (matters for @above /
@below at chunk boundaries); line numbers are those of the whole file.

Runs `tosa-lsp check --format=json FILE` and checks that every expected error
and warning is reported at its line with a matching message. Notes and
remarks are counted but not checked yet. Why: upstream MLIR tests carry their
expected diagnostics inline, so they double as a ready-made oracle.
"""

import argparse
import json
import os
import re
import subprocess
import sys

SPLIT_MARKER = "// -----"

# The regex of SourceMgrDiagnosticVerifierHandlerImpl, applied to each
# right-trimmed line (llvm::Regex treats the `{{` / `}}` as literals).
ANNOTATION_RE = re.compile(
    r"expected-(error|note|remark|warning)(-re)? *"
    r"(@([+-][0-9]+|above|below|unknown))? *\{\{(.*)\}\}$")

CHECKED_KINDS = ("error", "warning")

# POSIX bracket classes used by llvm::Regex that Python's re lacks.
POSIX_CLASSES = {
    "[:alnum:]": "a-zA-Z0-9", "[:alpha:]": "a-zA-Z", "[:digit:]": "0-9",
    "[:lower:]": "a-z", "[:upper:]": "A-Z", "[:space:]": r"\s",
    "[:xdigit:]": "0-9a-fA-F", "[:punct:]": r"!-/:-@\[-`{-~",
    "[:blank:]": r" \t",
}


class Expectation:
    """One `expected-*` annotation."""

    def __init__(self, kind, line, annot_line, text, designator):
        self.kind = kind              # error / warning / note / remark
        self.line = line              # line the diagnostic is expected on
        self.annot_line = annot_line  # line of the annotation itself
        self.text = text
        self.designator = designator  # "", "+1", "above", "unknown", ...
        self.regex = None             # compiled pattern for -re
        self.invalid = None           # why a -re annotation is unusable
        self.matched = False

    @property
    def unknown_loc(self):
        return self.designator == "unknown"

    def match(self, message):
        if self.regex is not None:
            return self.regex.search(message) is not None
        return self.text in message

    def describe(self):
        where = "@" + self.designator if self.designator else ""
        return "expected-%s%s%s {{%s}}" % (
            self.kind, "-re" if self.regex or self.invalid else "", where,
            self.text)


def posix_to_python(regex):
    for cls, repl in POSIX_CLASSES.items():
        regex = regex.replace(cls, repl)
    return regex


def compile_re_annotation(text):
    """Literal text with `{{regex}}` blocks -> compiled pattern (or error)."""
    out = []
    rest = text
    while rest:
        start = rest.find("{{")
        if start < 0:
            out.append(re.escape(rest))
            break
        out.append(re.escape(rest[:start]))
        rest = rest[start + 2:]
        end = rest.find("}}")
        if end < 0:
            return None, "found start of regex with no end '}}'"
        out.append("(" + posix_to_python(rest[:end]) + ")")
        rest = rest[end + 2:]
    try:
        return re.compile("".join(out)), None
    except re.error as e:
        return None, "invalid regex: %s" % e


def split_chunks(text, split):
    """[(first file line, chunk text)] like mlir-opt --split-input-file.

    mlir-opt 22 splits on the plain substring `// -----`; the next chunk
    starts right after it, i.e. on the marker's line.
    """
    if not split:
        return [(1, text)]
    chunks = []
    pos, line = 0, 1
    while True:
        idx = text.find(SPLIT_MARKER, pos)
        if idx < 0:
            chunks.append((line, text[pos:]))
            return chunks
        chunks.append((line, text[pos:idx]))
        line += text.count("\n", pos, idx)
        pos = idx + len(SPLIT_MARKER)


def parse_chunk(first_line, text):
    """Expectations of one chunk, mirroring computeExpectedDiags()."""
    found = []
    lines = text.split("\n")
    last_non_designator = 0   # 0-based index within the chunk
    pending_below = []
    for idx, raw in enumerate(lines):
        m = ANNOTATION_RE.search(raw.rstrip())
        if not m:
            for exp in pending_below:
                exp.line = first_line + idx
            pending_below = []
            last_non_designator = idx
            continue
        kind, is_re, _, designator, body = m.groups()
        designator = designator or ""
        exp = Expectation(kind, first_line + idx, first_line + idx, body,
                          designator)
        if is_re:
            exp.regex, exp.invalid = compile_re_annotation(body)
            if exp.invalid:
                found.append(exp)
                continue
        if designator and designator[0] in "+-":
            offset = int(designator[1:])
            exp.line += offset if designator[0] == "+" else -offset
        elif designator == "above":
            exp.line = first_line + last_non_designator
        elif designator == "below":
            pending_below.append(exp)
            exp.line = first_line + len(lines) - 1  # if left dangling
        found.append(exp)
    return found


def parse_expectations(path, split=True):
    with open(path, encoding="utf-8", errors="replace", newline="") as f:
        text = f.read()
    result = []
    for first_line, chunk in split_chunks(text, split):
        result.extend(parse_chunk(first_line, chunk))
    return result


def run_tosa_lsp(tosa_lsp, path, timeout):
    """Diagnostics (with notes flattened in) reported by tosa-lsp for path."""
    proc = subprocess.run([tosa_lsp, "check", "--format=json", path],
                          capture_output=True, text=True, errors="replace",
                          timeout=timeout)
    if proc.returncode not in (0, 1):
        raise RuntimeError("tosa-lsp exited with %d: %s"
                           % (proc.returncode, proc.stderr.strip()[-500:]))
    data = json.loads(proc.stdout)
    files = data.get("files") or []
    entry = next((f for f in files if f.get("path") in
                  (path, os.path.abspath(path))), None)
    if entry is None:
        entry = files[0] if len(files) == 1 else {}
    diags = []
    for d in entry.get("diagnostics") or []:
        diags.append(d)
        for n in d.get("notes") or []:
            diags.append(dict(n, severity="note"))
    return diags


def verify(expectations, diags):
    """Marks matched expectations the way MLIR's process() does.

    Each reported diagnostic (notes included) matches the first expectation
    on its line with a matching text and the same severity. Like MLIR, this
    does not skip expectations already matched: of two identical annotations
    on one line only the first can ever be matched. Returns the reported
    errors/warnings that matched nothing.
    """
    unexpected = []
    for d in diags:
        sev = d.get("severity")
        kind = "remark" if sev == "info" else sev
        msg = d.get("message", "")
        hit = None
        for exp in expectations:
            if exp.invalid:
                continue
            if not exp.unknown_loc and exp.line != d.get("line"):
                continue
            if exp.match(msg) and exp.kind == kind:
                hit = exp
                break
        if hit is not None:
            hit.matched = True
        elif kind in CHECKED_KINDS:
            unexpected.append(d)
    return unexpected


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--tosa-lsp", help="path to tosa-lsp")
    p.add_argument("--list", action="store_true",
                   help="only print the parsed expectations")
    p.add_argument("--no-split", action="store_true",
                   help="treat the file as one chunk (no --split-input-file)")
    p.add_argument("--strict", action="store_true",
                   help="also fail on reported errors/warnings not expected")
    p.add_argument("--timeout", type=int, default=60)
    args = p.parse_args(argv)
    if not args.list and not args.tosa_lsp:
        p.error("--tosa-lsp is required unless --list is given")
    return args


def list_expectations(path, expectations):
    counts = {}
    for exp in expectations:
        counts[exp.kind] = counts.get(exp.kind, 0) + 1
        where = "unknown" if exp.unknown_loc else str(exp.line)
        extra = "  [INVALID: %s]" % exp.invalid if exp.invalid else ""
        print("%s:%s: %s: %s   (annotation at line %d%s)%s"
              % (path, where, exp.kind, exp.text, exp.annot_line,
                 ", @" + exp.designator if exp.designator else "",
                 "" if not (exp.regex or exp.invalid) else " [-re]" + extra))
    print("%s: %s" % (path, ", ".join("%d expected-%s" % (n, k)
                                       for k, n in sorted(counts.items()))
                      or "no expectations"))


def main(argv):
    args = parse_args(argv)
    passed = failed = unchecked = 0
    for path in args.files:
        try:
            expectations = parse_expectations(path, split=not args.no_split)
        except OSError as e:
            print("%s: cannot read: %s" % (path, e))
            failed += 1
            continue
        if args.list:
            list_expectations(path, expectations)
            continue
        try:
            diags = run_tosa_lsp(args.tosa_lsp, path, args.timeout)
        except (RuntimeError, ValueError, subprocess.TimeoutExpired) as e:
            print("%s: tosa-lsp failed: %s" % (path, e))
            checked = [e for e in expectations if e.kind in CHECKED_KINDS]
            failed += max(1, len(checked))
            continue
        unexpected = verify(expectations, diags)
        for exp in expectations:
            if exp.kind not in CHECKED_KINDS:
                unchecked += 1
                continue
            if exp.matched:
                passed += 1
                continue
            failed += 1
            where = "unknown location" if exp.unknown_loc else \
                "line %d" % exp.line
            why = "invalid annotation: " + exp.invalid if exp.invalid else \
                "not produced"
            print("MISSING %s:%d: %s (expected at %s): %s"
                  % (path, exp.annot_line, exp.describe(), where, why))
            got = [d for d in diags if d.get("line") == exp.line]
            for d in got:
                print("    reported at line %d: %s: %s"
                      % (exp.line, d.get("severity"), d.get("message")))
        for d in unexpected:
            print("%s %s:%s:%s: %s: %s"
                  % ("UNEXPECTED" if args.strict else "note: unexpected",
                     path, d.get("line"), d.get("column"), d.get("severity"),
                     d.get("message")))
            if args.strict:
                failed += 1
    if args.list:
        return 0
    if unchecked:
        print("expected-errors: %d note/remark annotations not checked"
              % unchecked)
    print("expected-errors: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
