#!/usr/bin/env python3
"""tosa.compile from the language server, asynchronously: cancellation
kills the compiler process, a time limit stops it, a child that dies is
reported as an error, and the server keeps serving after each."""
import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lsp_client import LspClient, LspError  # noqa: E402

FN = """func.func @f{i}(%a: tensor<1x{n}xf32>, %b: tensor<{n}x{n}xf32>) -> tensor<{n}x{n}xf32> {{
  %0 = tosa.add %a, %b : (tensor<1x{n}xf32>, tensor<{n}x{n}xf32>) -> tensor<{n}x{n}xf32>
  %1 = tosa.mul %0, %b, %s : (tensor<{n}x{n}xf32>, tensor<{n}x{n}xf32>, tensor<1xi8>) -> tensor<{n}x{n}xf32>
  %2 = tosa.exp %1 : (tensor<{n}x{n}xf32>) -> tensor<{n}x{n}xf32>
  return %2 : tensor<{n}x{n}xf32>
}}
"""


def big_module(count):
    funcs = []
    for i in range(count):
        f = FN.format(i=i, n=8 + i % 5)
        f = f.replace("%b: tensor", "%s: tensor<1xi8>, %b: tensor", 1)
        funcs.append(f)
    return "".join(funcs)


def compiler_children(marker):
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [l for l in out.splitlines() if " compile " in l and marker in l]


def compile_until_lowering(c, uri, token):
    """Starts tosa.compile of `uri`; returns its request id once the child
    reports its lowering step (it is running then)."""
    before = len(c.notifications)
    id_, _ = c.send_request("workspace/executeCommand", {
        "command": "tosa.compile", "arguments": [{"uri": uri}],
        "workDoneToken": token})
    c.wait_for(lambda b: b.get("method") == "$/progress"
               and b["params"]["token"] == token
               and b["params"]["value"].get("message", "")
               .startswith("lowering"),
               since=before, timeout=60, what="the child's progress")
    return id_


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--tosa-lsp", required=True)
    args = ap.parse_args()
    passed = failed = 0

    def check(cond, what):
        nonlocal passed, failed
        if cond:
            passed += 1
        else:
            failed += 1
            print("FAIL:", what)

    with tempfile.TemporaryDirectory() as tmp:
        out_dir = os.path.join(tmp, "outputs-%d" % os.getpid())
        path = os.path.join(tmp, "big.mlir")
        text = big_module(150)
        open(path, "w").write(text)
        uri = "file://" + path
        with LspClient([args.tosa_lsp, "serve"]) as c:
            c.initialize(options={"compile": {"outputDir": out_dir}})
            c.notify("textDocument/didOpen", {"textDocument": {
                "uri": uri, "languageId": "mlir", "version": 1, "text": text}})
            c.wait_for_diagnostics(uri, timeout=60)

            # 1. A full compile works and reports progress.
            t0 = time.monotonic()
            res = c.request("workspace/executeCommand", {
                "command": "tosa.compile", "arguments": [{"uri": uri}],
                "workDoneToken": "full"}, timeout=300)
            took = time.monotonic() - t0
            check(res and res["output"].endswith("big.so") and res["bytes"] > 0,
                  "full compile returns the output: %r" % (res,))
            check("_mlir_ciface_f149" in res.get("symbols", []), "all entry points")
            steps = [m.body["params"]["value"] for m in c.notifications
                     if m.body.get("method") == "$/progress"
                     and m.body["params"]["token"] == "full"]
            check(steps and steps[0]["kind"] == "begin" and steps[-1]["kind"] == "end"
                  and any(s.get("message", "").startswith("emitting") for s in steps),
                  "progress begin/report/end: %r" % steps[:3])
            print("full compile of 150 functions: %.2f s" % took)

            # 2. Cancellation kills the child and answers -32800.
            before = len(c.notifications)
            id_, _ = c.send_request("workspace/executeCommand", {
                "command": "tosa.compile", "arguments": [{"uri": uri}],
                "workDoneToken": "cancel-me"})
            c.wait_for(lambda b: b.get("method") == "$/progress"
                       and b["params"]["token"] == "cancel-me"
                       and b["params"]["value"]["kind"] == "report",
                       since=before, timeout=60, what="a progress report")
            running = compiler_children(out_dir)
            c.cancel(id_)
            body = c.wait_response(id_, timeout=30).body
            check(body.get("error", {}).get("code") == -32800,
                  "cancelled compile answers RequestCancelled: %r" % body)
            time.sleep(0.3)
            left = compiler_children(out_dir)
            check(running and not left,
                  "the compiler process was running (%d) and is gone (%d)"
                  % (len(running), len(left)))

            # 3. A time limit stops a compile that takes too long.
            c.notify("workspace/didChangeConfiguration", {"settings": {
                "compile": {"outputDir": out_dir, "timeoutSeconds": 1}}})
            try:
                c.request("workspace/executeCommand", {
                    "command": "tosa.compile", "arguments": [{"uri": uri}]},
                    timeout=60)
                check(False, "a 1 s time limit must stop the compile")
            except LspError as e:
                check("took longer than 1 s and was stopped" in e.message,
                      "time limit message: %s" % e.message)

            # 4. A child that dies (killed here; limits no longer go low
            # enough to make it crash) is reported.
            c.notify("workspace/didChangeConfiguration", {"settings": {
                "compile": {"outputDir": out_dir}}})
            id_ = compile_until_lowering(c, uri, "kill-me")
            for line in compiler_children(out_dir):
                os.kill(int(line.split()[0]), signal.SIGKILL)
            body = c.wait_response(id_, timeout=30).body
            check(body.get("error", {}).get("message", "")
                  .startswith("the compiler process failed"),
                  "child failure message: %r" % body)

            # 5. Still serving.
            hover = c.request("textDocument/hover", {
                "textDocument": {"uri": uri},
                "position": {"line": 1, "character": 9}})
            check(hover and "Inferred" in hover["contents"]["value"],
                  "hover after failed compiles")
            check(c.shutdown() == 0, "clean shutdown")

        # 6. SIGTERM (an editor quitting) during a compile: the child is
        # killed and the work directory, which holds the user's text, is
        # removed before the server exits with 128 + 15.
        work_tmp = os.path.join(tmp, "tmpdir")
        os.mkdir(work_tmp)
        env = dict(os.environ, TMPDIR=work_tmp)
        with LspClient([args.tosa_lsp, "serve"], env=env) as c:
            c.initialize(options={"compile": {"outputDir": out_dir}})
            c.notify("textDocument/didOpen", {"textDocument": {
                "uri": uri, "languageId": "mlir", "version": 1, "text": text}})
            c.wait_for_diagnostics(uri, timeout=60)
            compile_until_lowering(c, uri, "term")
            running = compiler_children(out_dir)
            left_during = os.listdir(work_tmp)
            c.proc.send_signal(signal.SIGTERM)
            rc = c.proc.wait(timeout=10)
            time.sleep(0.3)
            check(rc == 128 + signal.SIGTERM, "exit code after SIGTERM: %r" % rc)
            check(running and not compiler_children(out_dir),
                  "SIGTERM: the compiler process was running (%d) and is gone"
                  % len(running))
            check(left_during and not os.listdir(work_tmp),
                  "SIGTERM: the work directory existed (%r) and is removed (%r)"
                  % (left_during, os.listdir(work_tmp)))
    print("lsp-compile: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
