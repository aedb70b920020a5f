#!/usr/bin/env python3
"""A small Language Server Protocol client for testing tosa-lsp (stdlib only).

Library:

    from lsp_client import LspClient, TextDocument
    with LspClient([tosa_lsp, "serve"]) as c:
        c.initialize()
        doc = TextDocument("file:///tmp/x.mlir", text)
        c.notify("textDocument/didOpen", doc.open_params())
        diags = c.wait_for_diagnostics(doc.uri, version=doc.version)
        hover = c.request("textDocument/hover", doc.position_params(2, 8))
        assert c.shutdown() == 0

* Messages use the standard `Content-Length` framing over the server's
  stdin/stdout; a reader thread collects every message (with its arrival
  time) so the test thread never blocks on a pipe. stderr is drained too.
* `request` returns the result or raises `LspError` (with `.code`); every
  wait has a timeout and raises `LspTimeout`, so a test can never hang.
* Positions are LSP positions: 0-based lines, UTF-16 code units. An astral
  character (e.g. U+1F600) counts as 2 units. `TextDocument` applies
  incremental changes to a Python string exactly as a server must.

CLI (one-shot queries against a file, handy when debugging the server):

    lsp_client.py --tosa-lsp BIN diagnostics FILE
    lsp_client.py --tosa-lsp BIN hover FILE LINE CHAR        (0-based, UTF-16)
    lsp_client.py --tosa-lsp BIN definition FILE LINE CHAR
    lsp_client.py --tosa-lsp BIN references FILE LINE CHAR
    lsp_client.py --tosa-lsp BIN symbols FILE
    lsp_client.py --tosa-lsp BIN inlay FILE
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import threading
import time

# JSON-RPC / LSP error codes.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
REQUEST_CANCELLED = -32800


class LspError(Exception):
    """An error response to a request."""

    def __init__(self, method, error):
        self.method = method
        self.code = error.get("code")
        self.message = error.get("message", "")
        self.data = error.get("data")
        super().__init__("%s failed: %s (code %s)" % (method, self.message, self.code))


class LspTimeout(Exception):
    """A bounded wait ran out."""


class ServerDied(Exception):
    """The server exited (or closed stdout) while we were waiting."""


# --------------------------------------------------------------------------
# UTF-16 position helpers
# --------------------------------------------------------------------------

def utf16_len(s):
    """Number of UTF-16 code units of `s`."""
    return sum(2 if ord(ch) > 0xFFFF else 1 for ch in s)


def utf16_to_index(line, units):
    """Index into the Python string `line` of UTF-16 column `units`.

    Raises ValueError when `units` is past the end of the line or falls
    inside a surrogate pair (ambiguous for an edit)."""
    u = 0
    for i, ch in enumerate(line):
        if u == units:
            return i
        u += 2 if ord(ch) > 0xFFFF else 1
        if u > units:
            raise ValueError("UTF-16 column %d splits a surrogate pair" % units)
    if u == units:
        return len(line)
    raise ValueError("UTF-16 column %d is past the end of the line (%d)" % (units, u))


def index_to_utf16(line, index):
    """UTF-16 column of Python string index `index` in `line`."""
    return utf16_len(line[:index])


def byte_col_to_utf16(line, byte_col):
    """UTF-16 column (0-based) of the 1-based byte column `byte_col` of
    `line` (the convention of MLIR diagnostics and `check --format=json`)."""
    b = line.encode("utf-8")[: max(byte_col - 1, 0)]
    return utf16_len(b.decode("utf-8", errors="strict"))


def split_lines(text):
    """Lines as LSP sees them: split on '\\n' only (a trailing '\\r' is kept
    by this function; LSP clients treat '\\r\\n' as one break but the test
    documents use '\\n')."""
    return text.split("\n")


class TextDocument:
    """Client-side copy of one open document."""

    def __init__(self, uri, text, version=1, language_id="mlir"):
        self.uri = uri
        self.text = text
        self.version = version
        self.language_id = language_id

    # -- positions ---------------------------------------------------------

    def lines(self):
        return split_lines(self.text)

    def offset(self, line, character):
        """Python string offset of an LSP position (strict)."""
        lines = self.lines()
        if not 0 <= line < len(lines):
            raise ValueError("line %d outside the document (%d lines)" % (line, len(lines)))
        start = sum(len(l) + 1 for l in lines[:line])
        return start + utf16_to_index(lines[line], character)

    def position(self, offset):
        """LSP position {line, character} of Python string offset."""
        before = self.text[:offset]
        line = before.count("\n")
        col_text = before[before.rfind("\n") + 1:]
        return {"line": line, "character": utf16_len(col_text)}

    def end_position(self):
        return self.position(len(self.text))

    def find(self, needle, start=0):
        """LSP position of the first occurrence of `needle` (or None)."""
        i = self.text.find(needle, start)
        return None if i < 0 else self.position(i)

    # -- edits -------------------------------------------------------------

    def apply(self, change):
        """Applies one TextDocumentContentChangeEvent to the local text."""
        if "range" not in change:
            self.text = change["text"]
            return
        r = change["range"]
        b = self.offset(r["start"]["line"], r["start"]["character"])
        e = self.offset(r["end"]["line"], r["end"]["character"])
        if e < b:
            raise ValueError("inverted range %r" % (r,))
        self.text = self.text[:b] + change["text"] + self.text[e:]

    def change_params(self, changes, version=None):
        """Applies `changes` locally, bumps the version and returns the
        didChange params that tell the server the same."""
        for c in changes:
            self.apply(c)
        self.version = self.version + 1 if version is None else version
        return {"textDocument": {"uri": self.uri, "version": self.version},
                "contentChanges": list(changes)}

    # -- params ------------------------------------------------------------

    def open_params(self):
        return {"textDocument": {"uri": self.uri, "languageId": self.language_id,
                                 "version": self.version, "text": self.text}}

    def ident(self):
        return {"uri": self.uri}

    def position_params(self, line, character):
        return {"textDocument": self.ident(),
                "position": {"line": line, "character": character}}


def make_range(start, end):
    return {"start": dict(start), "end": dict(end)}


def path_to_uri(path):
    return pathlib.Path(os.path.abspath(path)).as_uri()


# --------------------------------------------------------------------------
# The client
# --------------------------------------------------------------------------

class Message:
    """One message from the server, with the monotonic time it was read."""

    __slots__ = ("body", "time", "seq")

    def __init__(self, body, t, seq):
        self.body = body
        self.time = t
        self.seq = seq

    def __repr__(self):
        return "Message(%r @%.3f)" % (self.body, self.time)


class LspClient:
    def __init__(self, argv, env=None, default_timeout=30.0, server_request_results=None):
        """`server_request_results`: {method: result} answered to requests
        the server sends (e.g. window/showDocument); others get null."""
        self.argv = list(argv)
        self.default_timeout = default_timeout
        self.server_request_results = {"window/showDocument": {"success": True},
                                       "workspace/configuration": []}
        self.server_request_results.update(server_request_results or {})
        self.proc = subprocess.Popen(
            self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, env=env, bufsize=0)
        self._cv = threading.Condition()
        self._write_lock = threading.Lock()
        self._next_id = 1
        self._responses = {}       # id -> [Message] (a list: duplicates are bugs)
        self.notifications = []    # [Message]
        self.server_requests = []  # [Message] requests from the server
        self.protocol_errors = []  # framing / JSON problems on stdout
        self.all_messages = []     # [Message] in arrival order
        self._eof = False
        self._stderr = []
        self._seq = 0
        self._reader = threading.Thread(target=self._read_loop, daemon=True)
        self._reader.start()
        self._err_reader = threading.Thread(target=self._drain_stderr, daemon=True)
        self._err_reader.start()

    # -- context manager ---------------------------------------------------

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.kill()
        return False

    # -- I/O threads -------------------------------------------------------

    def _drain_stderr(self):
        try:
            for line in iter(self.proc.stderr.readline, b""):
                self._stderr.append(line.decode("utf-8", "replace"))
        except (ValueError, OSError):
            pass  # closed by kill() while a line was read

    def stderr_text(self):
        return "".join(self._stderr)

    def _read_loop(self):
        out = self.proc.stdout
        try:
            while True:
                headers = {}
                while True:
                    line = out.readline()
                    if not line:
                        return
                    line = line.rstrip(b"\r\n")
                    if not line:
                        break
                    if b":" not in line:
                        self.protocol_errors.append("bad header line %r" % line)
                        continue
                    k, v = line.split(b":", 1)
                    headers[k.strip().lower()] = v.strip()
                if b"content-length" not in headers:
                    self.protocol_errors.append("message without Content-Length: %r" % headers)
                    continue
                n = int(headers[b"content-length"])
                data = b""
                while len(data) < n:
                    chunk = out.read(n - len(data))
                    if not chunk:
                        self.protocol_errors.append("EOF inside a message body")
                        return
                    data += chunk
                t = time.monotonic()
                try:
                    body = json.loads(data.decode("utf-8"))
                except (ValueError, UnicodeDecodeError) as e:
                    self.protocol_errors.append("bad JSON body %r: %s" % (data[:200], e))
                    continue
                self._dispatch(body, t)
        finally:
            with self._cv:
                self._eof = True
                self._cv.notify_all()

    def _dispatch(self, body, t):
        with self._cv:
            self._seq += 1
            msg = Message(body, t, self._seq)
            self.all_messages.append(msg)
            if body.get("jsonrpc") != "2.0":
                self.protocol_errors.append("reply without jsonrpc 2.0: %r" % body)
            if "method" in body and "id" in body:
                self.server_requests.append(msg)
                reply = {"jsonrpc": "2.0", "id": body["id"],
                         "result": self.server_request_results.get(body["method"])}
            elif "method" in body:
                self.notifications.append(msg)
            elif "id" in body:
                self._responses.setdefault(self._key(body["id"]), []).append(msg)
            else:
                self.protocol_errors.append("unclassifiable message %r" % body)
            self._cv.notify_all()
        if "method" in body and "id" in body:
            try:
                self.send(reply)
            except OSError:
                pass

    @staticmethod
    def _key(i):
        return json.dumps(i, sort_keys=True)

    # -- sending -----------------------------------------------------------

    def send_raw(self, data):
        """Writes bytes as-is (for malformed-input tests); returns the
        monotonic time the first byte went out: what a timing measures from,
        so that this client's own encoding (~3 ms for a 1 MB didOpen in
        Python) is not counted as the server's."""
        with self._write_lock:
            t = time.monotonic()
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
            return t

    def send_body(self, body_bytes):
        """Frames arbitrary bytes with a correct Content-Length header."""
        return self.send_raw(b"Content-Length: %d\r\n\r\n" % len(body_bytes) + body_bytes)

    def send(self, obj):
        return self.send_body(json.dumps(obj, ensure_ascii=False).encode("utf-8"))

    def new_id(self):
        with self._cv:
            i = self._next_id
            self._next_id += 1
            return i

    def notify(self, method, params=None):
        """Sends a notification; returns the time it went out (send_raw)."""
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        return self.send(msg)

    def send_request(self, method, params=None, id=None):
        """Sends a request without waiting; returns (id, send time) (the
        time it went out: send_raw)."""
        if id is None:
            id = self.new_id()
        msg = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            msg["params"] = params
        return id, self.send(msg)

    def cancel(self, id):
        self.notify("$/cancelRequest", {"id": id})

    # -- waiting -----------------------------------------------------------

    def _wait(self, pred, timeout, what):
        """Waits (on the condition) until pred() is truthy; returns it."""
        deadline = time.monotonic() + (self.default_timeout if timeout is None else timeout)
        with self._cv:
            while True:
                v = pred()
                if v:
                    return v
                if self._eof:
                    raise ServerDied("server closed its output while waiting for %s "
                                     "(%s); stderr:\n%s"
                                     % (what, self.exit_status(), self.stderr_text()[-4000:]))
                left = deadline - time.monotonic()
                if left <= 0:
                    raise LspTimeout("timed out waiting for %s" % what)
                self._cv.wait(min(left, 0.5))

    def responses_for(self, id):
        with self._cv:
            return list(self._responses.get(self._key(id), []))

    def wait_response(self, id, timeout=None, after=0):
        """The response Message to request `id` (result or error); with
        `after`, the one after that many (id null: each ParseError)."""
        msgs = self._wait(lambda: self._responses.get(self._key(id), [])[after:], timeout,
                          "the response to request %r" % (id,))
        return msgs[0]

    def request(self, method, params=None, timeout=None):
        """Sends a request and returns its result; raises LspError on an
        error response, LspTimeout when none arrives in time."""
        id, _ = self.send_request(method, params)
        body = self.wait_response(id, timeout).body
        if "error" in body:
            raise LspError(method, body["error"])
        return body.get("result")

    def wait_for(self, predicate, timeout=None, since=0, what="a notification"):
        """The first notification Message (arrival order, from index `since`
        of self.notifications) whose body satisfies predicate(body)."""
        def find():
            for m in self.notifications[since:]:
                if predicate(m.body):
                    return m
            return None
        return self._wait(find, timeout, what)

    def diagnostics_messages(self, uri=None):
        with self._cv:
            return [m for m in self.notifications
                    if m.body.get("method") == "textDocument/publishDiagnostics"
                    and (uri is None or m.body["params"].get("uri") == uri)]

    def wait_for_diagnostics(self, uri, version=None, timeout=None, since=0):
        """The publishDiagnostics Message for `uri` (and `version`)."""
        def pred(b):
            if b.get("method") != "textDocument/publishDiagnostics":
                return False
            p = b.get("params", {})
            return p.get("uri") == uri and (version is None or p.get("version") == version)
        return self.wait_for(pred, timeout, since,
                             "publishDiagnostics of %s version %s" % (uri, version))

    # -- lifecycle ---------------------------------------------------------

    def initialize(self, root_uri=None, options=None, timeout=None,
                   text_document=None):
        """`text_document`: more textDocument client capabilities."""
        params = {"processId": os.getpid(), "rootUri": root_uri,
                  "capabilities": {"textDocument": {
                      "publishDiagnostics": {"versionSupport": True},
                      "hover": {"contentFormat": ["markdown", "plaintext"]}},
                      "general": {"positionEncodings": ["utf-16"]}}}
        params["capabilities"]["textDocument"].update(text_document or {})
        if options is not None:
            params["initializationOptions"] = options
        result = self.request("initialize", params, timeout)
        self.notify("initialized", {})
        self.capabilities = result.get("capabilities", {})
        return result

    def shutdown(self, timeout=10.0):
        """`shutdown` then `exit`; returns the server's exit code."""
        self.request("shutdown", None, timeout)
        self.notify("exit")
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise LspTimeout("server did not exit within %.0fs after `exit`" % timeout)

    def exit_status(self, wait=2.0):
        """'exit code N', 'killed by signal N (NAME)' or 'still running'."""
        try:
            rc = self.proc.wait(wait)
        except subprocess.TimeoutExpired:
            return "still running"
        if rc < 0:
            import signal
            try:
                name = signal.Signals(-rc).name
            except ValueError:
                name = "?"
            return "killed by signal %d (%s)" % (-rc, name)
        return "exit code %d" % rc

    def kill(self):
        """Stops the server we started (idempotent)."""
        if self.proc.poll() is None:
            try:
                self.proc.kill()
            except OSError:
                pass
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            pass
        # The server is gone: its stderr ends; read to the end before the
        # pipe is closed under the reader.
        self._err_reader.join(2)
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                f.close()
            except OSError:
                pass


