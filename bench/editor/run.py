#!/usr/bin/env python3
"""Editor-side benchmark: what a user of Neovim 0.7 / Vim 9 sees with
tosa-lsp and with mlir-lsp-server-22 (see bench/editor/README.md).

    python3 bench/editor/run.py --sizes 10k,50k,200k --shapes multi,one --runs 3
    python3 bench/editor/run.py --smoke     # 1k lines, 1 run: checks it works

Configurations (--configs, in this order within each run, so the two
servers of one editor alternate):
  nvim-tosa      Neovim + the project's plugin (editors/vim/lua) + tosa-lsp
  nvim-upstream  Neovim's builtin client (vim.lsp.start_client) + mlir-lsp-server-22
  vim-tosa       Vim 9 + the project's plugin (editors/vim) + tosa-lsp
  vim-upstream   Vim 9 + the same plugin, g:tosa_lsp_command = mlir-lsp-server-22
Every server runs behind lsp_tap.py (publish sizes and times, server CPU).
Writes bench/editor/results.md and .json (--smoke: into the inputs
directory). Exits 1 when a run failed (an editor or server that errors or
times out, an edit whose error never shows), never on a timing target.
"""

import argparse
import collections
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, BENCH)

import gen  # noqa: E402

CONFIGS = {
    # name: (editor, mode, server, label)
    "nvim-tosa": ("nvim", "plugin", "tosa", "Neovim + plugin + tosa-lsp"),
    "nvim-upstream": ("nvim", "builtin", "upstream", "Neovim builtin client + mlir-lsp-server-22"),
    "nvim-builtin-tosa": ("nvim", "builtin", "tosa", "Neovim builtin client + tosa-lsp"),
    "vim-tosa": ("vim", "plugin", "tosa", "Vim + plugin + tosa-lsp"),
    "vim-upstream": ("vim", "plugin", "upstream", "Vim + plugin + mlir-lsp-server-22"),
}
# (tosa config, upstream config) pairs whose ratio the tables show
PAIRS = (("nvim-tosa", "nvim-upstream"), ("vim-tosa", "vim-upstream"))

UNARY = re.compile(r"^  %\w+ = tosa\.(exp|log|tanh|sigmoid|erf|ceil|floor|reciprocal|rsqrt|abs|negate) "
                   r"%\w+ : \(tensor<([^>]*)>\) -> tensor<([^>]*)>$")


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10k,50k,200k")
    ap.add_argument("--shapes", default="multi,one")
    ap.add_argument("--runs", type=int, default=3, help="runs per configuration (median)")
    ap.add_argument("--configs", default="nvim-tosa,nvim-upstream,vim-tosa,vim-upstream")
    ap.add_argument("--variant", action="append", default=[], metavar="CONFIG/NAME=JSON",
                    help="one more configuration, run right after CONFIG in each run: CONFIG "
                    "with the plugin options JSON (Neovim: merged into setup{}; Vim: each key "
                    "as g:KEY), e.g. 'nvim-tosa/d0={\"inlay_publish_delay_ms\": 0}'; the keys "
                    "_root (a tree whose editors/ is used instead) and _tosa_lsp (another server "
                    "binary) are the bench's, for A/B runs")
    ap.add_argument("--edit-kind", choices=["verifier", "parse"], default="verifier",
                    help="the typed character makes a verifier error in one op (default) "
                    "or a parse error (a value's type no longer matches its uses)")
    ap.add_argument("--settle", type=float, default=1.5,
                    help="seconds the stall is watched after a publish is shown")
    ap.add_argument("--timeout", type=float, default=180, help="seconds per editor run")
    ap.add_argument("--seed", default="1")
    ap.add_argument("--tosa-lsp", default=os.path.join(ROOT, "build", "bin", "tosa-lsp"))
    ap.add_argument("--tosa-args", default="serve", help="arguments of tosa-lsp (space separated)")
    ap.add_argument("--tosa-settings", default="",
                    help='tosa-lsp settings (JSON) given to the plugins, e.g. \'{"info": {"publish": true}}\'')
    ap.add_argument("--upstream", default="mlir-lsp-server-22")
    ap.add_argument("--mlir-opt", default="mlir-opt-22")
    ap.add_argument("--nvim", default="nvim")
    ap.add_argument("--vim", default="vim")
    ap.add_argument("--inputs", default=os.path.join(BENCH, "inputs"))
    ap.add_argument("--results", help="Markdown output (the JSON goes beside it)")
    ap.add_argument("--keep-taps", metavar="DIR",
                    help="keep each run's tap log in DIR (SIZE-SHAPE-RUN-CONFIG.jsonl); with "
                    "TAP_STDERR=1 TOSA_LSP_TIMING=1 in the environment they hold the server's "
                    "phase times too")
    ap.add_argument("--smoke", action="store_true", help="1k lines, multi, 1 run, short settle")
    a = ap.parse_args(argv)
    if a.smoke:
        a.sizes, a.shapes, a.runs, a.settle = "1k", "multi", 1, 0.3
        a.timeout = min(a.timeout, 60)
    if a.results is None:
        a.results = (os.path.join(a.inputs, "editor-smoke-results.md") if a.smoke
                     else os.path.join(HERE, "results.md"))
    a.tosa_lsp = os.path.abspath(a.tosa_lsp) if os.sep in a.tosa_lsp else a.tosa_lsp
    a.plugin_opts = {}
    for v in a.variant:
        name, sep, opts = v.partition("=")
        base = name.split("/")[0]
        if not sep or "/" not in name or base not in CONFIGS:
            ap.error("--variant %r: want CONFIG/NAME=JSON with CONFIG one of %s" % (v, ", ".join(CONFIGS)))
        try:
            a.plugin_opts[name] = json.loads(opts)
        except ValueError as e:
            ap.error("--variant %r: %s" % (v, e))
    return a


