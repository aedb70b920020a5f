#!/usr/bin/env python3
"""Lenient parsing on IREE's TOSA tests (read in place from the corpus).

For every corpus file that uses IREE ops in custom syntax (`util.*`,
`check.*`, `flow.*`), checks:

  * diagnostics: the TOSA ops' diagnostics of `tosa-lsp check --lenient`
    equal mlir-opt-22's on the same file with the IREE ops rewritten to
    generic form by this driver (line by line, so positions stay): no TOSA
    error when mlir-opt has none, otherwise the same first error (mlir-opt
    stops at the first one per function);
  * every IREE op gets exactly one `lenient-parse` note;
  * hover: the language server (lenient by default) answers a hover on
    every TOSA op name with the op's name, and element-wise ops get the
    inferred shape (`check --format=json` lists them with an inferred shape).

Prints one line per file and `iree: N files, P passed, F failed`; exits 1
on any failure. The rewrite to generic form lives here, never in the
product.
"""

import argparse
import json
import os
import re
import subprocess
import sys

IREE_OP = re.compile(r"\b(util|check|flow)\.[a-z_.]+")

# Each IREE custom form met in the corpus, to generic form on one line.
REWRITES = [
    (re.compile(r"^(\s*)(%\S+) = (util\.unfoldable_constant) (.+) : ([^:]+)$"),
     r'\1\2 = "\3"() {value = \4 : \5} : () -> \5'),
    (re.compile(r"^(\s*)(%\S+) = (util\.optimization_barrier) (%\S+) : (.+)$"),
     r'\1\2 = "\3"(\4) : (\5) -> \5'),
    (re.compile(r"^(\s*)(%\S+) = (flow\.tensor\.dynamic_constant) (.+) : (\S+) -> (.+)$"),
     r'\1\2 = "\3"() {value = \4 : \5} : () -> \6'),
    (re.compile(r"^(\s*)(check\.expect_(?:almost_)?eq_const)\((%[^,]+), (.+) : ([^:]+)\) : (.+)$"),
     r'\1"\2"(\3) {value = \4 : \5} : (\6) -> ()'),
    (re.compile(r"^(\s*)(check\.expect_(?:almost_)?eq)\((%[^,]+), (%[^)]+)\) : (.+)$"),
     r'\1"\2"(\3, \4) : (\5, \5) -> ()'),
    (re.compile(r"^(\s*)(check\.expect_(?:true|false))\((%[^)]+)\) : (.+)$"),
     r'\1"\2"(\3) : (\4) -> ()'),
]


def to_generic(text):
    """The text with IREE ops in generic form, or (None, line) if one is
    in a form this driver does not know."""
    out = []
    for n, line in enumerate(text.split("\n"), 1):
        code = line.split("//")[0]
        if IREE_OP.search(code) and '"' + IREE_OP.search(code).group(0) not in code:
            for pattern, repl in REWRITES:
                if pattern.match(line):
                    line = pattern.sub(repl, line)
                    break
            else:
                return None, n
        out.append(line)
    return "\n".join(out), 0


DIAG = re.compile(r"^<stdin>:(\d+):(\d+): error: (.*)$")


def tosa_lines(text):
    return {n for n, l in enumerate(text.split("\n"), 1)
            if "tosa." in l.split("//")[0]}


def lsp_hovers(tosa_lsp, path, text, points):
    uri = "file://" + os.path.abspath(path)
    msgs = [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"capabilities": {}}},
            {"jsonrpc": "2.0", "method": "textDocument/didOpen",
             "params": {"textDocument": {"uri": uri, "languageId": "mlir", "version": 1,
                                         "text": text}}}]
    for i, (line, col) in enumerate(points):
        msgs.append({"jsonrpc": "2.0", "id": 100 + i, "method": "textDocument/hover",
                     "params": {"textDocument": {"uri": uri},
                                "position": {"line": line - 1, "character": col - 1}}})
    msgs += [{"jsonrpc": "2.0", "id": 1, "method": "shutdown"},
             {"jsonrpc": "2.0", "method": "exit"}]
    stdin = "\n// -----\n".join(json.dumps(m) for m in msgs) + "\n"
    r = subprocess.run([tosa_lsp, "serve", "--lit-test"], input=stdin,
                       capture_output=True, text=True, timeout=300)
    replies = [json.loads(p) for p in
               re.split(r"Content-Length: \d+\r?\n\r?\n", r.stdout)[1:]]
    by_id = {m.get("id"): m for m in replies}
    out = []
    for i in range(len(points)):
        res = by_id.get(100 + i, {}).get("result")
        out.append(res["contents"]["value"] if res else "")
    return out


