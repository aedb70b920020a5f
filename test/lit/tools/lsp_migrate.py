#!/usr/bin/env python3
"""Asks the language server for the source action "Migrate this file to
MLIR 22 TOSA" and the per-op migration quick fixes, applies the file's
WorkspaceEdit as an editor would (UTF-16 positions) and verifies the result
with mlir-opt-22. Prints one line per action; exits 1 when the migrated
file does not verify or the action is missing."""
import argparse
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from lsp_fixes import apply_edits  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("file")
    ap.add_argument("--tosa-lsp", required=True)
    ap.add_argument("--mlir-opt", required=True)
    ap.add_argument("--dump", action="store_true", help="print the migrated file")
    args = ap.parse_args()
    text = open(args.file, encoding="utf-8").read()
    uri = "test:///" + os.path.basename(args.file)
    everything = {"start": {"line": 0, "character": 0},
                  "end": {"line": text.count("\n") + 1, "character": 0}}
    msgs = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"capabilities": {}}},
        {"jsonrpc": "2.0", "method": "textDocument/didOpen",
         "params": {"textDocument": {"uri": uri, "languageId": "mlir", "version": 1, "text": text}}},
        {"jsonrpc": "2.0", "id": 1, "method": "textDocument/codeAction",
         "params": {"textDocument": {"uri": uri}, "range": everything,
                    "context": {"diagnostics": [], "only": ["source"]}}},
        {"jsonrpc": "2.0", "id": 2, "method": "textDocument/codeAction",
         "params": {"textDocument": {"uri": uri}, "range": everything,
                    "context": {"diagnostics": [], "only": ["quickfix"]}}},
        {"jsonrpc": "2.0", "id": 3, "method": "shutdown"},
        {"jsonrpc": "2.0", "method": "exit"},
    ]
    stdin = "\n// -----\n".join(json.dumps(m) for m in msgs) + "\n"
    r = subprocess.run([args.tosa_lsp, "serve", "--lit-test"], input=stdin,
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        print(f"server exited with {r.returncode}: {r.stderr}")
        return 1
    replies = [json.loads(p) for p in re.split(r"Content-Length: \d+\r?\n\r?\n", r.stdout)[1:]]
    sources = next(m["result"] for m in replies if m.get("id") == 1)
    quickfixes = next(m["result"] for m in replies if m.get("id") == 2)
    for a in quickfixes:
        if a.get("data", {}).get("review"):
            # The whole-file migration, also a quick fix on the old forms.
            print(f"quickfix (whole file, review): {a['title']}")
        elif a["title"].startswith("Migrate "):
            line = a["diagnostics"][0]["range"]["start"]["line"] + 1
            print(f"quickfix: {a['title']} [at {line}]")
    migrate = [a for a in sources if a["title"].startswith("Migrate this file")]
    if not migrate:
        print("source action: (none)")
        return 1
    a = migrate[0]
    edit = a["edit"]
    # A versioned document change, marked for the plugins' review (no
    # needsConfirmation annotation: VS Code would untick every change).
    assert "changeAnnotations" not in edit, edit
    doc = edit["documentChanges"][0]
    assert doc["textDocument"]["uri"] == uri, doc["textDocument"]
    assert doc["textDocument"]["version"] == 1, doc["textDocument"]
    edits = doc["edits"]
    confirm = a.get("data", {}).get("review") is True
    fixed = apply_edits(text, edits)
    v = subprocess.run([args.mlir_opt, "--split-input-file", "--allow-unregistered-dialect",
                        "-o", "/dev/null", "-"], input=fixed, capture_output=True, text=True)
    errors = [l for l in v.stderr.splitlines() if ": error: " in l]
    print(f"source: {a['title']} kind={a['kind']} review={'yes' if confirm else 'no'}"
          f" edits={len(edits)}"
          f" -> mlir-opt: {'verifies' if v.returncode == 0 else '; '.join(errors)}")
    if args.dump:
        print(fixed)
    return 0 if v.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
