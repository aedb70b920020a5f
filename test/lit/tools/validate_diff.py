#!/usr/bin/env python3
"""Differential test of `tosa-lsp check --validate` against mlir-opt-22.

For each FILE and each target (the --validate ITEMS syntax), the errors
MLIR's tosa-validate reports must be the same, line, column and message:
  mlir-opt-22 --split-input-file --allow-unregistered-dialect \
      [--tosa-attach-target=...] --tosa-validate[=strict-op-spec-alignment]
against the diagnostics of source `tosa-validate` that `tosa-lsp check
--validate=ITEMS --format=json` gives. Sections mlir-opt-22 rejects without
the passes (parse or verifier errors) are left out on both sides: mlir-opt
runs no pass on them, and neither does tosa-lsp (checked too: no
tosa-validate diagnostic may land in one).

Prints one line per file and target and a total; exit 1 on any difference.
"""
import argparse
import json
import re
import subprocess
import sys

ERROR = re.compile(r"^(.*?):(\d+):(\d+): error: (.*)$")


def mlir_opt_args(items):
    """The mlir-opt-22 options for ITEMS (ValidateTarget::mlirOptArgs)."""
    profiles, extensions, attach, strict = [], [], [], False
    for item in filter(None, items.split(",")):
        if item == "strict":
            strict = True
        elif item.startswith("level="):
            attach.append(item)
        elif item.startswith("version="):
            attach.append("specification_version=" + item[len("version="):])
        elif item.startswith("pro_"):
            profiles.append(item)
        else:
            extensions.append(item)
    opts = []
    if profiles:
        opts.append("profiles=" + ",".join(profiles))
    if extensions:
        opts.append("extensions=" + ",".join(extensions))
    opts += attach
    args = ["--tosa-attach-target=" + " ".join(opts)] if opts else []
    return args + ["--tosa-validate=strict-op-spec-alignment" if strict else "--tosa-validate"]


def mlir_errors(mlir_opt, path, passes):
    run = subprocess.run([mlir_opt, "--split-input-file", "--allow-unregistered-dialect",
                          *passes, path, "-o", "/dev/null"],
                         capture_output=True, text=True)
    out = set()
    for line in run.stderr.splitlines():
        m = ERROR.match(line)
        # mlir-opt-22 also checks `expected-error` annotations of test
        # files it reads ("expected error ... was not produced"): about
        # the file's comments, not its IR.
        if m and not m.group(4).startswith(("expected error ", "unexpected error")):
            out.add((int(m.group(2)), int(m.group(3)), m.group(4)))
    return out


def section_of(path):
    """Line number -> section index, split as mlir-opt splits."""
    sections, index = {}, 0
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if re.match(r"^\s*//\s*-----", line):
                index += 1
            sections[n] = index
    return sections


def ours(tosa_lsp, path, items):
    run = subprocess.run([tosa_lsp, "check", "--validate=" + items, "--format=json", path],
                         capture_output=True, text=True)
    if run.returncode not in (0, 1):
        sys.exit(f"tosa-lsp check failed ({run.returncode}): {run.stderr}")
    out = set()
    for d in json.loads(run.stdout)["files"][0]["diagnostics"]:
        if d["source"] == "tosa-validate" and d["severity"] == "error":
            out.add((d["line"], d["column"], d["message"]))
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tosa-lsp", required=True)
    p.add_argument("--mlir-opt", required=True)
    p.add_argument("--target", action="append", required=True,
                   help="--validate ITEMS ('' for none)")
    p.add_argument("files", nargs="+")
    a = p.parse_args()
    failed = total = 0
    for path in a.files:
        sections = section_of(path)
        rejected = {sections.get(l, 0) for l, _, _ in mlir_errors(a.mlir_opt, path, [])}
        for items in a.target:
            ref = {e for e in mlir_errors(a.mlir_opt, path, mlir_opt_args(items))
                   if sections.get(e[0], 0) not in rejected}
            got = ours(a.tosa_lsp, path, items)
            missing, extra = sorted(ref - got), sorted(got - ref)
            total += len(ref)
            name = path.rsplit("/", 1)[-1]
            print(f"validate-diff: {name} [{items or 'default'}]: mlir-opt-22 {len(ref)}, "
                  f"tosa-lsp {len(got)}, equal {len(ref & got)}")
            for e in missing:
                print(f"  missing: {e}")
            for e in extra:
                print(f"  extra: {e}")
            failed += bool(missing or extra)
    print(f"validate-diff: {total} errors, {failed} differing file/target pairs")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
