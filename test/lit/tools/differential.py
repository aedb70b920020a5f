#!/usr/bin/env python3
"""Differential test: tosa-lsp's broadcast verdicts against mlir-opt-22.

Generates random `tosa.add` / `tosa.select` cases (one per `// -----` section),
runs mlir-opt once on the whole file and `tosa-lsp check --format=json` once on
the same file, then compares per section:

  * mlir-opt accepted the section  <=>  our op verdict is "ok";
  * when mlir-opt rejected it, our "verifier" diagnostics of that section
    include mlir-opt's error (same line, column and message);
  * when mlir-opt accepted it, we report no error diagnostic in that section.

Why: tosa-lsp computes verdicts with its own Broadcastable-trait analysis, so a
large random sample is the cheapest way to find rows of the broadcast table
where that analysis and MLIR's verifier disagree.

`--self-test` only runs the mlir-opt side (usable before the binary exists):
it checks that every generated case parses, prints the verdict distribution
per table row, and compares mlir-opt against two Python models (the trait
document's tables and MLIR's implementation as understood here).
"""

import argparse
import collections
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

# A dimension is an int (static size) or None (dynamic, "?").
# A shape is a tuple of dimensions, or None (unranked tensor<*x..>).

OP_COLUMN = 8  # column of the op name in "  %0 = tosa.add ..."
BIG = (2, 3, 4)

# Rows of the Broadcastable InferDim table, used both to generate operand
# dimensions and to label the fold steps of every case.
ROW_NAMES = ["(?,?)", "(?,1)", "(?,>1)", "(1,1)", "(1,>1)",
             "(>1,>1) equal", "(>1,>1) unequal"]


# --------------------------------------------------------------------------
# Shapes and types
# --------------------------------------------------------------------------

def fmt_dim(d):
    return "?" if d is None else str(d)


def fmt_shape(shape):
    """MLIR's shape spelling: '*' unranked, '' rank 0, '2x?x3'."""
    if shape is None:
        return "*"
    return "x".join(fmt_dim(d) for d in shape)


def tensor_type(shape, elt):
    if shape is None:
        return "tensor<*x%s>" % elt
    if not shape:
        return "tensor<%s>" % elt
    return "tensor<%sx%s>" % (fmt_shape(shape), elt)


def dim_kind(d):
    if d is None:
        return "?"
    return "1" if d == 1 else ">1"


def row_label(d0, d1):
    """Table row of an (unordered) pair of dimensions."""
    kinds = sorted((dim_kind(d0), dim_kind(d1)),
                   key=lambda k: {"?": 0, "1": 1, ">1": 2}[k])
    if kinds == [">1", ">1"]:
        return "(>1,>1) equal" if d0 == d1 else "(>1,>1) unequal"
    return "(%s,%s)" % tuple(kinds)


# --------------------------------------------------------------------------
# Models (used to label cases and, in --self-test, to explain mlir-opt)
# --------------------------------------------------------------------------

def mlir_broadcast_dims(d1, d2):
    """mlir::OpTrait::util::getBroadcastedShape for one dimension pair.

    Returns (ok, dim). Mirrors the TensorFlow-style rule used by MLIR: a
    dynamic size paired with a static >1 size yields the static size.
    """
    if d1 is None or d2 is None:
        if d1 is not None and d1 > 1:
            return True, d1
        if d2 is not None and d2 > 1:
            return True, d2
        if d1 == 1:
            return True, d2
        if d2 == 1:
            return True, d1
        return True, None
    if d1 == d2 or d2 == 1:
        return True, d1
    if d1 == 1:
        return True, d2
    return False, None


def infer_shape(ranked, labels=None):
    """Right-aligned n-ary fold over ranked operand shapes.

    Returns (ok, inferred). `labels`, when given, collects the table row of
    every fold step (one InferDim application per dimension and operand).
    With a failure the inferred shape is still completed (first operand wins)
    so that result dimensions can be labelled.
    """
    if not ranked:
        return True, None
    ok = True
    acc = list(ranked[0])
    for shape in ranked[1:]:
        rank = max(len(acc), len(shape))
        a = [1] * (rank - len(acc)) + acc
        b = [1] * (rank - len(shape)) + list(shape)
        out = []
        for d0, d1 in zip(a, b):
            if labels is not None:
                labels.append(row_label(d0, d1))
            good, d = mlir_broadcast_dims(d0, d1)
            if not good:
                ok = False
                d = d0
            out.append(d)
        acc = out
    return ok, tuple(acc)


