#!/usr/bin/env python3
"""Sends the server messages framed wrongly (a Content-Length that is not a
number, negative, huge, or longer than its body), each followed by a
well-framed request, and prints which requests were answered: after each
bad frame the server must resynchronise on the next header."""
import json
import subprocess
import sys


def frame(obj, length=None):
    body = json.dumps(obj).encode()
    n = str(len(body) if length is None else length).encode()
    return b"Content-Length: " + n + b"\r\n\r\n" + body


def request(i, method="textDocument/hover"):
    return {"jsonrpc": "2.0", "id": i, "method": method,
            "params": {"textDocument": {"uri": "file:///none.mlir"},
                       "position": {"line": 0, "character": 0}}}


def main():
    server = sys.argv[1:]
    bad = [("not a number", b"abc"), ("negative", b"-5"), ("huge", b"1e20"),
           ("too big for u64", b"100000000000000000000")]
    data = frame({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                  "params": {"capabilities": {}}})
    expected = []
    for i, (name, length) in enumerate(bad, start=1):
        body = json.dumps(request(100 + i)).encode()
        data += b"Content-Length: " + length + b"\r\n\r\n" + body
        data += frame(request(i))
        expected.append((i, name))
    # Longer than its body: it swallows the start of the next message.
    i = len(bad) + 1
    short = json.dumps(request(200)).encode()
    data += b"Content-Length: " + str(len(short) + 30).encode() + b"\r\n\r\n" + short
    data += frame(request(i))
    data += frame(request(i + 1))
    expected.append((i + 1, "longer than its body"))
    data += frame({"jsonrpc": "2.0", "id": 99, "method": "shutdown"})
    data += frame({"jsonrpc": "2.0", "method": "exit"})
    r = subprocess.run(server, input=data, capture_output=True, timeout=60)
    ids = set()
    out = r.stdout
    while True:
        at = out.find(b"Content-Length: ")
        if at < 0:
            break
        end = out.find(b"\r\n\r\n", at)
        n = int(out[at + 16:end])
        msg = json.loads(out[end + 4:end + 4 + n])
        out = out[end + 4 + n:]
        if "id" in msg:
            ids.add(msg["id"])
    for i, name in expected:
        print(f"after {name}: request {i} {'answered' if i in ids else 'NOT answered'}")
    print(f"shutdown {'answered' if 99 in ids else 'NOT answered'}, exit code {r.returncode}")
    print("resynchronised" if b"resynchronised" in r.stderr else "no resync logged")


if __name__ == "__main__":
    main()
