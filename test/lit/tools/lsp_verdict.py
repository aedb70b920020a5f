#!/usr/bin/env python3
"""A big many-function file over real stdio: the server publishes MLIR's
verdict as soon as every part of the file is parsed and verified (before
its op reports and index), and its own publish follows only when it adds
something. Prints one line per file: how many publishes of version 1, and
the codes of the last one."""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lsp_client import LspClient, TextDocument  # noqa: E402

FUNCTION = ("func.func @f{i}(%a: tensor<2x?xf32>) -> tensor<2x?xf32> {{\n"
            "  %0 = tosa.abs %a : (tensor<2x?xf32>) -> tensor<2x?xf32>\n"
            "  %1 = tosa.exp %0 : (tensor<2x?xf32>) -> tensor<2x?xf32>\n"
            "  return %1 : tensor<2x?xf32>\n}}\n")
# MLIR's verifier rejects it.
WRONG = ("func.func @bad(%a: tensor<2xf32>) -> tensor<3xf32> {\n"
         "  %0 = tosa.abs %a : (tensor<2xf32>) -> tensor<3xf32>\n"
         "  return %0 : tensor<3xf32>\n}\n")
# MLIR's verifier accepts it; its shape inference finds 2, not 5.
CONTRADICTION = (
    "func.func @g(%a: tensor<2x3xf32>) -> tensor<3x5xf32> {\n"
    "  %0 = tosa.transpose %a {perms = array<i32: 1, 0>} : "
    "(tensor<2x3xf32>) -> tensor<?x?xf32>\n"
    "  %1 = tosa.abs %0 : (tensor<?x?xf32>) -> tensor<3x5xf32>\n"
    "  return %1 : tensor<3x5xf32>\n}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--tosa-lsp", required=True)
    ap.add_argument("--functions", type=int, default=2000)
    ap.add_argument("--settle", type=float, default=1.5,
                    help="seconds to wait for a later publish")
    args = ap.parse_args()
    many = "".join(FUNCTION.format(i=i) for i in range(args.functions))
    files = {"clean": many, "wrong": many + WRONG,
             "contradiction": many + CONTRADICTION}
    env = dict(os.environ, TOSA_LSP_TIMING="1")
    with LspClient([args.tosa_lsp, "serve"], env=env, default_timeout=60.0) as c:
        c.initialize()
        for name, text in files.items():
            doc = TextDocument("file:///verdict/%s.mlir" % name, text)
            c.notify("textDocument/didOpen", doc.open_params())
            c.wait_for_diagnostics(doc.uri, 1)
            # A hover waits for the version's analysis; then its background
            # shape checks get time to publish again.
            c.request("textDocument/hover", doc.position_params(1, 10))

            def published():
                return [m.body["params"] for m in c.diagnostics_messages(doc.uri)
                        if m.body["params"].get("version") == 1]
            # The shape error comes from the background (bounded wait on a
            # slow machine); the others get `settle` seconds to publish again.
            deadline = time.monotonic() + (20.0 if name == "contradiction"
                                           else args.settle)
            while time.monotonic() < deadline:
                last = published()[-1]["diagnostics"]
                if name == "contradiction" and last:
                    break
                time.sleep(0.05)
            published = published()
            codes = [d.get("code", "") for d in published[-1]["diagnostics"]]
            print("%s: %d publish(es), last: [%s]" %
                  (name, len(published), ", ".join(codes)))
        c.shutdown()
    # The clean file's publish came before its parts' op reports and merge
    # (the timing lines of its analysis, the first of the three).
    err = c.stderr_text()
    clean_at = err.find("mark: published clean")
    merged_at = err.find("merge of the parts")
    print("clean published before the parts' merge:",
          "yes" if 0 <= clean_at < merged_at else "no")
    return 0


if __name__ == "__main__":
    sys.exit(main())
