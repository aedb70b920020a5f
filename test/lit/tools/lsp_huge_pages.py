#!/usr/bin/env python3
"""The server's heap turns to transparent huge pages on the open of a big
document, not before (support/Allocator.h, useHugePages): a small file's
session touched more memory than it used in 2 MiB pages, a 50k-line one
faulted ~3x fewer pages. Seen from outside: the heap's mapping carries the
`hg` VmFlag (MADV_HUGEPAGE) in /proc/PID/smaps, and the server still
answers. Prints one line per step; the lit test REQUIRES `thp`
(lit.cfg.py), the kernel's THP being on."""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lsp_client import LspClient, TextDocument, path_to_uri  # noqa: E402


def advised(pid):
    """Whether any mapping of `pid` is advised MADV_HUGEPAGE."""
    with open("/proc/%d/smaps" % pid) as f:
        return any(line.startswith("VmFlags:") and " hg" in line for line in f)


def function(i):
    return ("func.func @f%d(%%a: tensor<1x3xf32>, %%b: tensor<2x1xf32>) -> tensor<2x3xf32> {\n"
            "  %%0 = tosa.add %%a, %%b : (tensor<1x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>\n"
            "  %%1 = tosa.mul %%0, %%0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>\n"
            "  return %%1 : tensor<2x3xf32>\n}\n" % i)


def open_and_hover(c, uri, text):
    doc = TextDocument(uri, text)
    c.notify("textDocument/didOpen", doc.open_params())
    c.wait_for_diagnostics(uri, timeout=120)
    r = c.request("textDocument/hover", doc.position_params(1, 12), timeout=60)
    return r is not None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tosa-lsp", required=True)
    ap.add_argument("--env", action="append", default=[],
                    help="NAME=VALUE for the server (repeatable)")
    a = ap.parse_args()
    env = dict(os.environ)
    env.pop("TOSA_LSP_HUGE_PAGES", None)
    env.pop("TOSA_LSP_PAGE_REPORTING_ORDER", None)
    for e in a.env:
        k, v = e.split("=", 1)
        env[k] = v
    small = "".join(function(i) for i in range(20))
    big = "".join(function(i) for i in range(2600 * 1024 // len(function(0))))
    with LspClient([a.tosa_lsp, "serve"], env=env, default_timeout=60) as c:
        c.initialize()
        print("at start: advised=%s" % advised(c.proc.pid))
        ok = open_and_hover(c, "test:///small.mlir", small)
        print("after a %d KiB open: advised=%s, hover answered=%s" % (
            len(small) // 1024, advised(c.proc.pid), ok))
        ok = open_and_hover(c, "test:///big.mlir", big)
        print("after a %d MiB open: advised=%s, hover answered=%s" % (
            len(big) >> 20, advised(c.proc.pid), ok))
        c.shutdown()


if __name__ == "__main__":
    main()
