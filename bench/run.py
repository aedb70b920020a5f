#!/usr/bin/env python3
"""Benchmarks `tosa-lsp serve` against `mlir-lsp-server-22` (and `tosa-lsp
check` against `mlir-opt-22`) on generated TOSA files; see bench/README.md.

    python3 bench/run.py --sizes 10k,50k,200k --shapes one,multi --runs 2
    python3 bench/run.py --smoke      # 1k lines, 1 run: checks the bench works

Regenerates the inputs into bench/inputs/ (each checked with mlir-opt-22),
then for every (size, shape) runs each server R times on a fresh process
and writes bench/results.md and bench/results.json. Exits 1 when anything
failed (a file mlir-opt rejects, a server that died or timed out, `check`
reporting errors in a valid file), never because of a performance target.
"""

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import cli  # noqa: E402
import gen  # noqa: E402
import report  # noqa: E402
import session  # noqa: E402


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10k,50k,200k", help="line counts, e.g. 10k,50k")
    ap.add_argument("--shapes", default="one,multi")
    ap.add_argument("--runs", type=int, default=2, help="fresh server runs per case (median)")
    ap.add_argument("--open-runs", type=int, default=10,
                    help="more fresh servers per case that only open the file: "
                    "the open's median is over these and the full runs' opens")
    ap.add_argument("--hovers", type=int, default=30, help="hovers near the start and near the end")
    ap.add_argument("--inlays", type=int, default=10, help="inlay requests per screen")
    ap.add_argument("--across", type=int, default=60,
                    help="hovers spread over the whole file (and a sixth as many "
                    "screens of inlay hints, one request each)")
    ap.add_argument("--across-pause", type=float, default=1.0,
                    help="seconds before the hovers across the file")
    ap.add_argument("--edits", type=int, default=3, help="edits per run (median)")
    ap.add_argument("--cpu-runs", type=int, default=5,
                    help="fresh servers per case (alternating) whose CPU time is measured: "
                    "start, open, diagnostics, --cpu-hovers hovers, idle, shutdown")
    ap.add_argument("--cpu-hovers", type=int, default=100,
                    help="hovers on op names spread over the file in a CPU run")
    ap.add_argument("--cpu-settle", type=float, default=5.0,
                    help="at most this many seconds waiting for the server to go idle "
                    "before the shutdown of a CPU run")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per step")
    ap.add_argument("--settle", type=float, default=2.0,
                    help="seconds to wait for memory to drop after didClose")
    ap.add_argument("--seed", default="1")
    ap.add_argument("--tosa-lsp", default=os.path.join(ROOT, "build", "bin", "tosa-lsp"))
    ap.add_argument("--tosa-settings", default="",
                    help='tosa-lsp initializationOptions (JSON), e.g. \'{"info": {"publish": true}}\' '
                    "(the informational findings published as before)")
    ap.add_argument("--upstream", default="mlir-lsp-server-22")
    ap.add_argument("--mlir-opt", default="mlir-opt-22")
    ap.add_argument("--inputs", default=os.path.join(HERE, "inputs"))
    ap.add_argument("--results", help="Markdown output, the JSON goes next to it "
                    "(default bench/results.md; with --smoke, in the inputs directory "
                    "so a smoke run never replaces the reference results)")
    ap.add_argument("--smoke", action="store_true",
                    help="1k lines, both shapes, 1 run, few samples")
    a = ap.parse_args(argv)
    if a.smoke:
        a.sizes, a.runs, a.hovers, a.inlays, a.edits = "1k", 1, 10, 3, 1
        a.open_runs = 1
        a.cpu_runs, a.cpu_hovers, a.cpu_settle = 1, 20, 2.0
        a.across, a.across_pause = 12, 0.2
        a.timeout, a.settle = min(a.timeout, 60), 0.5
    a.init_options = {a.tosa_lsp: json.loads(a.tosa_settings)} if a.tosa_settings else {}
    if a.results is None:
        a.results = (os.path.join(a.inputs, "smoke-results.md") if a.smoke
                     else os.path.join(HERE, "results.md"))
    return a


def log(msg):
    print("bench: " + msg, file=sys.stderr, flush=True)


def machine(a):
    def first(path, key):
        try:
            with open(path) as f:
                return next((l.split(":", 1)[1].strip() for l in f if l.startswith(key)), "?")
        except OSError:
            return "?"
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.decode().strip()
    return {"cpu": first("/proc/cpuinfo", "model name"), "cores": os.cpu_count(),
            "mem_mib": int(first("/proc/meminfo", "MemTotal").split()[0]) // 1024,
            "load_start": "%.2f %.2f %.2f" % os.getloadavg(),
            "tosa_lsp_commit": commit or "?",
            "tosa_settings": a.tosa_settings,
            "upstream": shutil.which(a.upstream) or a.upstream}


