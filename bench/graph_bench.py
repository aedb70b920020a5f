#!/usr/bin/env python3
"""The graph view at model size: a generated 4,000-op function (bench/gen.py)
drawn by `tosa-lsp graph`.

Reports, per run: the CLI's phases (TOSA_LSP_TIMING=1: the graph model, the
model + streamed JSON a `tosa/graph` reply writes, and the whole command),
then the page (`--format=html`) in headless Chromium: first band drawn, all
bands laid out and drawn, which thread laid it out, the longest gap between
animation frames during a scripted pan and zoom, also while it is laid out
again (bench/graph_render.js, puppeteer-core from
test/editors/vscode-e2e/node_modules); --no-worker: the same page without
Worker, for comparison.

    python3 bench/graph_bench.py --tosa-lsp build/bin/tosa-lsp [--lines 4100]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from session import Session, percentile  # noqa: E402
from lsp_client import TextDocument, path_to_uri  # noqa: E402


def request_times(tosa_lsp, model, repeats, stage=None, function="f0"):
    """ms of `tosa/graph` requests in a server (the first: with the
    function's inference; then `repeats` more of the same version)."""
    s = Session([tosa_lsp], 120)
    try:
        s.client.initialize()
        with open(model) as f:
            doc = TextDocument(path_to_uri(model), f.read())
        s.open(doc)
        params = {"textDocument": doc.ident(), "function": function}
        if stage:
            params["stage"] = stage
        first, r = s.timed_request("tosa/graph", params)
        times = [s.timed_request("tosa/graph", params)[0] for _ in range(repeats)]
        return {"first": round(first, 1), "p50": round(percentile(times, 50), 1),
                "p95": round(percentile(times, 95), 1), "n": repeats,
                # The reply's size as the server writes it (compact JSON).
                "replyKB": round(len(json.dumps(r, separators=(",", ":"))) / 1024),
                "nodes": len(r["nodes"]), "truncated": r.get("truncated", False),
                "omitted": r.get("omitted", 0),
                "collapsed": sum(1 for n in r["nodes"] if n.get("collapsed"))}
    finally:
        s.close()


def regions_file(path, n):
    """A function of `n` tosa.cond_if ops of 10 ops each (~11n nodes): over
    the node limit the view gets its top-level ops, regions collapsed."""
    t = "tensor<2x3xf32>"
    lines = ["func.func @f0(%%a: %s, %%c: tensor<i1>) -> %s {" % (t, t)]
    prev = "%a"
    for i in range(n):
        lines.append("  %%r%d = tosa.cond_if %%c : tensor<i1> -> %s {" % (i, t))
        v = prev
        for k in range(9):
            lines.append("    %%b%d_%d = tosa.exp %s : (%s) -> %s" % (i, k, v, t, t))
            v = "%%b%d_%d" % (i, k)
        lines.append("    tosa.yield %s : %s" % (v, t))
        lines.append("  } else {")
        lines.append("    tosa.yield %s : %s" % (prev, t))
        lines.append("  }")
        prev = "%%r%d" % i
    lines.append("  return %s : %s" % (prev, t))
    lines.append("}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def static_file(path, n):
    """`n` ops on static shapes (exp, add of the last two, a broadcast mul):
    a function that lowers, for the "After lowering" request."""
    t, r = "tensor<8x16xf32>", "tensor<1x16xf32>"
    lines = ["func.func @f0(%%a: %s, %%b: %s) -> %s {" % (t, r, t),
             '  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>']
    vals = ["%a", "%a"]
    for i in range(n):
        k = i % 3
        if k == 0:
            lines.append("  %%%d = tosa.exp %s : (%s) -> %s" % (i, vals[-1], t, t))
        elif k == 1:
            lines.append("  %%%d = tosa.add %s, %s : (%s, %s) -> %s" % (i, vals[-1], vals[-2], t, t, t))
        else:
            lines.append("  %%%d = tosa.mul %s, %%b, %%shift : (%s, %s, tensor<1xi8>) -> %s" % (i, vals[-1], t, r, t))
        vals.append("%%%d" % i)
    lines.append("  return %s : %s" % (vals[-1], t))
    lines.append("}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def page_times(tosa_lsp, model, d, name):
    """The page of `model` in headless Chromium (bench/graph_render.js)."""
    page = os.path.join(d, name + ".html")
    subprocess.run([tosa_lsp, "graph", model, "--format=html", "-o", page, "--force"], check=True)
    return page_html(page)


def page_html(page, *flags):
    env = {**os.environ, "NODE_PATH": os.environ.get("NODE_PATH") or os.path.join(HERE, "..", "test", "editors", "vscode-e2e", "node_modules")}
    r = subprocess.run(["node", os.path.join(HERE, "graph_render.js"), page, *flags], env=env,
                       capture_output=True, text=True, timeout=900)
    return json.loads(r.stdout) if r.returncode == 0 else {"error": r.stderr[-500:]}


def big_files(a, d, out):
    """The node limit: a 50k-line function (over the limit even at the top
    level: the first ops, the rest counted) and one of regions (top level
    only, regions collapsed)."""
    big = os.path.join(d, "big.mlir")
    subprocess.run([sys.executable, os.path.join(HERE, "gen.py"), "--lines", a.big_lines,
                    "--shape", "one", "-o", big], check=True, stdout=subprocess.DEVNULL)
    reg = os.path.join(d, "regions.mlir")
    regions_file(reg, 600)
    for name, path in (("big", big), ("regions", reg)):
        r = request_times(a.tosa_lsp, path, 5, function="f0")
        if not a.no_browser:
            r["page"] = page_times(a.tosa_lsp, path, d, name)
        out[name] = r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tosa-lsp", required=True)
    ap.add_argument("--lines", default="4100")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--no-browser", action="store_true")
    ap.add_argument("--requests", type=int, default=21)
    ap.add_argument("--big-lines", default="50000")
    ap.add_argument("--static-ops", default="4000")
    ap.add_argument("--no-big", action="store_true")
    ap.add_argument("--no-worker", action="store_true",
                    help="also draw the 4,000-op page without Worker (the layout on the page's thread)")
    ap.add_argument("--stage", action="append", default=[],
                    help="also time tosa/graph with this stage (linalg)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        model = os.path.join(d, "model.mlir")
        subprocess.run([sys.executable, os.path.join(HERE, "gen.py"), "--lines", a.lines,
                        "--shape", "one", "-o", model], check=True, stdout=subprocess.DEVNULL)
        phases = {}
        for _ in range(a.runs):
            t0 = time.monotonic()
            r = subprocess.run([a.tosa_lsp, "graph", model, "-o", os.path.join(d, "g.json"), "--force"],
                               env={**os.environ, "TOSA_LSP_TIMING": "1"}, capture_output=True, text=True, check=True)
            phases.setdefault("command", []).append((time.monotonic() - t0) * 1000)
            for m in re.finditer(r"timing: \[\d+\] (graph model[^0-9]*?) ([0-9.]+) ms", r.stderr):
                phases.setdefault(m.group(1).strip(), []).append(float(m.group(2)))
        g = json.load(open(os.path.join(d, "g.json")))
        out = {"ops": sum(1 for n in g["nodes"] if n.get("kind", "op") == "op"), "nodes": len(g["nodes"]),
               "edges": len(g["edges"]), "ms": {k: round(statistics.median(v), 1) for k, v in phases.items()}}
        out["request"] = request_times(a.tosa_lsp, model, a.requests)
        if a.stage:
            # The generated model does not lower (MLIR 22: "failed to
            # legalize unresolved materialization"): a static one that does.
            static = os.path.join(d, "static.mlir")
            static_file(static, int(a.static_ops))
            for st in a.stage:
                out["request-" + st] = request_times(a.tosa_lsp, static, 5, st)
                if not a.no_browser:
                    lowered = os.path.join(d, "lowered.html")
                    subprocess.run([a.tosa_lsp, "graph", static, "--stage=" + st, "--format=html",
                                    "-o", lowered, "--force"], check=True)
                    out["request-" + st]["page"] = page_html(lowered)
        if not a.no_browser:
            out["page"] = page_times(a.tosa_lsp, model, d, "g")
            if a.no_worker:
                out["page-no-worker"] = page_html(os.path.join(d, "g.html"), "--no-worker")
        if not a.no_big:
            big_files(a, d, out)
        out["load"] = os.getloadavg()[0]
        print(json.dumps(out))


if __name__ == "__main__":
    main()