# --------------------------------------------------------------------------
# `tosa-lsp check --format=json` as an oracle
# --------------------------------------------------------------------------

SEVERITY = {"error": 1, "warning": 2, "info": 3, "note": 3}


def check_json(tosa_lsp, path, timeout=120):
    """Runs `tosa-lsp check --format=json path`; returns the parsed JSON."""
    p = subprocess.run([tosa_lsp, "check", "--format=json", path],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=timeout)
    if p.returncode not in (0, 1):
        raise RuntimeError("tosa-lsp check exited %d: %s" % (p.returncode, p.stderr.decode()))
    return json.loads(p.stdout.decode("utf-8"))


def expected_lsp_diagnostics(check, text):
    """The diagnostics a server should publish for `text`, from check's JSON,
    as comparable tuples (start line, start char, end line, end char,
    severity, code, message, sorted notes (message, line, char)), positions converted to
    0-based UTF-16. Every note is published."""
    lines = split_lines(text)
    out = []
    for f in check["files"]:
        for d in f["diagnostics"]:
            def pos(line, col):
                l = min(max(line, 1), len(lines)) - 1
                return l, byte_col_to_utf16(lines[l], col)
            sl, sc = pos(d["line"], d["column"])
            if d.get("endLine"):
                el, ec = pos(d["endLine"], d["endColumn"])
            else:
                el, ec = sl, sc
            sev = SEVERITY[d["severity"]]
            if d.get("code") == "refinable-result":
                sev = 4  # the server shows it as a hint
            notes = tuple(sorted(
                (n["message"],) + (pos(n["line"], n["column"]) if n.get("line") else (sl, sc))
                for n in d.get("notes", [])))
            out.append((sl, sc, el, ec, sev, d.get("code"), d["message"], notes))
    return out


