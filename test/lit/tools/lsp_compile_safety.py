#!/usr/bin/env python3
"""tosa.compile and previews never damage the user's files: the source is
never a target, existing outputs and symlinks are left alone, function names
cannot escape the output directory, a repository's .tosa-lsp.json only
chooses directories inside its tree (relative to itself) and cannot allow
overwriting, out-of-range limits are rejected, temp files do not pile up,
and shutdown stops a running compile at once."""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lsp_client import LspClient, LspError  # noqa: E402
from lsp_compile_jobs import big_module, compiler_children  # noqa: E402

MODEL = """func.func @add(%a: tensor<1x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tosa.add %a, %b : (tensor<1x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @"/../../../x"(%a: tensor<3xf32>) -> tensor<3xf32> {
  %0 = tosa.add %a, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
"""
WEIRD = "/../../../x"


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

    def read(p):
        with open(p, "rb") as f:
            return f.read()

    def write(p, data):
        with open(p, "w") as f:
            f.write(data)

    with tempfile.TemporaryDirectory() as top:
        top = os.path.realpath(top)
        tmpdir = os.path.join(top, "tmp")   # the server's private TMPDIR
        proj = os.path.join(top, "proj")    # a repository
        cwd = os.path.join(top, "cwd")      # the server's working directory
        out = os.path.join(proj, "out")
        for d in (tmpdir, proj, cwd, out):
            os.makedirs(d)
        model = os.path.join(proj, "model.mlir")
        write(model, MODEL)
        config = os.path.join(proj, ".tosa-lsp.json")
        env = dict(os.environ, TMPDIR=tmpdir)
        uri = "file://" + model
        os.chdir(cwd)

        def in_tmp(prefix):
            return sorted(n for n in os.listdir(tmpdir) if n.startswith(prefix))

        with LspClient([args.tosa_lsp, "serve"], env=env) as c:
            c.initialize()
            c.notify("textDocument/didOpen", {"textDocument": {
                "uri": uri, "languageId": "mlir", "version": 1, "text": MODEL}})
            c.wait_for_diagnostics(uri, timeout=60)

            def compile_(**kw):
                arg = dict(uri=uri, **kw)
                try:
                    return c.request("workspace/executeCommand", {
                        "command": "tosa.compile", "arguments": [arg]},
                        timeout=120), None
                except LspError as e:
                    return None, e.message

            def messages_since(n):
                return [m.body["params"]["message"] for m in c.notifications[n:]
                        if m.body.get("method") == "window/showMessage"]

            # 1. outputDir "." + mlir-llvm would name the output model.mlir:
            # the open file is not overwritten, the output gets a fresh name.
            write(config, '{"compile": {"outputDir": "."}}')
            res, err = compile_(emit="mlir-llvm")
            check(read(model) == MODEL.encode(), "the source file is unchanged")
            check(res and res["output"] == os.path.join(proj, "model-1.mlir"),
                  "fresh name next to the source: %r %r" % (res, err))

            # 2. A relative outputDir resolves against .tosa-lsp.json, not
            # the server's cwd; an existing output is not replaced.
            write(config, '{"compile": {"outputDir": "out"}}')
            precious = os.path.join(out, "model_add.so")
            write(precious, "precious")
            res, err = compile_(function="add")
            check(read(precious) == b"precious", "existing model_add.so kept")
            check(res and res["output"] == os.path.join(out, "model_add-1.so")
                  and res["header"] == os.path.join(out, "model_add-1.h"),
                  "output and header get one fresh stem: %r %r" % (res, err))
            check(not os.path.exists(os.path.join(cwd, "out")),
                  "nothing created in the server's cwd")

            # 3. A symlink in the output directory is not written through.
            victim = os.path.join(top, "victim.ll")
            write(victim, "victim")
            os.symlink(victim, os.path.join(out, "model_add.ll"))
            os.symlink(os.path.join(top, "dangling.ll"),
                       os.path.join(out, "model_add-1.ll"))
            res, err = compile_(function="add", emit="llvm-ir")
            check(read(victim) == b"victim", "symlink target unchanged")
            check(not os.path.exists(os.path.join(top, "dangling.ll")),
                  "dangling symlink target not created")
            check(res and res["output"] == os.path.join(out, "model_add-2.ll"),
                  "fresh name past the symlinks: %r %r" % (res, err))

            # 4. A function name with "/" and ".." stays in the directory.
            res, err = compile_(function=WEIRD, emit="mlir-llvm")
            check(res and os.path.dirname(res["output"]) == out
                  and os.path.basename(res["output"]) == "model__.._.._.._x.mlir",
                  "sanitised output name in the output dir: %r %r" % (res, err))
            check(sorted(os.listdir(top)) == ["cwd", "proj", "tmp", "victim.ll"],
                  "nothing written above the project: %r" % os.listdir(top))

            # 5. The project's file may only choose a directory in its tree.
            for bad in ("../escape", top + "/escape", "linked", "linked/sub"):
                if not os.path.lexists(os.path.join(proj, "linked")):
                    os.makedirs(os.path.join(top, "elsewhere"))
                    os.symlink(os.path.join(top, "elsewhere"),
                               os.path.join(proj, "linked"))
                write(config, '{"compile": {"outputDir": "%s"}}' % bad)
                res, err = compile_(function="add")
                check(res is None and err and "outside that project" in err,
                      "outputDir %s rejected: %r %r" % (bad, res, err))
            check(not os.path.exists(os.path.join(top, "escape")) and
                  os.listdir(os.path.join(top, "elsewhere")) == [],
                  "no directory created outside the project")

            # 6. Out-of-range limits are rejected; the defaults stay.
            for key, value in (("timeoutSeconds", 4294967296),
                               ("timeoutSeconds", 0), ("memoryLimitMB", 0)):
                write(config, '{"compile": {"%s": %d}}' % (key, value))
                n = len(c.notifications)
                res, err = compile_(function="add", emit="llvm-ir")
                msgs = messages_since(n)
                check(any(".tosa-lsp.json: compile.%s must be an integer from"
                          % key in m for m in msgs),
                      "%s %d reported: %r" % (key, value, msgs))
                check(res and res["bytes"] > 0,
                      "compile with the default limits: %r %r" % (res, err))

            # 7. Only the editor settings may allow overwriting, and even
            # then not the source file.
            write(config, '{"compile": {"outputDir": "out", "overwrite": true}}')
            n = len(c.notifications)
            compile_(function="add")
            check(any("compile.overwrite can only be set in the editor settings"
                      in m for m in messages_since(n)),
                  "overwrite in .tosa-lsp.json rejected")
            check(read(precious) == b"precious", "and nothing replaced")
            os.remove(config)
            c.notify("workspace/didChangeConfiguration", {"settings": {
                "compile": {"outputDir": out, "overwrite": True}}})
            res, err = compile_(function="add")
            check(res and res["output"] == precious and
                  read(precious)[:4] == b"\x7fELF",
                  "editor settings overwrite: %r %r" % (res, err))
            c.notify("workspace/didChangeConfiguration", {"settings": {
                "compile": {"outputDir": proj, "overwrite": True}}})
            res, err = compile_(emit="mlir-llvm")
            check(res is None and "it is the source file" in (err or "") and
                  read(model) == MODEL.encode(),
                  "the source is never replaced: %r %r" % (res, err))
            c.notify("workspace/didChangeConfiguration", {"settings": {
                "compile": {"outputDir": "rel"}}})
            res, err = compile_(function="add")
            check(res is None and "must be an absolute path" in (err or ""),
                  "relative outputDir in editor settings: %r" % err)
            c.notify("workspace/didChangeConfiguration", {"settings": {}})

            # 8. No residue: 20 failed compiles, 20 previews.
            kept = in_tmp("tosa-lsp-compile")
            for _ in range(20):
                res, err = compile_(function="nope")
                if res is not None:
                    break
            check(res is None and in_tmp("tosa-lsp-compile") == kept and
                  not in_tmp("tosa-lsp-work") and not in_tmp("tosa-lsp-link"),
                  "failed compiles leave nothing: %r" % os.listdir(tmpdir))
            uris = set()
            for i in range(20):
                fn = WEIRD if i % 2 else "add"
                r = c.request("workspace/executeCommand", {
                    "command": "tosa.previewLowering",
                    "arguments": [{"uri": uri, "function": fn}]}, timeout=60)
                uris.add(r["previewUri"])
            previews = in_tmp("tosa-lsp-preview")
            files = (os.listdir(os.path.join(tmpdir, previews[0]))
                     if len(previews) == 1 else [])
            check(len(uris) == 2 and len(files) == 2 and
                  all(u.startswith("file://" + tmpdir + "/" + previews[0] + "/")
                      for u in uris),
                  "one preview file per function, in one directory: %r %r"
                  % (uris, files))
            check(c.shutdown() == 0, "clean shutdown")
            check(in_tmp("tosa-lsp-compile") == kept and
                  not in_tmp("tosa-lsp-preview") and not in_tmp("tosa-preview"),
                  "previews removed on exit: %r" % os.listdir(tmpdir))

        # 9. Shutdown (or end of input) during a compile kills the child.
        big = os.path.join(proj, "big.mlir")
        # Compiling 300 functions takes ~10 s here; stopping it, ~0.05 s.
        text = big_module(300)
        write(big, text)
        marker = os.path.join(top, "bigout")
        for how in ("shutdown", "eof"):
            with LspClient([args.tosa_lsp, "serve"], env=env) as c:
                c.initialize(options={"compile": {"outputDir": marker}})
                buri = "file://" + big
                c.notify("textDocument/didOpen", {"textDocument": {
                    "uri": buri, "languageId": "mlir", "version": 1,
                    "text": text}})
                c.wait_for_diagnostics(buri, timeout=60)
                n = len(c.notifications)
                c.send_request("workspace/executeCommand", {
                    "command": "tosa.compile", "arguments": [{"uri": buri}],
                    "workDoneToken": "big"})
                c.wait_for(lambda b: b.get("method") == "$/progress"
                           and b["params"]["value"].get("message", "")
                           .startswith("lowering"),
                           since=n, timeout=60, what="the child's progress")
                running = compiler_children(marker)
                t0 = time.monotonic()
                if how == "shutdown":
                    c.request("shutdown", None, 10)
                    c.notify("exit")
                c.proc.stdin.close()
                try:
                    c.proc.wait(30)
                except subprocess.TimeoutExpired:
                    pass
                took = time.monotonic() - t0
                print("exit after %s during a compile: %.2f s" % (how, took))
                check(running and took < 2 and not compiler_children(marker),
                      "%s stops the compile (%d running, %.1f s)"
                      % (how, len(running), took))
        check(not in_tmp("tosa-lsp-work"), "no work files left")
    print("lsp-compile-safety: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