def config_info(name):
    """(editor, mode, server, label) of a configuration or a variant
    (CONFIG/NAME: CONFIG's, the label marked with NAME)."""
    base, _, variant = name.partition("/")
    editor, mode, server, label = CONFIGS[base]
    return editor, mode, server, label + (" [%s]" % variant if variant else "")


def log(msg):
    print("editor-bench: " + msg, file=sys.stderr, flush=True)


def loadavg():
    return "%.2f %.2f %.2f" % os.getloadavg()


def choose_edit(lines, kind="verifier"):
    """The typed character: a digit put before a static result dim of a
    unary op (e.g. 16 -> 116) whose operand has the same static dim, in the
    function holding the middle line (or the nearest function that has such
    an op). kind 'verifier': an op whose result is not used again, so the
    op no longer verifies (shapes differ): one verifier error, in one
    function. kind 'parse': an op whose result is used later, so the file
    no longer parses ("use of value expects different type than prior
    uses"), as most half-typed edits do. Returns the edit's dict."""
    funcs, first = [], None
    for i, text in enumerate(lines):
        if text.startswith("func.func"):
            first = i
        elif text == "}" and first is not None:
            funcs.append((first, i))
            first = None
    mid = len(lines) // 2
    funcs.sort(key=lambda f: 0 if f[0] <= mid <= f[1] else min(abs(f[0] - mid), abs(f[1] - mid)))
    for first, last in funcs:
        uses = collections.Counter(re.findall(r"%\w+", "\n".join(lines[first:last + 1])))
        centre = min(max(mid, first), last)
        for i in list(range(centre, last)) + list(range(first, centre)):
            m = UNARY.match(lines[i])
            if not m:
                continue
            result = lines[i].split()[0]
            used = uses[result] > 1
            if used != (kind == "parse"):
                continue
            src, dst = m.group(2).split("x"), m.group(3).split("x")
            for k in range(len(dst) - 1):  # the last part is the element type
                if dst[k] != "?" and dst[k] == src[k]:
                    col = m.start(3) + sum(len(p) + 1 for p in dst[:k])
                    return {"line": i, "col": col, "text": "1", "first": first, "last": last,
                            "before": lines[i], "kind": kind}
    raise RuntimeError("no editable unary op (%s error) in any function" % kind)


