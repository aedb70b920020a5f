#!/usr/bin/env python3
"""Runs a baseline command and a command under test, each alone, prints the
second one's output and checks that its peak RSS exceeds the first's by at
most --max-mib MiB + --per-byte x the size of --input (issue 44, item 6: one
document costs at most 64 MiB + 100x its size).

Usage: peak_rss.py --input FILE [--max-mib 64] [--per-byte 100]
                   --baseline CMD... -- CMD...
Prints `peak-rss: ok (+N KiB of M allowed), exit E` or `peak-rss: FAIL ...`.
"""
import argparse
import os
import subprocess
import sys


def peak_kib(cmd):
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = p.stdout.read().decode(errors="replace")
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_maxrss, p.returncode, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--input", required=True)
    ap.add_argument("--max-mib", type=int, default=64)
    ap.add_argument("--per-byte", type=int, default=100)
    ap.add_argument("--baseline", nargs="+", required=True)
    ap.add_argument("cmd", nargs="+")
    args = ap.parse_args()
    base, _, _ = peak_kib(args.baseline)
    peak, code, err = peak_kib(args.cmd)
    allowed = args.max_mib * 1024 + args.per_byte * os.path.getsize(args.input) // 1024
    sys.stdout.write(err)
    verdict = "ok" if peak - base <= allowed else "FAIL"
    print("peak-rss: %s (+%d KiB of %d allowed), exit %d" % (verdict, peak - base, allowed, code))


if __name__ == "__main__":
    main()
