#!/usr/bin/env python3
"""Parity with mlir-lsp-server-22 on real files (issue 37).

For every file of the corpus that mlir-opt-22 accepts (split on `// -----`),
both servers get the same requests at the same positions:

* completion after the dialect of an op name (`%0 = tosa.|`), at an operand
  (`tosa.add %a, %|`) and in a type position (`... : |`), each on a copy of
  the file with the line cut at the cursor (as while typing): tosa-lsp's
  labels must include upstream's (labels of dialects only upstream's binary
  links, its `test` dialects, excepted);
* hover on op names: wherever upstream answers, tosa-lsp answers, naming the
  same op, the attribute names of upstream's generic form and the result
  types;
* definition on alias uses: the same range.

Prints one summary line per kind; exits 1 on any miss (listing the first).
"""

import argparse
import os
import pathlib
import random
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lsp_client import LspClient, LspError, TextDocument, index_to_utf16  # noqa: E402

OP_LINE = re.compile(r'^(\s*)((?:%[\w$.-]+(?::\d+)?(?:\s*,\s*)?)+\s*=\s*)?([a-z_][\w]*)\.([a-z_][\w.]*)\b')
UPSTREAM_ONLY_DIALECTS = re.compile(r'^[#!]?test')


def accepted(mlir_opt, path):
    r = subprocess.run([mlir_opt, "--split-input-file", "--allow-unregistered-dialect",
                        str(path), "-o", "/dev/null"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return r.returncode == 0


def labels(result):
    items = result.get("items", []) if isinstance(result, dict) else (result or [])
    return {i["label"] for i in items}


class Pair:
    def __init__(self, ours_bin, upstream_bin):
        self.ours = LspClient([ours_bin, "serve"], default_timeout=60)
        self.up = LspClient([upstream_bin], default_timeout=60)
        for c in (self.ours, self.up):
            c.__enter__()
            c.initialize(text_document={
                "completion": {"completionItem": {"snippetSupport": True}}})
        self.n = 0

    def open(self, text):
        self.n += 1
        doc = TextDocument("file:///parity/%d.mlir" % self.n, text)
        for c in (self.ours, self.up):
            c.notify("textDocument/didOpen", doc.open_params())
        self.ours.wait_for_diagnostics(doc.uri, version=doc.version)
        self.up.wait_for_diagnostics(doc.uri)
        return doc

    def close(self, doc):
        for c in (self.ours, self.up):
            c.notify("textDocument/didClose", {"textDocument": doc.ident()})

    def both(self, method, params):
        out = []
        for c in (self.ours, self.up):
            try:
                out.append(c.request(method, params))
            except LspError as e:
                out.append(e)
        return out

    def shutdown(self):
        for c in (self.ours, self.up):
            c.shutdown()


def completion_cases(text, rng, per_file):
    """(cut text, line, character, kind) for op names, operands and types."""
    lines = text.split("\n")
    cases = []
    for i, line in enumerate(lines):
        m = OP_LINE.match(line)
        if not m or line.lstrip().startswith("//"):
            continue
        dot = m.end(3) + 1
        cases.append((i, dot, "op"))
        pct = line.find("%", m.end())
        if pct >= 0:
            cases.append((i, pct + 1, "operand"))
        colon = line.rfind(" : ")
        if colon > m.end():
            cases.append((i, colon + 3, "type"))
    rng.shuffle(cases)
    picked = {"op": [], "operand": [], "type": []}
    for c in cases:
        if len(picked[c[2]]) < per_file:
            picked[c[2]].append(c)
    out = []
    for kind in picked:
        for (i, col, k) in picked[kind]:
            cut = "\n".join(lines[:i] + [lines[i][:col]] + lines[i + 1:])
            out.append((cut, i, index_to_utf16(lines[i], col), k))
    return out


def hover_positions(text, rng, per_file):
    out = []
    for i, line in enumerate(text.split("\n")):
        m = OP_LINE.match(line)
        if m and not line.lstrip().startswith("//"):
            out.append((i, index_to_utf16(line, m.start(3) + 1)))
    rng.shuffle(out)
    return out[:per_file]


def generic_parts(md):
    """Op name, attribute names and result types of upstream's hover."""
    m = re.search(r'"([\w.]+)"', md)
    name = m.group(1) if m else None
    attrs = set(re.findall(r'[{,<]\s*([a-z_][\w]*) = ', md))
    code = md.split("```")[1] if "```" in md else md
    line = code.strip().split("\n")[-1]
    at = line.rfind(") -> ")
    types = line[at + 5:].strip() if at >= 0 else ""
    if types.startswith("(") and types.endswith(")"):
        types = types[1:-1]
    return name, attrs, [t.strip() for t in re.split(r', (?![^<]*>)', types) if t.strip()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tosa-lsp", required=True)
    ap.add_argument("--mlir-lsp-server", required=True)
    ap.add_argument("--mlir-opt", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--per-file", type=int, default=4)
    ap.add_argument("--max-files", type=int, default=60)
    ap.add_argument("--max-bytes", type=int, default=200000)
    args = ap.parse_args()
    rng = random.Random(37)
    files = sorted(p for p in pathlib.Path(args.corpus).rglob("*.mlir")
                   if p.stat().st_size <= args.max_bytes)
    files = [p for p in files if accepted(args.mlir_opt, p)]
    rng.shuffle(files)
    files = files[:args.max_files]
    stats = {k: [0, 0, None] for k in ("op", "operand", "type", "hover", "alias")}

    def miss(kind, where, detail):
        stats[kind][1] += 1
        if stats[kind][2] is None:
            stats[kind][2] = "%s: %s" % (where, detail)

    pair = Pair(args.tosa_lsp, args.mlir_lsp_server)
    for path in files:
        text = path.read_text()
        for cut, line, char, kind in completion_cases(text, rng, args.per_file):
            doc = pair.open(cut)
            ours, up = pair.both("textDocument/completion", doc.position_params(line, char))
            pair.close(doc)
            if isinstance(up, LspError):
                continue
            want = {l for l in labels(up) if not UPSTREAM_ONLY_DIALECTS.match(l)}
            if not want:
                continue
            stats[kind][0] += 1
            have = set() if isinstance(ours, LspError) else labels(ours)
            lost = want - have
            if lost:
                miss(kind, "%s:%d:%d" % (path, line + 1, char),
                     "missing %s" % sorted(lost)[:5])
        doc = pair.open(text)
        for line, char in hover_positions(text, rng, args.per_file * 2):
            ours, up = pair.both("textDocument/hover", doc.position_params(line, char))
            if isinstance(up, LspError) or not up:
                continue
            stats["hover"][0] += 1
            md = up["contents"]["value"] if isinstance(up["contents"], dict) else str(up["contents"])
            name, attrs, types = generic_parts(md)
            if isinstance(ours, LspError) or not ours:
                miss("hover", "%s:%d:%d" % (path, line + 1, char), "no hover")
                continue
            our = ours["contents"]["value"] if isinstance(ours["contents"], dict) else str(ours["contents"])
            absent = [x for x in [name] + sorted(attrs) + types if x and x not in our]
            if absent:
                miss("hover", "%s:%d:%d" % (path, line + 1, char), "missing %s" % absent[:4])
        for m in re.finditer(r'(?<![\w.])([#!][a-zA-Z_][\w$]*)(?![\w$.])', text):
            if text[m.end():m.end() + 3] in (" = ", "="):
                continue
            before = text[:m.start()]
            line = before.count("\n")
            col = m.start() - (before.rfind("\n") + 1)
            ltext = text.split("\n")[line]
            ours, up = pair.both("textDocument/definition",
                                 doc.position_params(line, index_to_utf16(ltext, col + 1)))
            if isinstance(up, LspError) or not up:
                continue
            stats["alias"][0] += 1
            ranges = lambda r: [x["range"] for x in (r if isinstance(r, list) else [r])]
            if isinstance(ours, LspError) or not ours or ranges(ours)[0] != ranges(up)[0]:
                miss("alias", "%s:%d:%d" % (path, line + 1, col + 1), "definition differs")
        pair.close(doc)
    pair.shutdown()
    bad = False
    for kind, (n, missed, first) in stats.items():
        print("parity %s: %d compared, %d missed%s" % (kind, n, missed,
                                                        "; first: " + first if first else ""))
        bad |= missed > 0
    print("parity files: %d" % len(files))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