def make_input(a, size, shape):
    os.makedirs(a.inputs, exist_ok=True)
    path = os.path.join(a.inputs, "%s-%s.mlir" % (shape, size))
    text = gen.generate(gen.parse_size(size), shape, a.seed)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    err = gen.verify(path, a.mlir_opt, a.timeout)
    if err:
        raise RuntimeError("%s does not verify: %s" % (path, err))
    lines = text.split("\n")
    edit = choose_edit(lines, a.edit_kind)
    # The edited file must fail to verify at that line (both servers then
    # report it; upstream only the first error of a function).
    l = lines[edit["line"]]
    lines[edit["line"]] = l[:edit["col"]] + edit["text"] + l[edit["col"]:]
    edit["after"] = lines[edit["line"]]
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write("\n".join(lines))
        bad = f.name
    try:
        p = subprocess.run([a.mlir_opt, "--allow-unregistered-dialect", bad, "-o", "/dev/null"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=a.timeout)
    finally:
        os.unlink(bad)
    err = p.stderr.decode("utf-8", "replace")
    if p.returncode == 0 or (":%d:" % (edit["line"] + 1)) not in err:
        raise RuntimeError("the edit %r does not make mlir-opt fail at line %d: %s"
                           % (edit["after"], edit["line"] + 1, err[:300]))
    edit["mlir_opt_error"] = err.strip().split("\n")[0][-200:]
    if (a.edit_kind == "verifier") == ("expects different type" in err):
        raise RuntimeError("the edit %r gives the wrong kind of error: %s" % (edit["after"], err[:300]))
    return path, edit


def server_cmd(a, server, tap_log, tosa_lsp=None):
    argv = ([tosa_lsp or a.tosa_lsp] + a.tosa_args.split()) if server == "tosa" else [a.upstream]
    return [sys.executable, "-S", os.path.join(HERE, "lsp_tap.py"), tap_log, "--"] + argv


def read_tap(path):
    recs = []
    try:
        with open(path) as f:
            for line in f:
                try:
                    recs.append(json.loads(line))
                except ValueError:
                    pass
    except OSError:
        pass
    return recs


def tap_figures(recs, r):
    """Server-side times and publish sizes from the tap's log, relative to
    the editor's events in r (same wall clock)."""
    out = {}
    pubs = [x for x in recs if x.get("method") == "textDocument/publishDiagnostics"]
    out["publishes"] = len(pubs)
    out["publish_bytes_total"] = sum(x["bytes"] for x in pubs)
    opened = next((x for x in recs if x.get("method") == "textDocument/didOpen"), None)
    # The open's steps before the server has the didOpen: the editor
    # starting the server (tap and server processes), initialize answered,
    # the editor reading, encoding and beginning to write the didOpen,
    # its bytes arriving.
    spawned = next((x["spawned"] for x in recs if "spawned" in x), None)
    init = next((x for x in recs if x.get("method") == "initialize" and x.get("dir") == "c2s"), None)
    init_reply = init and next((x for x in recs if x.get("dir") == "s2c" and "method" not in x
                                and x.get("id") == init.get("id")), None)
    if spawned and "t_edit_cmd" in r:
        out["open_spawn_ms"] = (spawned - r["t_edit_cmd"]) * 1000
    if spawned and init_reply:
        out["open_init_ms"] = (init_reply["t"] - spawned) * 1000
    if opened and init_reply and "t0" in opened:
        out["open_before_didopen_ms"] = (opened["t0"] - init_reply["t"]) * 1000
        out["open_didopen_write_ms"] = (opened["t"] - opened["t0"]) * 1000
    if opened:
        out["didopen_bytes"] = opened["bytes"]
        p = next((x for x in pubs if x["t"] >= opened["t"]), None)
        if p:
            out["server_open_ms"] = (p["t"] - opened["t"]) * 1000
            out["open_publish_bytes"] = p["bytes"]
            out["open_publish_diagnostics"] = p.get("diagnostics")
            if "t_open_shown" in r:
                out["client_open_ms"] = (r["t_open_shown"] - p["t"]) * 1000
    if "t_type" in r:
        ch = next((x for x in recs if x.get("method") == "textDocument/didChange"
                   and x["t"] >= r["t_type"]), None)
        if ch:
            out["didchange_bytes"] = ch["bytes"]
            v = ch.get("version")
            p = next((x for x in pubs if x["t"] >= ch["t"]
                      and (v is None or x.get("version", v) == v)), None)
            if p:
                out["server_edit_ms"] = (p["t"] - ch["t"]) * 1000
                out["edit_publish_bytes"] = p["bytes"]
                out["edit_publish_diagnostics"] = p.get("diagnostics")
                out["typed_to_sent_ms"] = (ch["t"] - r["t_type"]) * 1000
                if "t_error_shown" in r:
                    out["client_edit_ms"] = (r["t_error_shown"] - p["t"]) * 1000
    # The inlay-hint requests of the open (before the typed character):
    # the first one's delay after the publish and the server's answer.
    hints = [x for x in recs if x.get("method") == "textDocument/inlayHint" and x.get("dir") == "c2s"
             and ("t_type" not in r or x["t"] < r["t_type"])]
    out["open_hint_requests"] = len(hints)
    if hints and opened:
        h = hints[0]
        p = next((x for x in pubs if x["t"] >= opened["t"]), None)
        if p:
            out["hint_after_publish_ms"] = (h.get("t0", h["t"]) - p["t"]) * 1000
        answer = next((x for x in recs if x.get("dir") == "s2c" and "method" not in x
                       and x.get("id") == h.get("id") and x["t"] >= h["t"]), None)
        if answer:
            out["hint_answer_ms"] = (answer["t"] - h["t"]) * 1000
            if "t_hints_shown" in r:
                out["client_hints_ms"] = (r["t_hints_shown"] - answer["t"]) * 1000
    ex = next((x for x in recs if "exit" in x), None)
    if ex:
        out["server_cpu_s"] = ex["utime"] + ex["stime"]
    return out


def run_editor(a, config, path, edit, workdir, tag="run"):
    editor, mode, server, _ = config_info(config)
    fname = config.replace("/", "_")
    tap_log = os.path.join(workdir, "tap-%s.jsonl" % fname)
    out = os.path.join(workdir, "out-%s.json" % fname)
    for p in (tap_log, out):
        if os.path.exists(p):
            os.unlink(p)
    # A variant's options; "_root" (a tree with another editors/) and
    # "_tosa_lsp" (another server binary) are the bench's, for A/B runs.
    opts = a.plugin_opts.get(config, {})
    env = dict(os.environ, BENCH_ROOT=opts.get("_root", ROOT), BENCH_MODE=mode, BENCH_FILE=path,
               BENCH_CMD=json.dumps(server_cmd(a, server, tap_log, opts.get("_tosa_lsp"))),
               BENCH_EDIT=json.dumps({k: edit[k] for k in ("line", "col", "text", "first", "last")}),
               BENCH_SETTINGS=a.tosa_settings if server == "tosa" else "",
               BENCH_PLUGIN_OPTS=json.dumps({k: v for k, v in opts.items() if not k.startswith("_")}),
               BENCH_OUT=out, BENCH_SETTLE_MS=str(int(a.settle * 1000)),
               BENCH_TIMEOUT_MS=str(int(a.timeout * 1000 * 0.8)))
    if editor == "nvim":
        argv = [a.nvim, "--headless", "-n", "-i", "NONE", "-u", "NONE",
                "-c", "luafile " + os.path.join(HERE, "nvim_bench.lua")]
    else:
        argv = [a.vim, "-N", "-u", "NONE", "-i", "NONE", "-n", "-es",
                "-S", os.path.join(HERE, "vim_bench.vim")]
    load = loadavg()
    t0 = time.monotonic()
    try:
        p = subprocess.run(argv, env=env, cwd=workdir, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=a.timeout)
        rc, output = p.returncode, p.stdout.decode("utf-8", "replace")
    except subprocess.TimeoutExpired as e:
        rc, output = "timeout", (e.stdout or b"").decode("utf-8", "replace")
    wall = time.monotonic() - t0
    try:
        with open(out) as f:
            r = json.load(f)
    except (OSError, ValueError):
        r = {"error": "no result from %s (exit %s): %s" % (editor, rc, output[-1500:])}
    # the editors' times: microseconds since r["base"] (wall-clock seconds)
    base = r.get("base", 0)
    for k in [k for k in r if k.startswith("t_")]:
        r[k] = base + r[k] / 1e6
    for c in r.get("changes", []) or []:
        c["t"] = base + c["t"] / 1e6
    r["load"] = load
    r["wall_s"] = wall
    r["config"] = config
    if rc not in (0, "0") and "error" not in r:
        r["error"] = "%s exited %s: %s" % (editor, rc, output[-800:])
    if r.get("filetype") not in (None, "mlir") and "error" not in r:
        r["error"] = "filetype %r" % r["filetype"]
    # to milliseconds from the editor's events
    def ms(b, e):
        return (r[e] - r[b]) * 1000 if b in r and e in r else None
    r["open_ms"] = ms("t_edit_cmd", "t_open_shown")
    r["edit_cmd_ms"] = ms("t_edit_cmd", "t_edit_cmd_done")
    r["edit_ms"] = ms("t_type", "t_error_shown")
    r["hints_ms"] = ms("t_edit_cmd", "t_hints_shown")
    # the tap logs the server's exit (and CPU time) once it has reaped it
    deadline = time.monotonic() + 5
    recs = read_tap(tap_log)
    while not any("exit" in x for x in recs) and time.monotonic() < deadline:
        time.sleep(0.05)
        recs = read_tap(tap_log)
    r.update(tap_figures(recs, r))
    if a.keep_taps:
        os.makedirs(a.keep_taps, exist_ok=True)
        if os.path.exists(tap_log):
            shutil.copy(tap_log, os.path.join(a.keep_taps, "%s-%s.jsonl" % (tag, fname)))
        with open(os.path.join(a.keep_taps, "%s-%s.out.json" % (tag, fname)), "w") as f:
            json.dump(r, f)
    # the raw lateness lists are long: keep only the largest few
    r["lateness_top"] = sorted((x[1] for x in r.pop("lateness", []) or []), reverse=True)[:5]
    return r


def median(vals):
    v = sorted(x for x in vals if x is not None)
    if not v:
        return None
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


ROWS = [
    # (key, label, format, target kind)
    ("open_ms", "open → first publish shown (ms)", "%.0f", "open"),
    ("open_spawn_ms", "  client: `:edit` → server started (ms)", "%.0f", None),
    ("open_init_ms", "  server started → initialize answered (ms)", "%.0f", None),
    ("open_before_didopen_ms", "  client: initialize answered → didOpen's first byte (ms)", "%.0f", None),
    ("open_didopen_write_ms", "  didOpen's bytes arriving (first → last byte; ms)", "%.0f", None),
    ("server_open_ms", "  server: didOpen → publish sent (ms)", "%.0f", None),
    ("client_open_ms", "  client: publish sent → shown (ms)", "%.0f", None),
    ("hints_ms", "open → inlay hints drawn (ms)", "%.0f", None),
    ("hint_after_publish_ms", "  client: publish sent → first hint request (ms)", "%.0f", None),
    ("hint_answer_ms", "  server: hint request → answer (ms)", "%.0f", None),
    ("client_hints_ms", "  client: answer → hints drawn (ms)", "%.0f", None),
    ("open_hint_requests", "hint requests at open", "%d", None),
    ("open_publish_diagnostics", "publish at open: diagnostics", "%d", None),
    ("open_publish_kib", "publish at open: KiB", "%.1f", None),
    ("edit_ms", "typed character → its error shown (ms)", "%.0f", "edit"),
    ("typed_to_sent_ms", "  client: typed → didChange sent (ms)", "%.0f", None),
    ("server_edit_ms", "  server: didChange → publish sent (ms)", "%.0f", None),
    ("client_edit_ms", "  client: publish sent → shown (ms)", "%.0f", None),
    ("edit_publish_diagnostics", "publish after the edit: diagnostics", "%d", None),
    ("edit_publish_kib", "publish after the edit: KiB", "%.1f", None),
    ("stall_open_ms", "longest UI stall, open (ms)", "%.0f", "stall"),
    ("stall_open_busy_ms", "  of a stall, the editor running (ms)", "%.0f", None),
    ("stall_edit_ms", "longest UI stall, after the edit (ms)", "%.0f", "stall"),
    ("stall_edit_busy_ms", "  of a stall, the editor running (ms)", "%.0f", None),
    ("editor_cpu_open_ms", "editor main-thread CPU, open window (ms)", "%.0f", None),
    ("editor_cpu_edit_ms", "editor main-thread CPU, edit window (ms)", "%.0f", None),
    ("edit_cmd_ms", "`:edit` itself (load, attach; ms)", "%.0f", None),
    ("server_cpu_s", "server CPU, whole session (user+sys, s)", "%.2f", None),
    ("publishes", "publishes in the session", "%d", None),
]


def summarize(runs):
    s = {}
    ok = [r for r in runs if "error" not in r]
    for key, _, _, _ in ROWS:
        if key.endswith("_kib"):
            src = key.replace("_kib", "_bytes")
            vals = [r[src] / 1024.0 for r in ok if r.get(src) is not None]
        else:
            vals = [r.get(key) for r in ok]
        s[key] = median(vals)
    s["runs_ok"] = len(ok)
    s["runs"] = len(runs)
    s["errors"] = [r["error"] for r in runs if "error" in r]
    return s


def fmt(v, f):
    if v is None:
        return "–"
    if f == "%d":
        return "{:,}".format(int(round(v)))
    return f % v


def judge(kind, tosa, up, size_lines):
    if tosa is None:
        return ""
    if kind == "open" and up:
        return "met" if tosa <= 0.8 * up else "**not met**"
    if kind == "edit" and up:
        return "met" if tosa <= 0.5 * up else "**not met**"
    if kind == "stall":
        bound = 250 if size_lines >= 200000 else 100
        return "met" if tosa <= bound else "**not met**"
    return ""


def case_table(case, configs):
    size_lines = gen.parse_size(case["size"])
    sums = case["summary"]
    pairs = [(t, u) for t, u in PAIRS if t in configs and u in configs]
    lonely = [c for c in configs if not any(c in p for p in pairs)]
    head = ["metric"]
    for t, u in pairs:
        head += [config_info(t)[3], config_info(u)[3], "ratio", "target"]
    # a variant of a paired tosa configuration: its ratio to that upstream
    vs = {c: next((u for t, u in pairs if t == c.split("/")[0]), None) for c in lonely}
    for c in lonely:
        head += [config_info(c)[3]] + (["ratio"] if vs[c] else [])
    out = ["| " + " | ".join(head) + " |",
           "|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|"]
    for key, label, f, kind in ROWS:
        row = [label]
        for t, u in pairs:
            tv, uv = sums[t].get(key), sums[u].get(key)
            ratio = "%.2f×" % (tv / uv) if tv is not None and uv and tv >= 1 and uv >= 1 \
                or key == "server_cpu_s" and tv and uv else "–"
            if kind is None:
                ratio = ratio if key.endswith("_ms") and "busy" not in key \
                    or key == "server_cpu_s" else "–"
            target = ""
            if kind == "open":
                target = "≤ 0.8×: " + judge(kind, tv, uv, size_lines)
            elif kind == "edit":
                target = "≤ 0.5×: " + judge(kind, tv, uv, size_lines)
            elif kind == "stall":
                target = "≤ %d ms: %s" % (250 if size_lines >= 200000 else 100,
                                          judge(kind, tv, uv, size_lines))
            row += [fmt(tv, f), fmt(uv, f), ratio, target]
        for c in lonely:
            row.append(fmt(sums[c].get(key), f))
            if vs[c]:
                cv, uv = sums[c].get(key), sums[vs[c]].get(key)
                row.append("%.2f×" % (cv / uv) if cv is not None and uv and cv >= 1 and uv >= 1
                           and (kind is not None or key.endswith("_ms") and "busy" not in key
                                or key == "server_cpu_s") else "–")
        out.append("| " + " | ".join(row) + " |")
    return "\n".join(out)


def document(results):
    m = results["machine"]
    lines = ["Generated by `%s` on %s." % (results["command"], results["date"]), "",
             "Machine: %s, %s cores; load average %s at start, %s at end. tosa-lsp %s." % (
                 m["cpu"], m["cores"], m["load_start"], m.get("load_end", "?"), m["commit"]
                 + (" with settings `%s`" % m["tosa_settings"] if m.get("tosa_settings") else "")), ""]
    for name, opts in sorted((m.get("variants") or {}).items()):
        lines += ["Variant `%s`: plugin options `%s`." % (name, json.dumps(opts)), ""]
    configs = results["configs"]
    for case in results["cases"]:
        lines.append("### %s lines, shape `%s` (%d runs per configuration, medians)" % (
            case["size"], case["shape"], results["runs"]))
        lines.append("")
        if case.get("failure"):
            lines += ["**failed**: " + case["failure"], ""]
            continue
        lines.append(case_table(case, configs))
        lines.append("")
        e = case["edit"]
        lines.append("- the edit: line %d, `%s` → `%s`; mlir-opt-22: %s" % (
            e["line"] + 1, e["before"].strip()[:90], e["after"].strip()[:90],
            e.get("mlir_opt_error", "?").split(": error: ")[-1][:120]))
        for c in configs:
            s = case["summary"][c]
            runs = case["runs"][c]
            lines.append("- %s: open %s ms; edit %s ms; stall open %s / edit %s ms "
                         "(editor running: %s / %s); load %s" % (
                c, " / ".join(fmt(r.get("open_ms"), "%.0f") for r in runs),
                " / ".join(fmt(r.get("edit_ms"), "%.0f") for r in runs),
                " / ".join(fmt(r.get("stall_open_ms"), "%.0f") for r in runs),
                " / ".join(fmt(r.get("stall_edit_ms"), "%.0f") for r in runs),
                " / ".join(fmt(r.get("stall_open_busy_ms"), "%.0f") for r in runs),
                " / ".join(fmt(r.get("stall_edit_busy_ms"), "%.0f") for r in runs),
                " / ".join(r.get("load", "?").split()[0] for r in runs)))
            for err in s["errors"]:
                lines.append("  - **%s failed**: %s" % (c, err.replace("\n", " ")[:400]))
        lines.append("")
    return "\n".join(lines)


def write_results(a, results):
    md = document(results)
    os.makedirs(os.path.dirname(os.path.abspath(a.results)), exist_ok=True)
    with open(a.results, "w", encoding="utf-8") as f:
        f.write(md + "\n")
    with open(os.path.splitext(a.results)[0] + ".json", "w", encoding="utf-8") as f:
        json.dump(results, f, indent=1)
    return md


def main(argv=None):
    a = parse_args(argv)
    configs = [c.strip() for c in a.configs.split(",") if c.strip()]
    for name in a.plugin_opts:
        if name not in configs:
            base = name.split("/")[0]
            at = max([i for i, c in enumerate(configs) if c.split("/")[0] == base], default=len(configs) - 1)
            configs.insert(at + 1, name)
    for c in configs:
        if c.split("/")[0] not in CONFIGS:
            print("unknown configuration %r (one of %s)" % (c, ", ".join(CONFIGS)), file=sys.stderr)
            return 2
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.decode().strip()
    cpu = "?"
    with open("/proc/cpuinfo") as f:
        cpu = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "?")
    results = {"command": " ".join(["python3", "bench/editor/run.py"]
                                   + (sys.argv[1:] if argv is None else argv)),
               "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
               "machine": {"cpu": cpu, "cores": os.cpu_count(), "load_start": loadavg(),
                           "commit": commit or "?", "tosa_settings": a.tosa_settings,
                           "variants": a.plugin_opts,
                           "upstream": shutil.which(a.upstream) or a.upstream,
                           "tosa_lsp": a.tosa_lsp},
               "configs": configs, "runs": a.runs, "cases": []}
    failed = 0
    workdir = tempfile.mkdtemp(prefix="tosa-editor-bench-")
    try:
        for size in a.sizes.split(","):
            for shape in a.shapes.split(","):
                size, shape = size.strip(), shape.strip()
                case = {"size": size, "shape": shape, "runs": {c: [] for c in configs},
                        "load_start": loadavg()}
                results["cases"].append(case)
                log("%s %s: generating and verifying" % (size, shape))
                try:
                    path, edit = make_input(a, size, shape)
                except (RuntimeError, subprocess.TimeoutExpired) as e:
                    case["failure"] = str(e)
                    failed += 1
                    log("FAILED " + str(e))
                    continue
                case["file"], case["edit"] = path, edit
                for i in range(a.runs):
                    for c in configs:
                        r = run_editor(a, c, path, edit, workdir,
                                       "%s-%s-%d" % (size, shape, i + 1))
                        case["runs"][c].append(r)
                        log("%s %s run %d %s: open %s ms, edit %s ms, stall %s/%s ms, "
                            "publish %s diagnostics, load %s%s" % (
                                size, shape, i + 1, c, fmt(r.get("open_ms"), "%.0f"),
                                fmt(r.get("edit_ms"), "%.0f"), fmt(r.get("stall_open_ms"), "%.0f"),
                                fmt(r.get("stall_edit_ms"), "%.0f"),
                                r.get("open_publish_diagnostics", "?"), r["load"].split()[0],
                                (" FAILED " + r["error"][:300]) if "error" in r else ""))
                        if "error" in r:
                            failed += 1
                case["summary"] = {c: summarize(case["runs"][c]) for c in configs}
                case["load_end"] = loadavg()
                results["machine"]["load_end"] = loadavg()
                md = write_results(a, results)  # after every case: a long run can be cut
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    results["machine"]["load_end"] = loadavg()
    md = write_results(a, results)
    print(md)
    print("editor-bench: %s (%d cases, %d failed runs); results in %s" % (
        "FAILED" if failed else "ok", len(results["cases"]), failed, a.results))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
