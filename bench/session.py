"""One measured language-server session over stdio: open, hovers, inlay
hints, edits, memory, close. Used by run.py for tosa-lsp and upstream alike.

The LSP framing and reader thread are test/lit/tools/lsp_client.py's (one
implementation of the protocol in the project); it timestamps each message
when its body has been read, before JSON decoding, so latencies are not
inflated by Python parsing large diagnostics lists.
"""

import json
import os
import random
import re
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "test", "lit", "tools"))
import lsp_client  # noqa: E402  (path set above)
from lsp_client import LspClient, LspTimeout, ServerDied, TextDocument  # noqa: E402

SCREEN = 60  # lines of one editor screenful (inlay hints)
OP_LINE = re.compile(r"^  (%\w+) = (tosa\.\w+)")
# f32 -> f32 unary ops: swapping one for another keeps the file valid and
# the op's types unchanged, so an edit exercises re-analysis, not errors.
SWAPPABLE = re.compile(r"^  %\w+ = tosa\.(exp|log|tanh|sigmoid|erf|ceil|floor|reciprocal|rsqrt) ")


class StepFailed(Exception):
    """A step did not complete; `.kind` is 'timeout' or 'died'."""

    def __init__(self, step, kind, detail):
        super().__init__("%s: %s (%s)" % (step, kind, detail))
        self.step, self.kind, self.detail = step, kind, detail


def proc_status(pid):
    """{'VmRSS': MiB, 'VmHWM': MiB} of a live process (Linux)."""
    out = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(rest.split()[0]) / 1024.0
    return out