def check_file(args, path, rel):
    text = open(path, encoding="utf-8").read()
    generic, bad = to_generic(text)
    if generic is None:
        return f"FAIL {rel}: line {bad}: IREE op in a form the driver cannot rewrite"
    opt = subprocess.run([args.mlir_opt, "--split-input-file", "--allow-unregistered-dialect",
                          "-o", "/dev/null", "-"], input=generic, capture_output=True, text=True)
    lines = tosa_lines(text)
    ref = [(int(m.group(1)), int(m.group(2)), m.group(3)) for m in
           map(DIAG.match, opt.stderr.splitlines()) if m and int(m.group(1)) in lines]
    r = subprocess.run([args.tosa_lsp, "check", "--lenient", "--format=json", path],
                       capture_output=True, text=True, timeout=300)
    data = json.loads(r.stdout)["files"][0]
    diags = data["diagnostics"]
    ours = [(d["line"], d["column"], d["message"]) for d in diags
            if d["severity"] == "error" and d["line"] in lines]
    others = [d for d in diags if d["severity"] == "error" and d["line"] not in lines]
    if others:
        return f"FAIL {rel}: errors outside TOSA ops: {others[0]['message']}"
    if bool(ref) != bool(ours) or (ref and ours[0] != ref[0]):
        return f"FAIL {rel}: mlir-opt-22 (generic IREE ops) {ref[:1]}, tosa-lsp {ours[:1]}"
    iree_lines = [n for n, l in enumerate(text.split("\n"), 1)
                  if IREE_OP.search(l.split("//")[0])]
    notes = sorted(d["line"] for d in diags if d["code"] == "lenient-parse")
    if notes != iree_lines:
        return f"FAIL {rel}: lenient notes on lines {notes}, IREE ops on {iree_lines}"
    # The op name (Broadcastable ops: the inferred-vs-declared table) and
    # its result (any op: type and defining op).
    points, names, results = [], [], []
    for n, l in enumerate(text.split("\n"), 1):
        code = l.split("//")[0]
        m = re.search(r'"?(tosa\.[a-z_0-9]+)', code)
        if m:
            points.append((n, m.start() + 1))
            names.append(m.group(1))
            r = re.match(r"\s*(%[\w$.#-]+)", code)
            results.append((n, r.start(1) + 1) if r and r.start(1) < m.start() else None)
    extra = [p for p in results if p]
    hovers = lsp_hovers(args.tosa_lsp, path, text, points + extra)
    on_result = dict(zip(extra, hovers[len(points):]))
    for (n, _), name, h, res in zip(points, names, hovers, results):
        if res is None and name == "tosa.yield":
            continue  # A terminator: no value, no broadcast to explain.
        if name not in h and not (res and name in on_result[res]):
            return f"FAIL {rel}:{n}: no hover on {name} (name: {h!r})"
    inferred = sum(1 for o in data["ops"] if o.get("inferredShape") is not None)
    return (f"ok {rel}: {len(points)} TOSA ops hovered, {inferred} inferred shapes, "
            f"{len(iree_lines)} lenient ops, {len(ours)} TOSA errors (mlir-opt-22: {len(ref)})")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--tosa-lsp", required=True)
    ap.add_argument("--mlir-opt", required=True)
    args = ap.parse_args()
    if not os.path.isdir(args.corpus):
        print(f"iree: corpus {args.corpus} absent, skipped")
        return 0
    files = []
    for root, dirs, names in os.walk(args.corpus):
        dirs.sort()
        for name in sorted(names):
            if name.endswith(".mlir"):
                path = os.path.join(root, name)
                text = open(path, encoding="utf-8", errors="replace").read()
                if any(IREE_OP.search(l.split("//")[0]) and "tosa." in text
                       for l in text.split("\n")):
                    files.append(path)
    passed = failed = 0
    for path in files:
        line = check_file(args, path, os.path.relpath(path, args.corpus))
        print(line)
        if line.startswith("ok "):
            passed += 1
        else:
            failed += 1
    print(f"iree: {len(files)} files, {passed} passed, {failed} failed")
    return 1 if failed or not files else 0


if __name__ == "__main__":
    sys.exit(main())
