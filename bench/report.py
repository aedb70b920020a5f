"""Medians over runs, the Markdown results table and the issue's targets."""

import json
import math
import sys

TOSA, UPSTREAM = "tosa-lsp", "upstream"
NO_RATIO = {"diagnostics", "diagnostics_kib"}  # upstream sends none: a ratio says nothing
AFTER_CLOSE_SLACK_MIB = 32  # "back to baseline": allocator slack we tolerate


def median(values):
    nums = sorted(v for v in values if isinstance(v, (int, float)))
    if not nums:
        return None
    n = len(nums)
    return nums[n // 2] if n % 2 else (nums[n // 2 - 1] + nums[n // 2]) / 2.0


def summarize(runs):
    """{metric: median over runs} plus 'failures' (one string per failed run)."""
    keys = sorted({k for r in runs for k in r})
    out = {k: median([r.get(k) for r in runs]) for k in keys
           if any(isinstance(r.get(k), (int, float)) for r in runs)}
    for k in keys:  # text fields (sync kind, hover hit counts): the first run's
        if k not in out and not k.startswith("failure"):
            out[k] = next(r[k] for r in runs if k in r)
    out["failures"] = [r["failure"] for r in runs if "failure" in r]
    return out


def opens(case, name):
    """Every open → diagnostics time of `name` in run order: the full
    runs', then the open-only runs' (run.py --open-runs)."""
    return [r["open_ms"] for key in ("runs", "open_runs")
            for r in case.get(key, {}).get(name, []) if r.get("open_ms") is not None]


def case_summary(case):
    """Medians of a case's runs; the open's over every open of the server."""
    out = {}
    for name in (TOSA, UPSTREAM):
        out[name] = summarize(case["runs"][name])
        out[name]["open_ms"] = median(opens(case, name))
        out[name]["failures"] += [
            "open-only run: " + r["failure"]
            for r in case.get("open_runs", {}).get(name, []) if "failure" in r]
        cpu = case.get("cpu_runs", {}).get(name, [])
        if cpu:
            c = summarize(cpu)
            out[name]["failures"] += ["CPU run: " + f for f in c.pop("failures")]
            out[name].update(c)
    out["cli"] = {k: summarize(v) for k, v in case["cli_runs"].items()}
    return out


# (label, metric, unit, how the target is judged); `ratio:X` means
# tosa-lsp <= X * upstream, `abs:X` tosa-lsp <= X, `edit` the shape rule.
ROWS = [
    ("open → diagnostics", "open_ms", "ms", "ratio:0.8"),
    ("diagnostics sent", "diagnostics", "", None),
    ("size of that publish", "diagnostics_kib", "KiB", None),
    ("first hover, sent on the diagnostics", "hover_first_after_open", "ms", None),
    ("hover p50, start", "hover_start_p50", "ms", None),
    ("hover p95, start", "hover_start_p95", "ms", "abs:1"),
    ("hover p50, end", "hover_end_p50", "ms", None),
    ("hover p95, end", "hover_end_p95", "ms", "abs:1"),
    ("inlay hints p50, start screen", "inlay_start_p50", "ms", None),
    ("inlay hints p95, start screen", "inlay_start_p95", "ms", "abs:1"),
    ("inlay hints p50, end screen", "inlay_end_p50", "ms", None),
    ("inlay hints p95, end screen", "inlay_end_p95", "ms", "abs:1"),
    ("hover p50, across the file", "hover_across_p50", "ms", None),
    ("hover p95, across the file", "hover_across_p95", "ms", "abs:1"),
    ("inlay hints p50, screens across the file", "inlay_across_p50", "ms", None),
    ("inlay hints p95, screens across the file", "inlay_across_p95", "ms", "abs:1"),
    ("edit → diagnostics", "edit_ms", "ms", "edit"),
    ("server CPU: start, open, diagnostics, hovers, shutdown", "cpu_total_s", "s", "ratio:0.8"),
    ("  start (initialize)", "cpu_start_s", "s", None),
    ("  open → diagnostics", "cpu_open_s", "s", None),
    ("  hovers across the file, right after", "cpu_hovers_s", "s", None),
    ("  after them until idle (deferred work)", "cpu_background_s", "s", None),
    ("  shutdown and exit", "cpu_after_s", "s", None),
    ("hover p95, those hovers", "hover_cold_p95", "ms", "abs:1"),
    ("hover p95, first hover in a function", "hover_first_p95", "ms", "abs:1"),
    ("hover max, first hover in a function", "hover_first_max", "ms", None),
    ("  the first of those, sent on the diagnostics", "hover_on_diagnostics", "ms", None),
    ("  p95 of the later first hovers in a function", "hover_first_p95_later", "ms", "abs:1"),
    ("peak RSS (VmHWM)", "rss_peak", "MiB", "ratio:1"),
    ("RSS before open", "rss_baseline", "MiB", None),
    ("RSS after close", "rss_after_close", "MiB", "closed"),
]


def fmt(v, unit=""):
    if v is None:
        return "–"
    if isinstance(v, str):
        return v
    if unit == "s":
        return "{:.3f}".format(v)
    if unit in ("MiB", "") or abs(v) >= 100:
        return "{:,.0f}".format(v)
    return "{:.1f}".format(v) if abs(v) >= 10 else "{:.2f}".format(v)


def ratio(a, b):
    return a / b if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b > 0 else None


def judge(rule, shape, t, u, tosa):
    """(target text, 'met' / 'not met' / '–') for one row."""
    if rule is None:
        return "", ""
    kind, _, x = rule.partition(":")
    if kind == "edit":
        if shape == "multi":
            kind, x = "abs", "100"
        else:
            kind, x = "ratio", "1"
    if kind == "closed":
        text = "≤ baseline + %d MiB" % AFTER_CLOSE_SLACK_MIB
        ok = None if t is None else t <= tosa.get("rss_baseline", 0) + AFTER_CLOSE_SLACK_MIB
    elif kind == "ratio":
        text = "≤ %s× upstream" % x
        q = ratio(t, u)
        ok = None if q is None else q <= float(x)
    else:
        text = "≤ %s ms" % x
        ok = None if t is None else t <= float(x)
    return text, "–" if ok is None else ("met" if ok else "**not met**")


def table(case):
    """The Markdown table of one (size, shape) case."""
    tosa, up = case["summary"][TOSA], case["summary"][UPSTREAM]
    n = case["runs_requested"]
    k = max(len(opens(case, TOSA)), len(opens(case, UPSTREAM)))
    out = ["### %s lines, shape `%s` (%s%s)" % (
        case["size"], case["shape"], "1 run" if n == 1 else "%d runs, medians" % n,
        "; the open's median over %d opens" % k if k > n else ""), "",
        "| metric | tosa-lsp | mlir-lsp-server-22 | ratio | target | |",
        "|---|---:|---:|---:|---|---|"]
    for label, key, unit, rule in ROWS:
        t, u = tosa.get(key), up.get(key)
        if key == "edit_ms":
            label += " (%s vs %s sync)" % (tosa.get("sync", "?"), up.get("sync", "?"))
        target, met = judge(rule, case["shape"], t, u, tosa)
        q = None if key in NO_RATIO else ratio(t, u)
        out.append("| %s%s | %s | %s | %s | %s | %s |" % (
            label, " (%s)" % unit if unit else "", fmt(t, unit), fmt(u, unit),
            "–" if q is None else "%.2f×" % q, target, met))
    cli = case["summary"]["cli"]
    c, m = cli["check"].get("ms"), cli["mlir-opt"].get("ms")
    target, met = judge("ratio:1", case["shape"], c, m, tosa)
    target = target.replace("upstream", "mlir-opt-22")
    q = ratio(c, m)
    out.append("| `check` vs `mlir-opt-22` wall (ms) | %s | %s | %s | %s | %s |" % (
        fmt(c), fmt(m), "–" if q is None else "%.2f×" % q, target, met))
    c, m = cli["check"].get("rss_mib"), cli["mlir-opt"].get("rss_mib")
    q = ratio(c, m)
    out.append("| `check` vs `mlir-opt-22` peak RSS (MiB) | %s | %s | %s | | |" % (
        fmt(c, "MiB"), fmt(m, "MiB"), "–" if q is None else "%.2f×" % q))
    notes = []
    for name, s in ((TOSA, tosa), (UPSTREAM, up)):
        for f in s.get("failures", []):
            notes.append("- **%s failed**: %s" % (name, f))
        if s.get("hover_start_nonempty"):
            notes.append("- %s hovers with content: start %s, end %s, across %s" % (
                name, s["hover_start_nonempty"], s.get("hover_end_nonempty", "–"),
                s.get("hover_across_nonempty", "–")))
        if s.get("inlay_start_count") is not None:
            notes.append("- %s inlay hints per screen: start %s, end %s" % (
                name, fmt(s["inlay_start_count"], ""), fmt(s.get("inlay_end_count"), "")))
    # The medians' spread: on a shared 2-core host one run's open can take
    # half as long again as another's.
    each = []
    for name in (TOSA, UPSTREAM):
        ms = opens(case, name)
        if len(ms) > 1:
            each.append("%s %s" % (name, " / ".join(fmt(v) for v in ms)))
    if each:
        notes.append("- open → diagnostics of each run (ms; full runs, then "
                     "open-only runs): " + "; ".join(each))
    each = []
    for name in (TOSA, UPSTREAM):
        runs = [r for r in case.get("cpu_runs", {}).get(name, []) if "cpu_total_s" in r]
        if runs:
            each.append("%s %s" % (name, " / ".join("%.3f" % r["cpu_total_s"] for r in runs)))
    if each:
        first = [r.get("hover_first_count") for n in (TOSA, UPSTREAM)
                 for r in case.get("cpu_runs", {}).get(n, [])[:1]]
        notes.append("- server CPU of each run (s, user+sys, alternating): " + "; ".join(each)
                     + " (%s of the hovers first in their function)" % (first[0] if first else "?"))
    for f in case.get("failures", []):
        notes.append("- **failed**: %s" % f)
    return "\n".join(out + ([""] + notes if notes else []))


# Scaling: each step's growth exponent between two sizes, log(v2/v1) /
# log(n2/n1): 1 is linear, below it fixed costs dominate, above it the
# step grows faster than the file. Judged with some slack for noise.
SCALING_MAX_EXPONENT = 1.2
SCALING_ROWS = [
    ("open → diagnostics (ms)", lambda s, c: s.get("open_ms")),
    ("edit → diagnostics (ms)", lambda s, c: s.get("edit_ms")),
    ("peak RSS above the baseline (MiB)",
     lambda s, c: None if s.get("rss_peak") is None or s.get("rss_baseline") is None
     else s["rss_peak"] - s["rss_baseline"]),
    ("hover p95, end (ms)", lambda s, c: s.get("hover_end_p95")),
    ("inlay hints p95, end screen (ms)", lambda s, c: s.get("inlay_end_p95")),
    ("hover p95, across the file (ms)", lambda s, c: s.get("hover_across_p95")),
]


def lines_of(size):
    """'10k' -> 10000, '1.5k' -> 1500, '600' -> 600."""
    size = str(size)
    return int(float(size[:-1]) * 1000) if size.endswith("k") else int(size)


def exponent(n1, v1, n2, v2):
    if not all(isinstance(v, (int, float)) and v > 0 for v in (v1, v2)) or n1 == n2:
        return None
    return math.log(v2 / v1) / math.log(n2 / n1)


def scaling(results):
    """Per shape with at least two sizes: each step's values and growth
    exponents from size to size, for both servers (and check / mlir-opt)."""
    out = []
    for shape in sorted({c["shape"] for c in results["cases"]}):
        cases = sorted((c for c in results["cases"] if c["shape"] == shape),
                       key=lambda c: lines_of(c["size"]))
        if len(cases) < 2:
            continue
        sizes = [c["size"] for c in cases]
        steps = ["%s→%s" % (a, b) for a, b in zip(sizes, sizes[1:])]
        out += ["### Scaling, shape `%s`" % shape, "",
                "Growth exponent of each step from one size to the next: "
                "log(value ratio) / log(size ratio); 1 is linear. "
                "Target: ≤ %.1f (linear, with slack for noise)." % SCALING_MAX_EXPONENT, "",
                "| step | program | %s | %s | |" % (
                    " | ".join(sizes), " | ".join("exponent " + s for s in steps)),
                "|---|---|" + "---:|" * (len(sizes) + len(steps)) + "---|"]
        rows = []
        for label, get in SCALING_ROWS:
            for who in (TOSA, UPSTREAM):
                rows.append((label, who, [get(c["summary"][who], c) for c in cases]))
        for name, label in (("check", "`check`"), ("mlir-opt", "mlir-opt-22")):
            rows.append(("check wall (ms)", label,
                         [c["summary"]["cli"][name].get("ms") for c in cases]))
        for label, who, values in rows:
            exps = [exponent(lines_of(a["size"]), x, lines_of(b["size"]), y)
                    for a, b, x, y in zip(cases, cases[1:], values, values[1:])]
            judged = who in (TOSA, "`check`") and any(e is not None for e in exps)
            verdict = ""
            if judged:
                verdict = "met" if all(e is None or e <= SCALING_MAX_EXPONENT
                                       for e in exps) else "not met"
            out.append("| %s | %s | %s | %s | %s |" % (
                label, who, " | ".join(fmt(v, "ms") for v in values),
                " | ".join("–" if e is None else "%.2f" % e for e in exps), verdict))
        out.append("")
    return "\n".join(out)


def document(results):
    """The whole results.md."""
    m = results["machine"]
    head = [
        "# tosa-lsp benchmark results", "",
        "Generated by `%s` on %s." % (results["command"], results["date"]), "",
        "Machine: %s, %s cores, %s MiB RAM; load average %s at start, %s at end "
        "(other processes sharing the machine inflate every figure alike)." % (
            m["cpu"], m["cores"], m["mem_mib"], m["load_start"], m.get("load_end", "?")),
        "tosa-lsp %s%s; upstream `%s`." % (
            m["tosa_lsp_commit"],
            " with settings `%s`" % m["tosa_settings"] if m.get("tosa_settings") else "",
            m["upstream"]), "",
        "Ratios are tosa-lsp / upstream (lower is better for tosa-lsp). "
        "`–`: not measured or not supported.", ""]
    scale = scaling(results)
    return "\n".join(head + ["\n\n".join(table(c) for c in results["cases"]), ""]
                     + (["", scale] if scale else []))


if __name__ == "__main__":
    # Re-renders the Markdown from a results JSON (no re-run needed).
    with open(sys.argv[1], encoding="utf-8") as f:
        sys.stdout.write(document(json.load(f)))
