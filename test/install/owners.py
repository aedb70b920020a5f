#!/usr/bin/env python3
"""Which Debian package provides each shared library a binary loads.

usage: owners.py DEPENDS_NAMES BINARY [OPENED_LIB...]

For the binary's own NEEDED libraries and each OPENED_LIB (what it opens
at run time, e.g. MLIR's runtime library), the owner of the file
(dpkg -S, of the real file when the path is a symlink) must be a package
named in Depends. Libraries those load in turn (ldd's whole tree) must be
owned by a package in Depends or in the installed dependency closure of
Depends (libLLVM's libxml2 comes with libllvm22, not from us).
Prints one line per library: `ok|FAIL<TAB>LIB<TAB>detail`.
"""
import os
import re
import subprocess
import sys


def run(*cmd):
    return subprocess.run(cmd, capture_output=True, text=True).stdout


def ldd(path):
    """name -> resolved path of every library ldd lists."""
    libs = {}
    for line in run("ldd", path).splitlines():
        m = re.match(r"\s*(\S+) => (\S+)", line)
        if m and m.group(2).startswith("/"):
            libs[m.group(1)] = m.group(2)
        elif m:
            libs[m.group(1)] = None  # not found
        else:
            m = re.match(r"\s*(/\S+) \(", line)
            if m:
                libs[os.path.basename(m.group(1))] = m.group(1)
    return libs


def needed(path):
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", run("readelf", "-d", path))


def owner(path):
    """The package of the real file (else of the path itself)."""
    for p in (os.path.realpath(path), path):
        out = run("dpkg-query", "-S", p)
        for line in out.splitlines():
            if not line.startswith("diversion"):
                return line.split(":")[0].split(",")[0].strip()
    return None


def depends_of(pkg):
    out = run("dpkg-query", "-W", "-f=${Depends}, ${Pre-Depends}", pkg)
    names = set()
    for alt in re.split(r"[,|]", out):
        alt = re.sub(r"\(.*?\)", "", alt).strip().split(":")[0]
        if alt:
            names.add(alt)
    return names


def main():
    depends = set(open(sys.argv[1]).read().split())
    binary = sys.argv[2]
    opened = sys.argv[3:]
    # The installed closure of Depends: package -> the Depends entry it comes through.
    via = {p: p for p in depends}
    todo = list(depends)
    while todo:
        p = todo.pop()
        for d in depends_of(p):
            if d not in via:
                via[d] = via[p]
                todo.append(d)

    tree = ldd(binary)
    direct = {n: tree.get(n) for n in needed(binary)}
    for lib in opened:
        direct[os.path.basename(lib)] = lib if os.path.exists(lib) else None
        tree.update(ldd(lib) if os.path.exists(lib) else {})
    seen = set()
    for name, path in list(direct.items()) + sorted(tree.items()):
        if name in seen:
            continue
        seen.add(name)
        if path is None:
            print(f"FAIL\t{name}\tnot found")
            continue
        pkg = owner(path)
        if pkg is None:
            print(f"FAIL\t{name}\t{path}: no package owns it")
        elif name in direct:
            if pkg in depends:
                print(f"ok\t{name}\t{path} -> {pkg} (in Depends; loaded directly)")
            else:
                print(f"FAIL\t{name}\t{path} -> {pkg}, not in Depends (loaded directly)")
        elif pkg in via:
            how = "in Depends" if pkg in depends else f"through {via[pkg]}"
            print(f"ok\t{name}\t{path} -> {pkg} ({how})")
        else:
            print(f"FAIL\t{name}\t{path} -> {pkg}, not in the closure of Depends")


main()