def percentile(values, p):
    """Nearest-rank percentile (no interpolation: every value was measured)."""
    if not values:
        return None
    v = sorted(values)
    k = max(int(-(-p * len(v) // 100)) - 1, 0)  # ceil(p/100 * n) - 1
    return v[min(k, len(v) - 1)]


def op_positions(lines, count, from_end):
    """`count` hover positions on op lines near the start or the end,
    alternating between the result SSA name and the op name."""
    order = range(len(lines) - 1, -1, -1) if from_end else range(len(lines))
    out = []
    for i in order:
        m = OP_LINE.match(lines[i])
        if m:
            group = 1 if len(out) % 2 == 0 else 2
            out.append((i, m.start(group) + 1))
            if len(out) == count:
                break
    return out


def spread_positions(lines, count, seed):
    """`count` hover positions on op lines spread evenly over the whole file
    (op names), in a shuffled order: every part of the file, each op
    reached without passing its neighbours first."""
    ops = []
    for i, text in enumerate(lines):
        m = OP_LINE.match(text)
        if m:
            ops.append((i, m.start(2) + 1))
    if not ops:
        return []
    out = [ops[k * len(ops) // count] for k in range(min(count, len(ops)))]
    random.Random(seed).shuffle(out)
    return out


def spread_screens(lines, count, seed):
    """First lines of `count` screens spread evenly over the file, shuffled."""
    last = max(len(lines) - 1 - SCREEN, 0)
    out = sorted({k * last // max(count - 1, 1) for k in range(count)})
    random.Random(seed).shuffle(out)
    return out


def edit_lines(lines, count):
    """`count` swappable op lines in the function holding the file's middle
    line (the edit stays inside one function)."""
    mid = len(lines) // 2
    start = mid
    while start > 0 and not lines[start].startswith("func.func"):
        start -= 1
    out = []
    for i in range(start, len(lines)):
        if lines[i] == "}":
            break
        if SWAPPABLE.match(lines[i]):
            out.append(i)
    # prefer lines from the middle on; fall back to the whole function
    later = [i for i in out if i >= mid]
    return (later + [i for i in out if i < mid])[:count]


class Session:
    """Drives one server; every wait is bounded by `timeout` seconds."""

    def __init__(self, argv, timeout):
        self.timeout = timeout
        self.client = LspClient(argv, default_timeout=timeout)
        self.pid = self.client.proc.pid

    def close(self):
        self.client.kill()

    def guard(self, step, fn, *args):
        """Runs a step, turning the client's exceptions into StepFailed."""
        try:
            return fn(*args)
        except LspTimeout as e:
            raise StepFailed(step, "timeout", str(e))
        except (ServerDied, OSError) as e:
            raise StepFailed(step, "died", str(e)[-1500:])
        except lsp_client.LspError as e:
            raise StepFailed(step, "error", str(e))

    def wait_publish(self, uri, version, since):
        """The first publishDiagnostics for `uri` after notification index
        `since` with this version (or no version: upstream may omit it)."""
        def pred(b):
            if b.get("method") != "textDocument/publishDiagnostics":
                return False
            p = b.get("params", {})
            return p.get("uri") == uri and p.get("version", version) == version
        return self.client.wait_for(pred, self.timeout, since,
                                    "publishDiagnostics of version %d" % version)

    def timed_request(self, method, params):
        """(milliseconds, result) of one request, timed at message arrival."""
        id, t0 = self.client.send_request(method, params)
        msg = self.client.wait_response(id, self.timeout)
        if "error" in msg.body:
            raise lsp_client.LspError(method, msg.body["error"])
        return (msg.time - t0) * 1000.0, msg.body.get("result")

    def open(self, doc):
        since = len(self.client.notifications)
        t0 = self.client.notify("textDocument/didOpen", doc.open_params())
        msg = self.wait_publish(doc.uri, doc.version, since)
        # the payload size (re-encoded compactly) hints at serialization cost
        kib = len(json.dumps(msg.body, separators=(",", ":"))) / 1024.0
        return (msg.time - t0) * 1000.0, len(msg.body["params"]["diagnostics"]), kib

    def hovers(self, doc, positions):
        times, nonempty = [], 0
        for line, col in positions:
            ms, res = self.timed_request("textDocument/hover", doc.position_params(line, col))
            times.append(ms)
            nonempty += bool(res and res.get("contents"))
        return times, nonempty

    def inlays(self, doc, first, repeats):
        rng = {"start": {"line": first, "character": 0},
               "end": {"line": first + SCREEN, "character": 0}}
        times, count = [], 0
        for _ in range(repeats):
            ms, res = self.timed_request("textDocument/inlayHint",
                                         {"textDocument": doc.ident(), "range": rng})
            times.append(ms)
            count = len(res or [])
        return times, count

    def edit(self, doc, line, incremental):
        """Swaps the op name on `line`; ms until diagnostics of the new version."""
        text = doc.lines()[line]
        m = SWAPPABLE.match(text)
        old = "tosa." + m.group(1)
        new = "tosa.log" if old != "tosa.log" else "tosa.exp"
        col = text.index(old)
        change = {"range": {"start": {"line": line, "character": col},
                            "end": {"line": line, "character": col + len(old)}},
                  "text": new}
        params = doc.change_params([change])
        if not incremental:  # full sync: the whole new text
            params["contentChanges"] = [{"text": doc.text}]
        since = len(self.client.notifications)
        t0 = self.client.notify("textDocument/didChange", params)
        msg = self.wait_publish(doc.uri, doc.version, since)
        return (msg.time - t0) * 1000.0

    def rss_after_close(self, doc, baseline, settle=3.0):
        """VmRSS after didClose: the lowest seen while polling up to `settle`
        seconds (freeing may happen on a worker thread)."""
        self.client.notify("textDocument/didClose", {"textDocument": doc.ident()})
        low = proc_status(self.pid)["VmRSS"]
        deadline = time.monotonic() + settle
        while time.monotonic() < deadline and low > baseline + 8:
            time.sleep(0.1)
            low = min(low, proc_status(self.pid)["VmRSS"])
        return low


def shutdown_reaped(client, timeout=10.0):
    """`shutdown`, `exit`, and the exit code and rusage of the server
    (os.wait4: user+sys of the whole process, every thread)."""
    client.request("shutdown", None, timeout)
    client.notify("exit")
    try:
        client.proc.stdin.close()
    except OSError:
        pass
    deadline = time.monotonic() + timeout
    while True:
        pid, status, ru = os.wait4(client.proc.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline:
            client.kill()
            raise LspTimeout("server did not exit within %.0fs after `exit`" % timeout)
        time.sleep(0.005)
    rc = os.waitstatus_to_exitcode(status)
    client.proc.returncode = rc  # reaped here: Popen must not wait again
    return rc, ru


def run_session(argv, path, opts, steps, reap=False):
    """A fresh server: `initialize`, `steps(session, doc, r)`, `shutdown`.
    Returns r ({metric: value}) with 'failure' set (step: kind) when a step
    failed; later steps are skipped. With `reap`, r gets 'cpu_total_s'
    (rusage of the whole process at exit) and 'cpu_after_s' (its part
    after the last /proc sample, r['_cpu_before_shutdown'])."""
    with open(path, encoding="utf-8") as f:
        doc = TextDocument(lsp_client.path_to_uri(path), f.read())
    try:
        s = Session(argv, opts.timeout)
    except OSError as e:
        return {"failure": "start: %s" % e}
    r = {}
    try:
        # --tosa-settings: initializationOptions for tosa-lsp only
        options = getattr(opts, "init_options", {}).get(argv[0])
        s.guard("initialize", s.client.initialize, None, options)
        steps(s, doc, r)
        if reap:
            rc, ru = s.guard("shutdown", shutdown_reaped, s.client)
            r["cpu_total_s"] = ru.ru_utime + ru.ru_stime
            r["cpu_sys_s"] = ru.ru_stime
            r["minor_faults"] = ru.ru_minflt
            r["rss_max_mib"] = ru.ru_maxrss / 1024.0
            r["cpu_after_s"] = r["cpu_total_s"] - r.pop("_cpu_before_shutdown", r["cpu_total_s"])
        else:
            rc = s.guard("shutdown", s.client.shutdown)
        if rc != 0:
            r["failure"] = "shutdown: exit code %d" % rc
    except StepFailed as e:
        r["failure"] = "%s: %s" % (e.step, e.kind)
        r["failure_detail"] = e.detail
    except (FileNotFoundError, KeyError) as e:  # /proc entry gone or a zombie: died
        r["failure"] = "died (no memory figures: %s)" % e
    finally:
        s.close()
    return r


def measure_open(argv, path, opts):
    """Only the open: {'open_ms': ms}, or 'failure'. An open is the one
    figure a whole session measures once; these give its median more
    samples (see run.py --open-runs)."""
    def steps(s, doc, r):
        r["open_ms"], _, _ = s.guard("open", s.open, doc)
    return run_session(argv, path, opts, steps)


def cpu_seconds(pid):
    """user+sys CPU seconds of a live process, all its threads (clock ticks
    from /proc/PID/stat: 10 ms resolution)."""
    with open("/proc/%d/stat" % pid) as f:
        data = f.read()
    fields = data[data.rfind(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / float(os.sysconf("SC_CLK_TCK"))


def wait_idle(pid, quiet=0.3, limit=5.0, poll=0.1):
    """Waits until the process has used no CPU for `quiet` seconds (its
    background work is done), at most `limit` seconds; returns the wait."""
    t0 = time.monotonic()
    last, still = cpu_seconds(pid), 0.0
    while time.monotonic() - t0 < limit and still < quiet:
        time.sleep(poll)
        now = cpu_seconds(pid)
        still = still + poll if now == last else 0.0
        last = now
    return time.monotonic() - t0


def function_of_lines(lines):
    """For every line, the index of the function it is in (-1 before the first)."""
    out, f = [], -1
    for text in lines:
        if text.startswith("func.func"):
            f += 1
        out.append(f)
    return out


def measure_cpu(argv, path, opts):
    """The server's CPU time for one user session: start (initialize),
    open until the diagnostics, `opts.cpu_hovers` hovers on op names spread
    over the file right after them (in shuffled order: most of them the
    first hover in their function on a many-function file), then, once the
    server is idle (its deferred work done, `wait_idle`), shutdown and exit.
    The total is the reaped process's rusage (user+sys, every thread, also
    work done after the last request); the parts are /proc/PID/stat
    samples. Also the hovers' latencies, split by first-in-function."""
    def steps(s, doc, r):
        lines = doc.lines()
        r["cpu_start_s"] = cpu_seconds(s.pid)
        s.guard("open", s.open, doc)
        r["cpu_open_s"] = cpu_seconds(s.pid) - r["cpu_start_s"]
        pos = spread_positions(lines, opts.cpu_hovers, opts.seed)
        funcs = function_of_lines(lines)
        seen, first, later, every_in_order = set(), [], [], []
        c0 = cpu_seconds(s.pid)
        for line, col in pos:
            ms, _ = s.guard("hover", s.timed_request, "textDocument/hover",
                            doc.position_params(line, col))
            every_in_order.append(ms)
            (later if funcs[line] in seen else first).append(ms)
            seen.add(funcs[line])
        r["cpu_hovers_s"] = cpu_seconds(s.pid) - c0
        every = first + later
        r["hover_cold_p50"] = percentile(every, 50)
        r["hover_cold_p95"] = percentile(every, 95)
        r["hover_first_p95"] = percentile(first, 95)
        r["hover_first_max"] = max(first) if first else None
        r["hover_first_count"] = len(first)
        # The session's first request waits for whatever the open left
        # (with a clean publish on MLIR's verdict, the rest of the
        # analysis): apart, as the full run's "first hover, sent on the
        # diagnostics".
        r["hover_on_diagnostics"] = every_in_order[0] if every_in_order else None
        r["hover_first_p95_later"] = percentile(first[1:], 95) if len(first) > 1 else None
        c1 = cpu_seconds(s.pid)
        r["cpu_idle_wait_s"] = wait_idle(s.pid, limit=opts.cpu_settle)
        r["_cpu_before_shutdown"] = cpu_seconds(s.pid)
        r["cpu_background_s"] = r["_cpu_before_shutdown"] - c1
    return run_session(argv, path, opts, steps, reap=True)


def measure(argv, path, opts):
    """Every step on one fresh server (see run_session)."""
    def steps(s, doc, r):
        lines = doc.lines()
        caps = s.client.capabilities
        sync = caps.get("textDocumentSync", 1)
        incremental = (sync.get("change") if isinstance(sync, dict) else sync) == 2
        r["sync"] = "incremental" if incremental else "full"
        r["rss_baseline"] = proc_status(s.pid)["VmRSS"]
        r["open_ms"], r["diagnostics"], r["diagnostics_kib"] = s.guard("open", s.open, doc)
        for where, from_end in (("start", False), ("end", True)):
            pos = op_positions(lines, opts.hovers, from_end)
            times, nonempty = s.guard("hover " + where, s.hovers, doc, pos)
            if where == "start":
                # The first request on the diagnostics: what a p95 of 30
                # leaves out (it waits for whatever the open left behind).
                r["hover_first_after_open"] = times[0] if times else None
            r["hover_%s_p50" % where] = percentile(times, 50)
            r["hover_%s_p95" % where] = percentile(times, 95)
            r["hover_%s_nonempty" % where] = "%d/%d" % (nonempty, len(times))
        if caps.get("inlayHintProvider"):
            # the last screen ends on the last line (the text ends with '\n')
            for where, first in (("start", 0), ("end", max(len(lines) - 1 - SCREEN, 0))):
                times, count = s.guard("inlay " + where, s.inlays, doc, first, opts.inlays)
                r["inlay_%s_p50" % where] = percentile(times, 50)
                r["inlay_%s_p95" % where] = percentile(times, 95)
                r["inlay_%s_count" % where] = count
        if opts.across:
            # Positions all over the file, after a pause: a user scrolls or
            # jumps there before hovering (the servers' work after the open
            # counts for them as it would for a user).
            time.sleep(opts.across_pause)
            pos = spread_positions(lines, opts.across, opts.seed)
            times, nonempty = s.guard("hover across", s.hovers, doc, pos)
            r["hover_across_p50"] = percentile(times, 50)
            r["hover_across_p95"] = percentile(times, 95)
            r["hover_across_nonempty"] = "%d/%d" % (nonempty, len(times))
            if caps.get("inlayHintProvider"):
                times = []
                for first in spread_screens(lines, max(opts.across // 6, 2), opts.seed):
                    t, _ = s.guard("inlay across", s.inlays, doc, first, 1)
                    times += t
                r["inlay_across_p50"] = percentile(times, 50)
                r["inlay_across_p95"] = percentile(times, 95)
        edits = [s.guard("edit", s.edit, doc, line, incremental)
                 for line in edit_lines(lines, opts.edits)]
        r["edit_ms"] = sorted(edits)[len(edits) // 2] if edits else None
        r["rss_peak"] = proc_status(s.pid)["VmHWM"]
        r["rss_after_close"] = s.guard("close", s.rss_after_close, doc, r["rss_baseline"],
                                       opts.settle)
    return run_session(argv, path, opts, steps)