def predict_mlir(operands, result):
    """Verdict and message (after "'op' op ") MLIR 22 gives (our reading).

    Observed order of the checks (first failure wins):
      1. ResultsBroadcastableShape over the ranked operands, WITH rank
         expansion: "operands don't have broadcast-compatible shapes";
      2. the trailing dims of a ranked result against the inferred shape
         (result rank < inferred rank also fails here): "result type '..'
         not broadcast compatible with broadcasted operands's shapes '..'";
      3. SameOperandsAndResultRank: "operands don't have matching ranks",
         then "result type has different rank than operands".
    """
    ranked = [s for s in operands if s is not None]
    ok, inferred = infer_shape(ranked)
    if not ok:
        return "reject", "operands don't have broadcast-compatible shapes"
    if inferred is not None and result is not None:
        suffix = result[len(result) - len(inferred):]
        if len(result) < len(inferred) or any(
                i is not None and a is not None and i != a
                for i, a in zip(inferred, suffix)):
            return "reject", ("result type '%s' not broadcast compatible with "
                              "broadcasted operands's shapes '%s'"
                              % (fmt_shape(result), fmt_shape(inferred)))
    if len({len(s) for s in ranked}) > 1:
        return "reject", "operands don't have matching ranks"
    if ranked and result is not None and len(result) != len(ranked[0]):
        return "reject", "result type has different rank than operands"
    return "accept", None


def predict_doc(operands, result):
    """Verdict of the Broadcastable trait document's tables.

    Rank expansion is allowed; a ranked result must have the inferred rank;
    per dimension, static inferred vs static declared must be equal, a `?` on
    either side is accepted (the result table, not the stricter pseudo-code).
    """
    ranked = [s for s in operands if s is not None]
    ok, inferred = infer_shape(ranked)
    if not ok:
        return "reject"
    if inferred is None or result is None:
        return "accept"
    if len(result) != len(inferred):
        return "reject"
    for i, a in zip(inferred, result):
        if i is not None and a is not None and i != a:
            return "reject"
    return "accept"


def result_labels(inferred, result):
    """Labels of the result-table rows exercised by a case."""
    if result is None:
        return ["result unranked"]
    if inferred is None:
        return ["result ranked, operands unranked"]
    labels = []
    if len(result) != len(inferred):
        labels.append("result rank %s operands" %
                      ("<" if len(result) < len(inferred) else ">"))
    for i, a in zip(reversed(inferred), reversed(result)):
        if i is None and a is None:
            labels.append("result ?<-?")
        elif i is None:
            labels.append("result ?->static (dyn-to-static)")
        elif a is None:
            labels.append("result static->? (static-to-dyn)")
        elif i == a:
            labels.append("result static equal")
        elif i == 1:
            labels.append("result 1->N (broadcast result)")
        else:
            labels.append("result static unequal")
    return labels


# --------------------------------------------------------------------------
# Case generation
# --------------------------------------------------------------------------

class Case:
    """One generated section: an op, its operand shapes and result shape."""

    def __init__(self, index, op, operands, result):
        self.index = index
        self.op = op
        self.operands = operands
        self.result = result
        self.text = ""
        self.first_line = 0   # first line of the section in the whole file
        self.last_line = 0
        self.op_line = 0
        self.tags = []

    def operand_elts(self):
        if self.op == "tosa.select":
            return ["i1", "f32", "f32"]
        return ["f32", "f32"]

    def render(self):
        names = ["%c", "%a", "%b"] if self.op == "tosa.select" else ["%a", "%b"]
        types = [tensor_type(s, e)
                 for s, e in zip(self.operands, self.operand_elts())]
        rtype = tensor_type(self.result, "f32")
        args = ", ".join("%s: %s" % (n, t) for n, t in zip(names, types))
        return [
            "// case %d" % self.index,
            "func.func @case%d(%s) -> %s {" % (self.index, args, rtype),
            "  %%0 = %s %s : (%s) -> %s" % (self.op, ", ".join(names),
                                          ", ".join(types), rtype),
            "  return %%0 : %s" % rtype,
            "}",
        ]

    def compute_tags(self):
        ranked = [s for s in self.operands if s is not None]
        tags = []
        ok, inferred = infer_shape(ranked, tags)
        if not ranked:
            tags.append("operands all unranked")
        elif len(ranked) < len(self.operands):
            tags.append("operand unranked")
        if len({len(s) for s in ranked}) > 1:
            tags.append("operand ranks differ")
        if ranked and all(len(s) == 0 for s in ranked):
            tags.append("rank 0")
        if ok:
            tags.extend(result_labels(inferred, self.result))
        else:
            tags.append("result (operands incompatible)")
        self.tags = sorted(set(tags))


