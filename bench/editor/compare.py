#!/usr/bin/env python3
"""A before/after summary of two editor-bench results (bench/editor/run.py
JSON files): for every (size, shape) in both, each editor's tosa-lsp and
upstream medians and their ratio, before and after.

    python3 bench/editor/compare.py BEFORE.json AFTER.json > summary.md
"""

import json
import sys

ROWS = [
    ("open_ms", "open → shown (ms)"),
    ("edit_ms", "typed → error shown (ms)"),
    ("stall_open_ms", "stall, open (ms)"),
    ("stall_open_busy_ms", "  editor running (ms)"),
    ("stall_edit_ms", "stall, after the edit (ms)"),
    ("stall_edit_busy_ms", "  editor running (ms)"),
    ("open_publish_kib", "publish at open (KiB)"),
    ("edit_publish_kib", "publish after the edit (KiB)"),
    ("server_cpu_s", "server CPU, session (s)"),
]
PAIRS = (("Neovim", "nvim-tosa", "nvim-upstream"), ("Vim", "vim-tosa", "vim-upstream"))


def cases(path):
    with open(path, encoding="utf-8") as f:
        r = json.load(f)
    return r, {(c["size"], c["shape"]): c for c in r["cases"] if "summary" in c}


def cell(case, config, key):
    if case is None or config not in case["summary"]:
        return None
    return case["summary"][config].get(key)


def fmt(v, key):
    if v is None:
        return "–"
    if key.endswith("_s"):
        return "%.2f" % v
    if key.endswith("_kib"):
        return "%.1f" % v if v < 100 else "{:,.0f}".format(v)
    return "%.0f" % v


def ratio(t, u, key=""):
    small = 0 if key.endswith("_s") else 0.5  # a few ms say nothing
    return "%.2f×" % (t / u) if t is not None and u and t >= small and u >= small else "–"


def main(argv):
    rb, before = cases(argv[0])
    ra, after = cases(argv[1])
    out = ["Before: `%s` (load %s → %s); after: `%s` (load %s → %s)." % (
        rb["command"], rb["machine"]["load_start"], rb["machine"].get("load_end", "?"),
        ra["command"], ra["machine"]["load_start"], ra["machine"].get("load_end", "?")), ""]
    for key in sorted(after, key=lambda k: (int(float(k[0].rstrip("k")) * 1000), k[1])):
        b, a = before.get(key), after[key]
        out += ["#### %s lines, `%s`" % key, "",
                "| | " + " | ".join("%s: tosa-lsp before | after | upstream | ratio before | ratio after" % e
                                    for e, _, _ in PAIRS) + " |",
                "|---|" + "---:|" * (5 * len(PAIRS))]
        for k, label in ROWS:
            row = [label]
            for _, t, u in PAIRS:
                tb, ta, ua, ub = cell(b, t, k), cell(a, t, k), cell(a, u, k), cell(b, u, k)
                if k.endswith("_kib") or "busy" in k:
                    row += [fmt(tb, k), fmt(ta, k), fmt(ua, k), "–", "–"]
                else:
                    row += [fmt(tb, k), fmt(ta, k), fmt(ua, k), ratio(tb, ub, k), ratio(ta, ua, k)]
            out.append("| " + " | ".join(row) + " |")
        out.append("")
    print("\n".join(out))


if __name__ == "__main__":
    main(sys.argv[1:])
