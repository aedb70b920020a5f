#!/usr/bin/env python3
"""Asks the language server for every quick fix in a file, applies each
WorkspaceEdit exactly as an editor would (UTF-16 positions) and checks the
result with mlir-opt-22: each fix must give a file mlir-opt verifies
(--expect-verify), or at least remove the fixed diagnostic's error."""
import argparse
import json
import re
import subprocess
import sys


def utf16_offset(text, line, character):
    lines = text.split("\n")
    off = sum(len(l.encode("utf-8")) + 1 for l in lines[:line])
    units = 0
    for ch in lines[line] if line < len(lines) else "":
        if units >= character:
            break
        units += 2 if ord(ch) > 0xFFFF else 1
        off += len(ch.encode("utf-8"))
    return off


def apply_edits(text, edits):
    data = text.encode("utf-8")
    spans = []
    for e in edits:
        s, t = e["range"]["start"], e["range"]["end"]
        spans.append((utf16_offset(text, s["line"], s["character"]),
                      utf16_offset(text, t["line"], t["character"]), e["newText"]))
    for b, en, new in sorted(spans, reverse=True):
        data = data[:b] + new.encode("utf-8") + data[en:]
    return data.decode("utf-8")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("file")
    ap.add_argument("--tosa-lsp", required=True)
    ap.add_argument("--mlir-opt", required=True)
    ap.add_argument("--dump", action="store_true", help="print each fixed file")
    args = ap.parse_args()
    text = open(args.file, encoding="utf-8").read()
    uri = "test:///" + args.file.split("/")[-1]
    op_line = next((i for i, l in enumerate(text.splitlines())
                    if " = tosa." in l), 0)
    msgs = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"capabilities": {}}},
        {"jsonrpc": "2.0", "method": "textDocument/didOpen",
         "params": {"textDocument": {"uri": uri, "languageId": "mlir", "version": 1, "text": text}}},
        {"jsonrpc": "2.0", "id": 1, "method": "textDocument/codeAction",
         "params": {"textDocument": {"uri": uri},
                    "range": {"start": {"line": 0, "character": 0},
                              "end": {"line": text.count("\n") + 1, "character": 0}},
                    "context": {"diagnostics": [], "only": ["quickfix"]}}},
        # Every kind, on the first op line: the function's preview and
        # compile commands (so a check of zero quick fixes cannot pass when
        # code actions are gone altogether).
        {"jsonrpc": "2.0", "id": 3, "method": "textDocument/codeAction",
         "params": {"textDocument": {"uri": uri},
                    "range": {"start": {"line": op_line, "character": 0},
                              "end": {"line": op_line, "character": 0}},
                    "context": {"diagnostics": []}}},
        {"jsonrpc": "2.0", "id": 2, "method": "shutdown"},
        {"jsonrpc": "2.0", "method": "exit"},
    ]
    stdin = "\n// -----\n".join(json.dumps(m) for m in msgs) + "\n"
    r = subprocess.run([args.tosa_lsp, "serve", "--lit-test"], input=stdin,
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        print(f"server exited with {r.returncode}: {r.stderr}")
        return 1
    replies = [json.loads(p) for p in re.split(r"Content-Length: \d+\r?\n\r?\n", r.stdout)[1:]]
    actions = next(m["result"] for m in replies if m.get("id") == 1)
    # "Add expected-* diagnostic checks" repairs nothing: the file it makes
    # must pass `mlir-opt --verify-diagnostics` (how MLIR tests are run).
    checks = [a for a in actions if a["title"] == "Add expected-* diagnostic checks"]
    actions = [a for a in actions if a not in checks]
    for a in checks:
        fixed = apply_edits(text, a["edit"]["changes"][uri])
        v = subprocess.run([args.mlir_opt, "--verify-diagnostics", "--split-input-file",
                            "--allow-unregistered-dialect", "-o", "/dev/null", "-"],
                           input=fixed, capture_output=True, text=True)
        if v.returncode != 0:
            print("expected-checks fails --verify-diagnostics:\n" + fixed + v.stderr)
            return 1
    failed = 0
    for a in actions:
        assert a["kind"] == "quickfix", a
        diag = a["diagnostics"][0]
        edits = a["edit"]["changes"][uri]
        fixed = apply_edits(text, edits)
        v = subprocess.run([args.mlir_opt, "--split-input-file", "--allow-unregistered-dialect", "-o", "/dev/null", "-"],
                           input=fixed, capture_output=True, text=True)
        errors = [l for l in v.stderr.splitlines() if ": error: " in l]
        ok = v.returncode == 0
        print(f"fix: {a['title']} [{diag['code']} at {diag['range']['start']['line'] + 1}]"
              f" -> mlir-opt: {'verifies' if ok else '; '.join(errors)}")
        if args.dump:
            print(fixed)
        failed += not ok
    print(f"fixes: {len(actions) - failed} passed, {failed} failed")
    # Candidates the server validated and withheld: `tosa-lsp fix
    # --candidates` lists them all, the server only those that verify.
    c = subprocess.run([args.tosa_lsp, "fix", "--candidates", args.file],
                       capture_output=True, text=True, timeout=120)
    candidates = len([l for l in c.stdout.splitlines() if l.strip()])
    print(f"candidates: {candidates}, withheld: {candidates - len(actions)}")
    others = next(m["result"] for m in replies if m.get("id") == 3)
    commands = sorted(a["command"]["command"] for a in others if "command" in a)
    print(f"commands: {' '.join(commands) or '(none)'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