def gen_pair(rng, row):
    """Two dimensions realising a table row, in random order."""
    big = rng.choice(BIG)
    other = rng.choice([b for b in BIG if b != big])
    pair = {
        "(?,?)": (None, None),
        "(?,1)": (None, 1),
        "(?,>1)": (None, big),
        "(1,1)": (1, 1),
        "(1,>1)": (1, big),
        "(>1,>1) equal": (big, big),
        "(>1,>1) unequal": (big, other),
    }[row]
    return pair if rng.random() < 0.5 else pair[::-1]


def gen_operand_dims(rng, n, focus):
    """Dimensions of n operands for one result dimension."""
    if focus:
        row = rng.choice(ROW_NAMES)
    else:
        row = rng.choices(ROW_NAMES, weights=[2, 2, 3, 2, 3, 6, 0.4])[0]
    d0, d1 = gen_pair(rng, row)
    dims = [d0, d1]
    if n == 3:
        static = [d for d in dims if d is not None and d > 1]
        choices = [1, None] + (static[:1] if static else [rng.choice(BIG)])
        dims.append(rng.choice(choices))
    rng.shuffle(dims)
    return dims


def perturb_rank(rng, shape):
    """Add or drop a leading dimension (operand/result rank mismatch)."""
    if shape and rng.random() < 0.5:
        return shape[1:]
    return (rng.choice([1, 1, 2, 4, None]),) + shape


def gen_result(rng, inferred):
    """A result shape derived from the inferred one, often perturbed."""
    if inferred is None:
        rank = rng.choice([0, 1, 2, 3])
        return tuple(rng.choice([1, 2, 3, 4, None]) for _ in range(rank))
    out = []
    for d in inferred:
        r = rng.random()
        if r < 0.6:
            out.append(d)                       # exact
        elif d is None:
            out.append(rng.choice([1, 4, 4, 3]))  # dyn-to-static
        elif r < 0.78:
            out.append(None)                    # static-to-dyn
        elif d == 1:
            out.append(rng.choice(BIG))         # broadcast result (invalid)
        else:
            out.append(rng.choice([1] + [b for b in BIG if b != d]))
    return tuple(out)


def gen_case(rng, index):
    op = "tosa.select" if rng.random() < 0.4 else "tosa.add"
    n = 3 if op == "tosa.select" else 2
    rank = rng.choices([0, 1, 2, 3], weights=[1, 3, 4, 3])[0]
    focus = rng.randrange(rank) if rank else -1
    cols = [gen_operand_dims(rng, n, i == focus) for i in range(rank)]
    operands = [tuple(col[k] for col in cols) for k in range(n)]

    # Operand rank mismatch / unranked operands.
    if rng.random() < 0.1:
        k = rng.randrange(n)
        operands[k] = perturb_rank(rng, operands[k])
    r = rng.random()
    if r < 0.04:
        operands = [None] * n
    elif r < 0.16:
        operands[rng.randrange(n)] = None

    ranked = [s for s in operands if s is not None]
    _, inferred = infer_shape(ranked)
    result = gen_result(rng, inferred)
    r = rng.random()
    if r < 0.07:
        result = perturb_rank(rng, result)
    elif r < 0.13:
        result = None
    case = Case(index, op, operands, result)
    case.compute_tags()
    return case


def build_file(cases):
    """Renders the cases into one split-input file, recording line ranges."""
    lines = []
    for i, case in enumerate(cases):
        if i:
            lines.append("// -----")
        body = case.render()
        case.first_line = len(lines) + 1
        case.op_line = case.first_line + 2
        lines.extend(body)
        case.last_line = len(lines)
        case.text = "\n".join(body)
    return "\n".join(lines) + "\n"


def case_for_line(cases, line):
    """The case whose section contains `line` (sections are contiguous)."""
    lo, hi = 0, len(cases) - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        c = cases[mid]
        if line < c.first_line:
            hi = mid - 1
        elif line > c.last_line + 1:  # +1: the following "// -----" line
            lo = mid + 1
        else:
            return c
    return None


