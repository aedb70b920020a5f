"""Wall time and peak RSS of one command-line run (`tosa-lsp check` and
`mlir-opt-22` on the same file).

The command runs under a small helper process (this file as a script).
Linux carries a process's peak-RSS record across fork and exec, so a child
forked straight from the driver (which holds hundreds of MiB of decoded
diagnostics at 200k lines) would report the driver's peak, not its own.
The helper is small when it forks, and reads its children's peak
(RUSAGE_CHILDREN), which its own size does not enter.
"""

import json
import os
import resource
import subprocess
import sys
import threading
import time


def run_timed(argv, timeout):
    """{'ms', 'rss_mib', 'rc'} of one run of `argv`; rc is 'timeout' when
    killed, or the helper's complaint when the command cannot start."""
    p = subprocess.run([sys.executable, os.path.abspath(__file__), str(timeout)] + list(argv),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        return json.loads(p.stdout.decode())
    except ValueError:
        return {"rc": "helper failed: %s" % p.stderr.decode("utf-8", "replace")[-500:]}


def check_argv(tosa_lsp, path):
    return [tosa_lsp, "check", path]


def mlir_opt_argv(mlir_opt, path):
    return [mlir_opt, "--split-input-file", "--allow-unregistered-dialect", path,
            "-o", "/dev/null"]


def _helper(timeout, argv):
    t0 = time.monotonic()
    try:
        p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except OSError as e:
        return {"rc": "cannot start: %s" % e}
    # A blocking wait, ended by a timer on timeout: Popen.wait(timeout)
    # polls with sleeps growing to 50 ms, which rounded a 65 ms run up to
    # 64 or 114 ms (the polls at 63.5 and 113.5 ms), and every mlir-opt run
    # at 10k lines to 114.
    expired = []

    def kill():
        expired.append(True)
        p.kill()

    timer = threading.Timer(timeout, kill)
    timer.start()
    try:
        rc = p.wait()
    finally:
        timer.cancel()
    ms = (time.monotonic() - t0) * 1000.0
    if expired:
        rc = "timeout"
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0  # KiB -> MiB
    return {"ms": ms, "rss_mib": peak, "rc": rc}


if __name__ == "__main__":
    print(json.dumps(_helper(float(sys.argv[1]), sys.argv[2:])))