def lsp_diagnostics_tuples(diags):
    out = []
    for d in diags:
        r = d["range"]
        notes = tuple(sorted(
            (n["message"], n["location"]["range"]["start"]["line"],
             n["location"]["range"]["start"]["character"])
            for n in d.get("relatedInformation", [])))
        out.append((r["start"]["line"], r["start"]["character"],
                    r["end"]["line"], r["end"]["character"],
                    d.get("severity"), d.get("code"), d["message"], notes))
    return out


# --------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------

def _main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tosa-lsp", required=True, help="the tosa-lsp binary")
    ap.add_argument("--timeout", type=float, default=30.0)
    ap.add_argument("--server-arg", action="append", default=[],
                    help="extra argument for `tosa-lsp serve` (repeatable)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("diagnostics", "symbols", "inlay"):
        s = sub.add_parser(name)
        s.add_argument("file")
    for name in ("hover", "definition", "references"):
        s = sub.add_parser(name)
        s.add_argument("file")
        s.add_argument("line", type=int)
        s.add_argument("character", type=int)
    a = ap.parse_args(argv)

    with open(a.file, encoding="utf-8") as f:
        text = f.read()
    doc = TextDocument(path_to_uri(a.file), text)
    with LspClient([a.tosa_lsp, "serve"] + a.server_arg, default_timeout=a.timeout) as c:
        c.initialize()
        c.notify("textDocument/didOpen", doc.open_params())
        if a.cmd == "diagnostics":
            result = c.wait_for_diagnostics(doc.uri, doc.version).body["params"]
        elif a.cmd == "symbols":
            result = c.request("textDocument/documentSymbol", {"textDocument": doc.ident()})
        elif a.cmd == "inlay":
            end = doc.end_position()
            result = c.request("textDocument/inlayHint", {
                "textDocument": doc.ident(),
                "range": make_range({"line": 0, "character": 0}, end)})
        else:
            params = doc.position_params(a.line, a.character)
            if a.cmd == "references":
                params["context"] = {"includeDeclaration": True}
            result = c.request("textDocument/" + a.cmd, params)
        print(json.dumps(result, indent=1, ensure_ascii=False))
        rc = c.shutdown()
        if rc != 0:
            print("server exited with %d" % rc, file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(_main())