# --------------------------------------------------------------------------
# Running the tools
# --------------------------------------------------------------------------

def run_mlir_opt(mlir_opt, path, timeout):
    """Runs mlir-opt once; returns (returncode, [(line, col, sev, msg)], raw)."""
    proc = subprocess.run(
        [mlir_opt, "--split-input-file", "--allow-unregistered-dialect",
         "-o", os.devnull, path],
        capture_output=True, text=True, timeout=timeout)
    pat = re.compile(r"^%s:(\d+):(\d+): (error|warning|note|remark): (.*)$"
                     % re.escape(path))
    diags = []
    for line in proc.stderr.splitlines():
        m = pat.match(line)
        if m:
            diags.append((int(m.group(1)), int(m.group(2)), m.group(3),
                          m.group(4)))
    return proc.returncode, diags, proc.stderr


def run_tosa_lsp(tosa_lsp, path, timeout):
    """Runs `tosa-lsp check --format=json`.

    Returns (rc, parsed json, raw stdout, problem); `problem` is None or
    says why the run is unusable (timeout, crash, bad exit code, no JSON).
    """
    try:
        proc = subprocess.run([tosa_lsp, "check", "--format=json", path],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, None, "", "tosa-lsp timed out after %d s" % timeout
    if proc.returncode not in (0, 1):
        return proc.returncode, None, proc.stdout, (
            "tosa-lsp exited with %d: %s"
            % (proc.returncode, proc.stderr.strip()[-2000:]))
    try:
        data = json.loads(proc.stdout)
    except ValueError as e:
        return proc.returncode, None, proc.stdout, (
            "tosa-lsp output is not JSON (%s): %r" % (e, proc.stdout[:500]))
    return proc.returncode, data, proc.stdout, None


def normalize_message(msg):
    """Message with shapes elided, for grouping."""
    msg = re.sub(r"'[0-9x?*]*'", "'<shape>'", msg)
    msg = re.sub(r"tensor<[^>]*>", "<type>", msg)
    return re.sub(r"got \d+ and \d+", "got N and M", msg)


def map_mlir_errors(cases, diags):
    """Assigns each mlir-opt error to its case; returns unexpected errors."""
    by_case = {}
    unexpected = []
    for line, col, sev, msg in diags:
        if sev != "error":
            continue
        case = case_for_line(cases, line)
        if case is None or line != case.op_line or \
                not msg.startswith("'%s' op " % case.op):
            unexpected.append((case, line, col, msg))
            continue
        if case.index in by_case:
            unexpected.append((case, line, col, msg))
            continue
        by_case[case.index] = (line, col, msg)
    return by_case, unexpected


# --------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------

def short_shape(shape):
    """fmt_shape() with rank 0 spelled '[]' so that it stays visible."""
    return "[]" if shape == () else fmt_shape(shape)


def describe(case):
    ops = ", ".join(short_shape(s) for s in case.operands)
    return "%s (%s) -> %s" % (case.op, ops, short_shape(case.result))


def print_table(cases, columns):
    """Counts per tag; `columns` maps a column name to a predicate on cases."""
    counts = collections.OrderedDict()
    for case in cases:
        for tag in case.tags:
            row = counts.setdefault(tag, collections.Counter())
            row["cases"] += 1
            for name, pred in columns:
                if pred(case):
                    row[name] += 1
    order = ROW_NAMES + sorted(t for t in counts if t not in ROW_NAMES)
    header = "%-36s %6s" % ("category (table row)", "cases") + "".join(
        " %9s" % name for name, _ in columns)
    print(header)
    print("-" * len(header))
    for tag in order:
        if tag not in counts:
            print("%-36s %6d   (not generated)" % (tag, 0))
            continue
        row = counts[tag]
        print("%-36s %6d" % (tag, row["cases"]) +
              "".join(" %9d" % row[name] for name, _ in columns))


def print_messages(cases, mlir_errors):
    counter = collections.Counter()
    for case in cases:
        err = mlir_errors.get(case.index)
        if err:
            counter[normalize_message(err[2])] += 1
    print("\nmlir-opt error messages:")
    for msg, n in counter.most_common():
        print("  %6d  %s" % (n, msg))


def print_model_comparison(cases, mlir_errors):
    """Where mlir-opt disagrees with the trait doc / our MLIR reading."""
    def observed(case, exact):
        err = mlir_errors.get(case.index)
        if err is None:
            return "accept"
        return "reject: " + err[2] if exact else "reject"

    def mlir_model(case):
        verdict, msg = predict_mlir(case.operands, case.result)
        return verdict if msg is None else "reject: '%s' op %s" % (case.op, msg)

    def doc_model(case):
        return predict_doc(case.operands, case.result)

    for name, model, exact in (
            ("Broadcastable.md tables", doc_model, False),
            ("MLIR-22 model (verdict and exact message)", mlir_model, True)):
        diff = collections.defaultdict(list)
        for case in cases:
            actual = observed(case, exact)
            expect = model(case)
            if actual != expect:
                key = "model %s, mlir-opt %s" % (expect.split(":")[0],
                                                 actual.split(":")[0])
                msg = mlir_errors.get(case.index, (0, 0, ""))[2]
                diff[(key, normalize_message(msg))].append((case, msg, expect))
        total = sum(len(v) for v in diff.values())
        print("\nmlir-opt vs %s: %d disagreements" % (name, total))
        for (key, nmsg), items in sorted(diff.items(),
                                         key=lambda kv: -len(kv[1])):
            print("  %5d  %s%s" % (len(items), key,
                                   (": " + nmsg) if nmsg else ""))
            for case, msg, expect in items[:3]:
                print("           e.g. %s  [mlir-opt: %s] [model: %s]"
                      % (describe(case), msg or "accepted", expect))


# --------------------------------------------------------------------------
# Comparison against tosa-lsp
# --------------------------------------------------------------------------

def compare(cases, mlir_errors, data, path, rc):
    """Per-case comparison; returns (per-case verdicts, mismatch list)."""
    mismatches = []
    ours = {}
    files = data.get("files") or []
    entry = None
    for f in files:
        if os.path.realpath(f.get("path", "")) == os.path.realpath(path):
            entry = f
    if entry is None and len(files) == 1:
        entry = files[0]
    if entry is None:
        return ours, [(None, "no entry for %s in tosa-lsp output" % path)]

    ops_by_line = collections.defaultdict(list)
    for op in entry.get("ops") or []:
        ops_by_line[op.get("line")].append(op)
    diags_by_case = collections.defaultdict(list)
    for d in entry.get("diagnostics") or []:
        case = case_for_line(cases, d.get("line", -1))
        if case is not None:
            diags_by_case[case.index].append(d)

    expected_rc = 1 if mlir_errors else 0
    if rc != expected_rc:
        mismatches.append((None, "tosa-lsp exit code %d, expected %d"
                           % (rc, expected_rc)))

    for case in cases:
        problems = []
        mlir_err = mlir_errors.get(case.index)
        cand = [o for o in ops_by_line.get(case.op_line, [])
                if o.get("name") == case.op]
        if not cand:
            problems.append("no %s op reported at line %d"
                            % (case.op, case.op_line))
            verdict = None
        else:
            op = cand[0]
            verdict = op.get("verdict")
            if op.get("column") != OP_COLUMN:
                problems.append("op column %s, expected %d"
                                % (op.get("column"), OP_COLUMN))
            want = "error" if mlir_err else "ok"
            if verdict != want:
                problems.append("verdict %r, mlir-opt %s (op message: %r, "
                                "inferredShape %r)"
                                % (verdict, "rejects" if mlir_err else "accepts",
                                   op.get("message"), op.get("inferredShape")))
        ours[case.index] = verdict
        diags = diags_by_case.get(case.index, [])
        if mlir_err:
            line, col, msg = mlir_err
            hit = [d for d in diags if d.get("source") == "verifier"
                   and d.get("severity") == "error" and d.get("line") == line
                   and d.get("column") == col and d.get("message") == msg]
            if not hit:
                problems.append("missing verifier diagnostic %d:%d: %s"
                                % (line, col, msg))
        else:
            errs = [d for d in diags if d.get("severity") == "error"]
            for d in errs:
                problems.append("spurious error %s:%s [%s]: %s"
                                % (d.get("line"), d.get("column"),
                                   d.get("source"), d.get("message")))
        if problems:
            mismatches.append((case, "; ".join(problems)))
    return ours, mismatches


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------

def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tosa-lsp", help="path to the tosa-lsp binary")
    p.add_argument("--mlir-opt", default="mlir-opt-22",
                   help="path to mlir-opt (default: mlir-opt-22)")
    p.add_argument("--count", type=int, default=3000,
                   help="number of cases (default 3000)")
    p.add_argument("--seed", type=int, default=1, help="random seed")
    p.add_argument("--keep", metavar="DIR",
                   help="keep the generated file and tool outputs in DIR")
    p.add_argument("--timeout", type=int, default=600,
                   help="timeout per tool run in seconds (default 600)")
    p.add_argument("--self-test", action="store_true",
                   help="only run mlir-opt and print the verdict distribution")
    args = p.parse_args(argv)
    if not args.self_test and not args.tosa_lsp:
        p.error("--tosa-lsp is required unless --self-test is given")
    if args.count < 1:
        p.error("--count must be positive")
    return args


def main(argv):
    args = parse_args(argv)
    rng = random.Random(args.seed)
    cases = [gen_case(rng, i) for i in range(args.count)]
    text = build_file(cases)

    workdir = args.keep or tempfile.mkdtemp(prefix="tosa-lsp-differential-")
    os.makedirs(workdir, exist_ok=True)
    path = os.path.abspath(os.path.join(workdir, "differential.mlir"))
    try:
        with open(path, "w") as f:
            f.write(text)
        return run(args, cases, path, workdir)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


def run(args, cases, path, workdir):
    print("differential: seed=%d count=%d file=%s"
          % (args.seed, args.count, path))
    mrc, mdiags, mraw = run_mlir_opt(args.mlir_opt, path, args.timeout)
    if args.keep:
        with open(os.path.join(workdir, "mlir-opt.stderr"), "w") as f:
            f.write(mraw)
    if mrc not in (0, 1):
        print("error: mlir-opt exited with %d" % mrc)
        print(mraw[-2000:])
        return 2
    mlir_errors, unexpected = map_mlir_errors(cases, mdiags)
    failed_cases = {}
    for case, line, col, msg in unexpected:
        key = case.index if case else -1
        failed_cases.setdefault(key, (case, "unexpected mlir-opt error "
                                      "(generator bug, parse error?) "
                                      "%d:%d: %s" % (line, col, msg)))

    if args.self_test:
        print_table(cases, [
            ("mlir-ok", lambda c: c.index not in mlir_errors),
            ("mlir-err", lambda c: c.index in mlir_errors)])
        print_messages(cases, mlir_errors)
        print_model_comparison(cases, mlir_errors)
        accepted = sum(1 for c in cases if c.index not in mlir_errors)
        print("\nmlir-opt verdicts: %d accepted, %d rejected"
              % (accepted, len(cases) - accepted))
        mismatches = list(failed_cases.values())
    else:
        rc, data, raw, problem = run_tosa_lsp(args.tosa_lsp, path,
                                              args.timeout)
        if args.keep:
            with open(os.path.join(workdir, "tosa-lsp.json"), "w") as f:
                f.write(raw)
        if problem:
            print("error: " + problem)
            print("differential: 0 passed, %d failed" % len(cases))
            return 1
        ours, mismatches = compare(cases, mlir_errors, data, path, rc)
        mismatches = list(failed_cases.values()) + mismatches
        bad = {m[0].index for m in mismatches if m[0] is not None}
        print_table(cases, [
            ("mlir-ok", lambda c: c.index not in mlir_errors),
            ("mlir-err", lambda c: c.index in mlir_errors),
            ("ours-ok", lambda c: ours.get(c.index) == "ok"),
            ("ours-err", lambda c: ours.get(c.index) == "error"),
            ("mismatch", lambda c: c.index in bad)])
        print_messages(cases, mlir_errors)

    if mismatches:
        print("\nmismatches (first 20 of %d):" % len(mismatches))
        for case, why in mismatches[:20]:
            if case is None:
                print("  * %s" % why)
                continue
            print("  * case %d: %s\n    %s\n    tags: %s"
                  % (case.index, describe(case), why, ", ".join(case.tags)))
            for line in case.text.splitlines():
                print("      | " + line)

    bad_cases = {m[0].index for m in mismatches if m[0] is not None}
    global_problems = sum(1 for m in mismatches if m[0] is None)
    passed = len(cases) - len(bad_cases)
    failed = len(bad_cases) + global_problems
    print("differential: %d passed, %d failed" % (passed, failed))
    if failed or passed < args.count:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
