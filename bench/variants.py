#!/usr/bin/env python3
"""tosa-lsp variants (extra `serve` flags) and mlir-lsp-server-22, interleaved.

For a change whose effect is a few percent, on a shared 2-core host: every
round runs each server once per measurement, the order rotating, so that
load drifts hit all alike; the table gives medians and the load average.

    python3 bench/variants.py --file bench/inputs/multi-50k.mlir --rounds 5 \\
        --variant new= --variant old=--infer-in-analysis=false

Per server and round (fresh processes): the CPU session of run.py
(session.measure_cpu: open, 100 hovers spread over the file right after the
diagnostics, idle, exit; user+sys of the whole process, the first hover in
each function, VmHWM), an open alone (didOpen -> diagnostics), and a typed
character that makes a verifier error in the middle function
(bench/editor/run.py's choose_edit: didChange -> the publish of that
version; full text for upstream, a range edit for tosa-lsp).
"""

import argparse
import importlib.util
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import run as bench_run  # noqa: E402  (the options and their defaults)
import session  # noqa: E402


def editor_module():
    spec = importlib.util.spec_from_file_location(
        "editor_run", os.path.join(HERE, "editor", "run.py"))
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.join(HERE, "editor"))
    spec.loader.exec_module(mod)
    return mod


def typed_error(argv, path, opts, edit):
    """ms from the didChange that types `edit` to the publish of that
    version, and how many diagnostics it carries."""
    def steps(s, doc, r):
        s.guard("open", s.open, doc)
        sync = s.client.capabilities.get("textDocumentSync", 1)
        incremental = (sync.get("change") if isinstance(sync, dict) else sync) == 2
        at = {"line": edit["line"], "character": edit["col"]}
        change = {"range": {"start": at, "end": at}, "text": edit["text"]}
        params = doc.change_params([change])
        if not incremental:
            params["contentChanges"] = [{"text": doc.text}]
        since = len(s.client.notifications)
        t0 = s.client.notify("textDocument/didChange", params)
        msg = s.wait_publish(doc.uri, doc.version, since)
        r["typed_error_ms"] = (msg.time - t0) * 1000.0
        r["typed_error_diags"] = len(msg.body["params"]["diagnostics"])
        r["rss_peak"] = session.proc_status(s.pid)["VmHWM"]
    return session.run_session(argv, path, opts, steps)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--file", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--tosa-lsp", default=os.path.join(HERE, "..", "build", "bin", "tosa-lsp"))
    ap.add_argument("--upstream", default="/usr/bin/mlir-lsp-server-22")
    ap.add_argument("--variant", action="append", default=[],
                    help="NAME=FLAGS: tosa-lsp serve with FLAGS (space separated)")
    ap.add_argument("--skip", default="", help="comma list of: cpu,open,typed")
    a = ap.parse_args()
    opts = bench_run.parse_args([])  # run.py's defaults (cpu_hovers, seed, ...)
    servers = [(name, [a.tosa_lsp, "serve"] + flags.split())
               for name, flags in (v.split("=", 1) for v in a.variant or ["tosa-lsp="])]
    servers.append(("upstream", [a.upstream]))
    with open(a.file, encoding="utf-8") as f:
        lines = f.read().split("\n")
    edit = editor_module().choose_edit(lines, "verifier")
    skip = set(a.skip.split(",")) - {""}
    rows = {name: {} for name, _ in servers}
    loads = [os.getloadavg()[0]]
    for i in range(a.rounds):
        order = servers[i % len(servers):] + servers[:i % len(servers)]
        for name, argv in order:
            got = {}
            if "cpu" not in skip:
                got.update(session.measure_cpu(argv, a.file, opts))
            if "open" not in skip:
                got.update(session.measure_open(argv, a.file, opts))
            if "typed" not in skip:
                got.update(typed_error(argv, a.file, opts, edit))
            if "failure" in got:
                print("%s round %d: %s" % (name, i, got["failure"]), file=sys.stderr)
            for k, v in got.items():
                if isinstance(v, (int, float)):
                    rows[name].setdefault(k, []).append(v)
        loads.append(os.getloadavg()[0])
        print("round %d done, load %.2f" % (i + 1, loads[-1]), file=sys.stderr)
    keys = ["cpu_total_s", "cpu_sys_s", "minor_faults", "rss_max_mib",
            "cpu_open_s", "cpu_hovers_s", "cpu_background_s",
            "hover_first_p95", "hover_first_max", "hover_cold_p95",
            "hover_on_diagnostics", "hover_first_p95_later", "open_ms",
            "typed_error_ms", "typed_error_diags", "rss_peak",
            "rss_baseline", "rss_after_close"]
    names = [n for n, _ in servers]
    print("%s, %d rounds, load average (1 min) %s" % (
        os.path.basename(a.file), a.rounds, " ".join("%.1f" % x for x in loads)))
    print("| metric | " + " | ".join(names) + " | " +
          " | ".join("%s/upstream" % n for n in names[:-1]) + " |")
    print("|---" * (2 * len(names)) + "|")
    for k in keys:
        med = {n: statistics.median(rows[n][k]) if rows[n].get(k) else None for n in names}
        if all(v is None for v in med.values()):
            continue
        up = med["upstream"]
        cells = ["%.3g" % med[n] if med[n] is not None else "-" for n in names]
        ratios = ["%.2fx" % (med[n] / up) if med[n] is not None and up else "-"
                  for n in names[:-1]]
        print("| %s | %s | %s |" % (k, " | ".join(cells), " | ".join(ratios)))
    for n in names:
        print("%s: %s" % (n, {k: ["%.3g" % x for x in v] for k, v in rows[n].items()
                              if k in ("cpu_total_s", "open_ms", "hover_first_p95")}))


if __name__ == "__main__":
    main()
