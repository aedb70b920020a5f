#!/usr/bin/env python3
"""A transparent stdio wrapper around a language server that logs every
LSP message's size and time (see bench/editor/README.md).

    lsp_tap.py LOG -- SERVER [ARGS...]

The editor starts this instead of the server. Bytes are forwarded as soon
as they are read, in both directions; the framing is parsed on the side so
each complete message gets one JSON line in LOG:

    {"dir": "c2s"|"s2c", "t": wall-clock seconds when its last byte was
     forwarded, "bytes": body size, "method": ..., "id": ..., "version": ...,
     "diagnostics": count (publishDiagnostics only)}

with "t0", when its first byte was read (a big didOpen arrives over tens of
milliseconds: its first byte is when the editor began writing it); first
{"start": t} (the tap running) and {"spawned": t} (the server started);
and, when the server exits, {"exit": code, "utime": s, "stime": s} (the
server's own CPU time, all threads, from wait4). With TAP_STDERR=1 in the
environment the server's stderr is logged too, a line a record
{"stderr": text, "t": when it was read} (tosa-lsp's TOSA_LSP_TIMING=1
phase times, each printed when its phase ends, line up with the rest).
Wall-clock time, because the editors' clocks (Vim's reltime(), Neovim's
gettimeofday) are.
Only standard library; no JSON decoding of bodies (a 50k-line publish is
1.8 MB): the method, id and version come from a regular expression, the
diagnostics count from the number of "severity" keys.
"""

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

METHOD = re.compile(rb'"method"\s*:\s*"([^"]+)"')
ID = re.compile(rb'"id"\s*:\s*("?[\w-]+"?)')
VERSION = re.compile(rb'"version"\s*:\s*(-?\d+)')


class Log:
    def __init__(self, path):
        self.f = open(path, "a", buffering=1)
        self.lock = threading.Lock()

    def write(self, rec):
        line = json.dumps(rec, separators=(",", ":"))
        with self.lock:
            self.f.write(line + "\n")


class Framer:
    """Incremental Content-Length parser; calls on_message(body, t)."""

    def __init__(self, on_message):
        self.buf = bytearray()
        self.need = None  # body length once the header is parsed
        self.on_message = on_message
        self.first = None  # when the first byte of the message in progress came

    def feed(self, data, t):
        if self.first is None and data:
            self.first = t
        self.buf += data
        while True:
            if self.need is None:
                end = self.buf.find(b"\r\n\r\n")
                if end < 0:
                    return
                m = re.search(rb"(?i)content-length:\s*(\d+)", bytes(self.buf[:end]))
                del self.buf[:end + 4]
                self.need = int(m.group(1)) if m else 0
            if len(self.buf) < self.need:
                return
            body = bytes(self.buf[:self.need])
            del self.buf[:self.need]
            self.need = None
            self.on_message(body, t, self.first)
            # what is left of this read starts the next message
            self.first = t if self.buf else None


def describe(direction, body, t, first):
    rec = {"dir": direction, "t": round(t, 6), "t0": round(first, 6), "bytes": len(body)}
    # The method/id/version keys of a message are near its start or end;
    # a didOpen's text can be 20 MB, so only look there.
    edges = body[:400] + b" " + body[-400:]
    m = METHOD.search(edges)
    if m:
        # (Neovim's encoder writes "textDocument\/didOpen")
        rec["method"] = m.group(1).decode("utf-8", "replace").replace("\\/", "/")
    m = ID.search(edges)
    if m:
        rec["id"] = m.group(1).decode().strip('"')
    m = VERSION.search(edges)
    if m:
        rec["version"] = int(m.group(1))
    if rec.get("method") == "textDocument/publishDiagnostics":
        rec["diagnostics"] = body.count(b'"severity"')
    return rec


def pump(src_fd, dst_fd, framer, close_dst=None):
    while True:
        try:
            data = os.read(src_fd, 1 << 16)
        except OSError:
            data = b""
        if not data:
            break
        # Logged before it is forwarded: a reply (here `cat`'s echo) can
        # be read and logged by the other pump before this one's record.
        framer.feed(data, time.time())
        view = memoryview(data)
        try:
            while view:
                n = os.write(dst_fd, view)
                view = view[n:]
        except OSError:
            break
    if close_dst:
        close_dst()


def main(argv):
    if len(argv) < 3 or argv[1] != "--":
        print("usage: lsp_tap.py LOG -- SERVER [ARGS...]", file=sys.stderr)
        return 2
    log = Log(argv[0])
    log.write({"start": round(time.time(), 6)})
    cmd = argv[2:]
    want_stderr = os.environ.get("TAP_STDERR", "") not in ("", "0")
    try:
        child = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0,
                                 stderr=subprocess.PIPE if want_stderr else None)
    except OSError as e:
        print("lsp_tap: cannot start %s: %s" % (cmd, e), file=sys.stderr)
        return 127
    log.write({"spawned": round(time.time(), 6)})
    if want_stderr:
        def read_stderr():
            for line in iter(child.stderr.readline, b""):
                log.write({"stderr": line.decode("utf-8", "replace").rstrip("\n"),
                           "t": round(time.time(), 6)})
        threading.Thread(target=read_stderr, daemon=True).start()

    def forward_signal(sig, _frame):
        try:
            child.send_signal(sig)
        except OSError:
            pass
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, forward_signal)

    def close_child_stdin():
        try:
            child.stdin.close()
        except OSError:
            pass

    c2s = Framer(lambda body, t, first: log.write(describe("c2s", body, t, first)))
    s2c = Framer(lambda body, t, first: log.write(describe("s2c", body, t, first)))
    t = threading.Thread(target=pump, daemon=True,
                         args=(sys.stdin.fileno(), child.stdin.fileno(), c2s, close_child_stdin))
    t.start()
    pump(child.stdout.fileno(), sys.stdout.fileno(), s2c)
    _, status, ru = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    log.write({"exit": child.returncode, "t": round(time.time(), 6),
               "utime": round(ru.ru_utime, 4), "stime": round(ru.ru_stime, 4)})
    return child.returncode if child.returncode >= 0 else 128 - child.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