def make_input(a, size, shape, failures):
    """Generates and verifies one input file; its path, or None."""
    os.makedirs(a.inputs, exist_ok=True)
    path = os.path.join(a.inputs, "%s-%s.mlir" % (shape, size))
    with open(path, "w", encoding="utf-8") as f:
        f.write(gen.generate(gen.parse_size(size), shape, a.seed))
    err = gen.verify(path, a.mlir_opt, a.timeout)
    if err:
        failures.append("%s does not verify: %s" % (path, err))
        return None
    return path


def run_cli(a, path, runs, failures):
    """`check` and mlir-opt, alternating so load drifts hit both alike."""
    out = {"check": [], "mlir-opt": []}
    for _ in range(runs):
        for name, argv in (("check", cli.check_argv(a.tosa_lsp, path)),
                           ("mlir-opt", cli.mlir_opt_argv(a.mlir_opt, path))):
            r = cli.run_timed(argv, a.timeout)
            if r["rc"] != 0:  # the file verifies, so both must exit 0
                failures.append("%s exited %s on %s" % (name, r["rc"], path))
            out[name].append(r)
    return out


def run_case(a, size, shape):
    case = {"size": size, "shape": shape, "runs_requested": a.runs, "failures": [],
            "runs": {report.TOSA: [], report.UPSTREAM: []},
            "open_runs": {report.TOSA: [], report.UPSTREAM: []},
            "cpu_runs": {report.TOSA: [], report.UPSTREAM: []}}
    log("%s %s: generating and verifying" % (size, shape))
    path = make_input(a, size, shape, case["failures"])
    case["file"] = path
    if path:
        servers = ((report.TOSA, [a.tosa_lsp, "serve"]), (report.UPSTREAM, [a.upstream]))
        for i in range(a.runs):
            for name, argv in servers:
                t0 = time.monotonic()
                r = session.measure(argv, path, a)
                case["runs"][name].append(r)
                log("%s %s run %d %s: %.1f s%s" % (size, shape, i + 1, name,
                    time.monotonic() - t0, " FAILED " + r["failure"] if "failure" in r else ""))
        # Alternating as above: load drifts on a shared host (one core can
        # run 1.5x slower than the other for seconds) hit both servers alike.
        for i in range(a.open_runs):
            for name, argv in servers:
                r = session.measure_open(argv, path, a)
                case["open_runs"][name].append(r)
                if "failure" in r:
                    log("%s %s open %d %s: FAILED %s" % (size, shape, i + 1, name,
                                                         r["failure"]))
        log("%s %s: %d more opens each" % (size, shape, a.open_runs))
        for i in range(a.cpu_runs):
            for name, argv in (servers if i % 2 == 0 else servers[::-1]):
                r = session.measure_cpu(argv, path, a)
                case["cpu_runs"][name].append(r)
                log("%s %s cpu %d %s: %s s CPU (start %s, open %s, hovers %s, then %s, exit %s), "
                    "load %.2f%s" % (size, shape, i + 1, name,
                                     *("%.3f" % r[k] if isinstance(r.get(k), float) else "?"
                                       for k in ("cpu_total_s", "cpu_start_s", "cpu_open_s",
                                                 "cpu_hovers_s", "cpu_background_s",
                                                 "cpu_after_s")),
                                     os.getloadavg()[0],
                                     " FAILED " + r["failure"] if "failure" in r else ""))
        cli_runs = run_cli(a, path, a.runs, case["failures"])
    else:
        cli_runs = {"check": [], "mlir-opt": []}
    case["cli_runs"] = cli_runs
    case["summary"] = report.case_summary(case)
    return case


def case_failed(case):
    s = case["summary"]
    return bool(case["failures"] or s[report.TOSA]["failures"] or s[report.UPSTREAM]["failures"])


def main(argv=None):
    a = parse_args(argv)
    results = {"command": " ".join(["python3", "bench/run.py"] + (sys.argv[1:] if argv is None else argv)),
               "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
               "machine": machine(a), "cases": []}
    for size in a.sizes.split(","):
        for shape in a.shapes.split(","):
            results["cases"].append(run_case(a, size.strip(), shape.strip()))
    results["machine"]["load_end"] = "%.2f %.2f %.2f" % os.getloadavg()
    md = report.document(results)
    os.makedirs(os.path.dirname(os.path.abspath(a.results)), exist_ok=True)
    with open(a.results, "w", encoding="utf-8") as f:
        f.write(md)
    with open(os.path.splitext(a.results)[0] + ".json", "w", encoding="utf-8") as f:
        json.dump(results, f, indent=1)
    print(md)
    failed = [c for c in results["cases"] if case_failed(c)]
    for c in failed:
        print("bench: FAILED %s %s" % (c["size"], c["shape"]))
    print("bench: %s (%d cases, %d failed); results in %s" % (
        "FAILED" if failed else "ok", len(results["cases"]), len(failed), a.results))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
