#!/usr/bin/env python3
"""Latency of the editing features (issues 37 and 38) on the generated
50k-line files, beside mlir-lsp-server-22 in the same run where it answers
the same request (completion; its open time is the bar for formatting).

    python3 bench/editing.py [--sizes 50k] [--shapes one,multi] [--samples 40]

For each file: open both servers (time to diagnostics), then in tosa-lsp
p50/p95 of documentHighlight, selectionRange, hover (with the op's generic
form), completion and signatureHelp at op positions spread over the file;
semanticTokens/full once and /full/delta after an edit in one function;
formatting of the whole file; completion at the same positions upstream.
Prints a markdown table (medians; ratios to upstream where it answers).
"""

import argparse
import os
import random
import re
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "test", "lit", "tools"))
from lsp_client import LspClient, LspError, TextDocument  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OP = re.compile(r"^  (%\w+) = (tosa\.\w+) (%\w+)")


def pct(values, p):
    v = sorted(values)
    return v[max(int(-(-p * len(v) // 100)) - 1, 0)] if v else float("nan")


def timed(c, method, params):
    t = time.perf_counter()
    try:
        r = c.request(method, params, timeout=120)
    except LspError as e:
        r = e
    return (time.perf_counter() - t) * 1000.0, r


def open_doc(c, text, uri):
    doc = TextDocument(uri, text)
    t = time.perf_counter()
    c.notify("textDocument/didOpen", doc.open_params())
    c.wait_for_diagnostics(doc.uri, timeout=300)
    return doc, (time.perf_counter() - t) * 1000.0


def positions(lines, n, seed):
    rng = random.Random(seed)
    cand = [i for i, l in enumerate(lines) if OP.match(l)]
    return [cand[int(k * len(cand) / n)] for k in range(n)] if cand else []


def bench_file(a, path):
    text = open(path).read()
    lines = text.split("\n")
    rows = {}
    with LspClient([a.tosa_lsp, "serve"]) as c:
        c.initialize(text_document={"completion": {"completionItem": {"snippetSupport": True}}})
        doc, rows["open → diagnostics (tosa-lsp)"] = open_doc(c, text, "file:///bench/e.mlir")
        at = positions(lines, a.samples, 1)
        samples = {k: [] for k in ("documentHighlight", "selectionRange", "hover (generic form)",
                                   "completion (operand)", "signatureHelp")}
        for i in at:
            m = OP.match(lines[i])
            col = m.start(3) + 1
            pp = doc.position_params(i, col)
            samples["documentHighlight"].append(timed(c, "textDocument/documentHighlight", pp)[0])
            samples["selectionRange"].append(timed(c, "textDocument/selectionRange", {
                "textDocument": doc.ident(), "positions": [{"line": i, "character": col}]})[0])
            samples["hover (generic form)"].append(timed(c, "textDocument/hover",
                                                        doc.position_params(i, m.start(2) + 1))[0])
            samples["completion (operand)"].append(timed(c, "textDocument/completion", pp)[0])
            samples["signatureHelp"].append(timed(c, "textDocument/signatureHelp", pp)[0])
        for k, v in samples.items():
            rows[k + " p50/p95"] = (pct(v, 50), pct(v, 95))
        rows["semanticTokens/full"], full = timed(c, "textDocument/semanticTokens/full",
                                                   {"textDocument": doc.ident()})
        # An edit in one function, then the delta.
        i = at[len(at) // 2]
        change = {"range": {"start": {"line": i, "character": 2}, "end": {"line": i, "character": 2}},
                  "text": " "}
        doc.version += 1
        c.notify("textDocument/didChange", {"textDocument": {"uri": doc.uri, "version": doc.version},
                                            "contentChanges": [change]})
        c.wait_for_diagnostics(doc.uri, version=doc.version, timeout=300)
        prev = full.get("resultId", "") if isinstance(full, dict) else ""
        rows["semanticTokens/full/delta after an edit"], _ = timed(
            c, "textDocument/semanticTokens/full/delta",
            {"textDocument": doc.ident(), "previousResultId": prev})
        rows["formatting (whole file)"], _ = timed(c, "textDocument/formatting", {
            "textDocument": doc.ident(), "options": {"tabSize": 2, "insertSpaces": True}})
        c.shutdown()
    if a.mlir_lsp_server:
        with LspClient([a.mlir_lsp_server]) as u:
            u.initialize()
            doc, rows["open → diagnostics (upstream)"] = open_doc(u, text, "file:///bench/u.mlir")
            comp = []
            for i in at[: max(4, a.samples // 4)]:
                m = OP.match(lines[i])
                comp.append(timed(u, "textDocument/completion", doc.position_params(i, m.start(3) + 1))[0])
            rows["completion (operand) upstream p50/p95"] = (pct(comp, 50), pct(comp, 95))
            u.shutdown()
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tosa-lsp", default=os.path.join(HERE, "..", "build", "bin", "tosa-lsp"))
    ap.add_argument("--mlir-lsp-server", default="/usr/lib/llvm-22/bin/mlir-lsp-server")
    ap.add_argument("--sizes", default="50k")
    ap.add_argument("--shapes", default="one,multi")
    ap.add_argument("--samples", type=int, default=40)
    a = ap.parse_args()
    for size in a.sizes.split(","):
        for shape in a.shapes.split(","):
            path = os.path.join(HERE, "inputs", "%s-%s.mlir" % (shape, size))
            rows = bench_file(a, path)
            print("\n### %s-%s\n\n| request | ms |\n|---|---|" % (shape, size))
            for k, v in rows.items():
                val = "%.2f / %.2f" % v if isinstance(v, tuple) else "%.1f" % v
                print("| %s | %s |" % (k, val))


if __name__ == "__main__":
    main()
