"""Wall time and peak RSS of one command-line run (`tosa-lsp check` and
`mlir-opt-22` on the same file)."""

import os
import subprocess
import threading
import time


def run_timed(argv, timeout):
    """{'ms', 'rss_mib', 'rc'} of one run; rc is 'timeout' when killed.

    os.wait4 gives the child's own rusage (ru_maxrss, KiB on Linux), so the
    peak RSS is that process's and not the maximum over all our children."""
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    killed = []

    def kill():
        killed.append(True)
        p.kill()

    timer = threading.Timer(timeout, kill)
    timer.start()
    try:
        _, status, usage = os.wait4(p.pid, 0)
    finally:
        timer.cancel()
    ms = (time.monotonic() - t0) * 1000.0
    p.returncode = os.waitstatus_to_exitcode(status)  # keep Popen from waiting again
    rc = "timeout" if killed else p.returncode
    return {"ms": ms, "rss_mib": usage.ru_maxrss / 1024.0, "rc": rc}


def check_argv(tosa_lsp, path):
    return [tosa_lsp, "check", path]


def mlir_opt_argv(mlir_opt, path):
    return [mlir_opt, "--split-input-file", "--allow-unregistered-dialect", path,
            "-o", "/dev/null"]
