#!/usr/bin/env python3
"""Concurrency and robustness test of `tosa-lsp serve` over real stdio pipes.

Parts (each on its own server process, each wait bounded):

  (a) edit storm: open a small multi-section document, send 200 rapid
      incremental `didChange`s (comment typing/deleting with multi-byte and
      astral characters, comment lines inserted, lines split and joined,
      commented-out ops toggled by deleting a prefix that ends after an
      astral character, IR broken and fixed, several changes per
      notification, one full-text change), tracking the text client-side
      with UTF-16 offsets. A hover right after the last change must be
      answered; the diagnostics published for the final version must equal
      `tosa-lsp check --format=json` on the final text (byte columns
      converted to UTF-16), as must those of every intermediate version the
      server published. No published version may exceed the last one sent
      or go backwards. Definition / references / document symbols on lines
      with astral characters are checked against the client-side text.
      Run with the default debounce, with --debounce=0, and with
      --debounce=0 plus jitter between edits.
  (b) no request waits on a stale parse: a document big enough that one
      analysis takes noticeably long (sized adaptively, measured); an edit,
      then a hover while that analysis runs: the hover reply must arrive
      before the new version's publishDiagnostics, answered from the
      previous snapshot.
  (c) cancellation: open a new big document, hover, `$/cancelRequest`: the
      reply is a result or error -32800, exactly once. Requests on a new
      document without cancellation are answered once its first snapshot
      exists.
  (d) malformed input (not JSON; JSON without "jsonrpc"; bad params;
      unknown method; unknown document): the server keeps serving.
  (e) a request waiting for a new document's first snapshot is answered
      even when the document is closed (or closed and reopened) first.
  (f) lowering previews (run on their own threads): source mappings agree
      with the text version lowered even right after an edit; previews,
      edits and hovers interleave; a document nested too deeply to parse
      does not crash the server.
  (g) a change whose position is past the end of its line is clamped, as
      the LSP spec says (not rejected).

Prints PASS/FAIL lines, timings, and finally
`lsp-concurrency: N passed, M failed`; exits 1 if anything failed.
"""

import argparse
import os
import random
import re
import statistics
import sys
import tempfile
import threading
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lsp_client import (  # noqa: E402
    INVALID_PARAMS, METHOD_NOT_FOUND, REQUEST_CANCELLED, LspClient, LspError,
    LspTimeout, ServerDied, TextDocument, check_json, expected_lsp_diagnostics,
    index_to_utf16, lsp_diagnostics_tuples, make_range, path_to_uri, utf16_len)


# --------------------------------------------------------------------------
# Bookkeeping
# --------------------------------------------------------------------------

class Results:
    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.lock = threading.Lock()

    def check(self, cond, name, detail=""):
        with self.lock:
            if cond:
                self.passed += 1
                print("PASS %s" % name)
            else:
                self.failed += 1
                print("FAIL %s%s" % (name, (": " + detail) if detail else ""))
        sys.stdout.flush()
        return cond

    def summary(self):
        return "lsp-concurrency: %d passed, %d failed" % (self.passed, self.failed)


RESULTS = Results()
CLIENTS = []


def info(msg):
    print(msg)
    sys.stdout.flush()


def start_server(args, extra):
    c = LspClient([args.tosa_lsp, "serve"] + extra, default_timeout=args.wait)
    CLIENTS.append(c)
    c.initialize()
    return c


def finish_server(c, name):
    """shutdown + exit; the exit code must be 0 and stdout well framed."""
    try:
        rc = c.shutdown(timeout=20)
        RESULTS.check(rc == 0, "%s: shutdown/exit, exit code 0" % name, "exit code %s" % rc)
    except Exception as e:  # noqa: BLE001
        RESULTS.check(False, "%s: shutdown/exit" % name, repr(e))
    RESULTS.check(not c.protocol_errors, "%s: well-formed server output" % name,
                  "; ".join(c.protocol_errors[:5]))
    c.kill()


def run_part(name, fn, *a):
    """Runs one part; an exception (timeout, dead server) is one failure."""
    try:
        fn(*a)
    except Exception as e:  # noqa: BLE001
        RESULTS.check(False, "%s: completed without exception" % name,
                      "%s: %s\n%s" % (type(e).__name__, e, traceback.format_exc()))
        for c in CLIENTS:  # earlier parts' servers have exited already
            c.kill()


def diag_compare(args, path, text, published):
    """(equal, expected, got, check-json) for `published` vs check on text."""
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text)
    chk = check_json(args.tosa_lsp, path)
    exp = sorted(expected_lsp_diagnostics(chk, text), key=repr)
    got = sorted(lsp_diagnostics_tuples(published), key=repr)
    return exp == got, exp, got, chk


def diff_text(exp, got, limit=6):
    lines = []
    for e in exp:
        if e not in got:
            lines.append("  missing: %r" % (e,))
    for g in got:
        if g not in exp:
            lines.append("  extra:   %r" % (g,))
    return "\n" + "\n".join(lines[:limit]) if lines else " (same set, different multiplicity)"


# --------------------------------------------------------------------------
# (a) the edit storm
# --------------------------------------------------------------------------

BASE_TEXT = """\
// Concurrency test: é ✓ 😀
func.func @"é😀✓"(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  // first function: ä ✓ 😀
  %0 = tosa.add %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  // é😀✓%t1 = tosa.sub %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = tosa.sub %0, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  // é😀✓%t2 = tosa.maximum %b, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %1 : tensor<3xf32>
}

// second function
func.func @second(%x: tensor<1x4xf32>, %y: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %s0 = tosa.add %x, %y : (tensor<1x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %s1 = tosa.maximum %s0, %y : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  // é😀✓%t3 = tosa.sub %x, %y : (tensor<1x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %s1 : tensor<2x4xf32>
}

// -----

// section two 😀
func.func @"😀😀"(%a: tensor<3xf32>) -> tensor<3xf32> {
  %0 = tosa.abs %a : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @third(%p: tensor<?x3xf32>, %q: tensor<1x3xf32>) -> tensor<?x3xf32> {
  %0 = tosa.add %p, %q {note = "é😀✓"} : (tensor<?x3xf32>, tensor<1x3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}
"""

# Characters typed into comments: ASCII, 2- and 3-byte UTF-8 (1 UTF-16
# unit) and astral (4 bytes, 2 UTF-16 units). No '-' or '%' (they would make
# a comment look like a section separator or a toggle line).
POOL = ["a", "b", "z", " ", "x", "é", "ß", "✓", "中", "😀", "🎉"]

# A commented-out op: `  // é😀✓%tN = ...`. Uncommenting deletes the 7
# UTF-16 units `// é😀✓` (13 bytes), whose end is right after an astral
# character: a server converting positions wrongly leaves part of the prefix
# or eats the `%`, and the IR no longer parses.
TOGGLE_PREFIX = "// é😀✓"
TOGGLE_RE = re.compile(r"^  (// é😀✓)?%t\d+ = ")

# Breakages (original snippet, broken snippet), each unique in the text.
# The edit is the minimal differing middle, so several sit after astral
# characters on their line.
RECIPES = [
    ("%1 = tosa.sub %0, %b", "%1 = tosa.sux %0, %b"),
    ("%b: tensor<3xf32>) -> tensor<3xf32> {", "%b: tensor<3xf32) -> tensor<3xf32> {"),
    ('{note = "é😀✓"} : (', '{note = "é😀✓"} @@ : ('),
    ("%s1 = tosa.maximum %s0, %y", "%s1 = tosa.maximum %s0 %y"),
    # A use before its definition: a verifier error with a located note.
    ("%0 = tosa.add %a, %b", "%0 = tosa.add %a, %1"),
]
# The errors the final text must have (and nothing else of error severity).
E2_RECIPE = ('@"😀😀"(%a: tensor<3xf32>)', '@"😀😀"(%a: tensor<3xbogus>)')
# The first function; its quoted name is edited too.
FIRST_FUNC_RE = re.compile(r'func\.func @"([^"]*)"\(%a: tensor<3xf32>, %b')
E1_LINE = "  %e1 = tosa.add %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<4xf32>\n"
E1_BEFORE = "  return %1 : tensor<3xf32>\n"
EXPECTED_FINAL_ERRORS = [
    "'tosa.add' op result type '4' not broadcast compatible with broadcasted "
    "operands's shapes '3'",
    "expected non-function type",
]


def is_comment_line(line):
    s = line.lstrip()
    return s.startswith("//") and not s.startswith("// -----") and "%" not in line


class EditGenerator:
    """Produces edits against `doc` (applying each to it immediately)."""

    def __init__(self, doc, rng):
        self.doc = doc
        self.rng = rng
        self.broken = []  # indices into RECIPES currently broken
        self.counter = 0

    # -- helpers -----------------------------------------------------------

    def pos_in_line(self, line_no, index):
        line = self.doc.lines()[line_no]
        return {"line": line_no, "character": index_to_utf16(line, index)}

    def apply(self, change):
        self.doc.apply(change)
        return change

    def comment_lines(self):
        return [i for i, l in enumerate(self.doc.lines()) if is_comment_line(l)]

    @staticmethod
    def body_start(line):
        return line.index("//") + 2

    def recipe_change(self, frm, to):
        text = self.doc.text
        assert text.count(frm) == 1, "test bug: %r occurs %d times" % (frm, text.count(frm))
        assert to not in text, "test bug: %r already present" % to
        p = text.index(frm)
        cp = 0
        while cp < min(len(frm), len(to)) and frm[cp] == to[cp]:
            cp += 1
        cs = 0
        while (cs < min(len(frm), len(to)) - cp and frm[len(frm) - 1 - cs] == to[len(to) - 1 - cs]):
            cs += 1
        b, e = p + cp, p + len(frm) - cs
        return self.apply({"range": make_range(self.doc.position(b), self.doc.position(e)),
                           "text": to[cp:len(to) - cs]})

    # -- edit kinds (each returns one applied change) ------------------------

    def insert_comment_line(self):
        self.counter += 1
        n = len(self.doc.lines())
        line_no = self.rng.randrange(n)
        text = "// é ✓ 😀 n%d\n" % self.counter
        return self.apply({"range": make_range(self.pos_in_line(line_no, 0),
                                               self.pos_in_line(line_no, 0)),
                           "text": text})

    def type_in_comment(self):
        cl = self.comment_lines()
        if not cl:
            return self.insert_comment_line()
        line_no = self.rng.choice(cl)
        line = self.doc.lines()[line_no]
        i = self.rng.randint(self.body_start(line), len(line))
        s = "".join(self.rng.choice(POOL) for _ in range(self.rng.randint(1, 3)))
        p = self.pos_in_line(line_no, i)
        return self.apply({"range": make_range(p, p), "text": s})

    def delete_in_comment(self, replacement=""):
        cl = [i for i in self.comment_lines()
              if len(self.doc.lines()[i]) > self.body_start(self.doc.lines()[i])]
        if not cl:
            return self.type_in_comment()
        line_no = self.rng.choice(cl)
        line = self.doc.lines()[line_no]
        b0 = self.body_start(line)
        i = self.rng.randint(b0, len(line) - 1)
        j = self.rng.randint(i + 1, min(len(line), i + 4))
        return self.apply({"range": make_range(self.pos_in_line(line_no, i),
                                               self.pos_in_line(line_no, j)),
                           "text": replacement})

    def replace_in_comment(self):
        return self.delete_in_comment(self.rng.choice(POOL) + self.rng.choice(POOL))

    def split_comment(self):
        cl = self.comment_lines()
        if not cl:
            return self.insert_comment_line()
        line_no = self.rng.choice(cl)
        line = self.doc.lines()[line_no]
        i = self.rng.randint(self.body_start(line), len(line))
        p = self.pos_in_line(line_no, i)
        return self.apply({"range": make_range(p, p), "text": "\n  // ✓"})

    def join_comments(self):
        lines = self.doc.lines()
        pairs = [i for i in range(len(lines) - 1)
                 if is_comment_line(lines[i]) and is_comment_line(lines[i + 1])]
        if not pairs:
            return self.split_comment()
        l0 = self.rng.choice(pairs)
        a, b = lines[l0], lines[l0 + 1]
        i = self.rng.randint(self.body_start(a), len(a))
        j = self.rng.randint(self.body_start(b), len(b))
        return self.apply({"range": make_range(self.pos_in_line(l0, i),
                                               self.pos_in_line(l0 + 1, j)),
                           "text": self.rng.choice(["", " 😀 ", "é"])})

    def toggle(self):
        lines = self.doc.lines()
        tl = [i for i, l in enumerate(lines) if TOGGLE_RE.match(l)]
        line_no = self.rng.choice(tl)
        line = lines[line_no]
        if line[2:].startswith(TOGGLE_PREFIX):
            return self.apply({"range": make_range(
                {"line": line_no, "character": 2},
                {"line": line_no, "character": 2 + utf16_len(TOGGLE_PREFIX)}), "text": ""})
        p = {"line": line_no, "character": 2}
        return self.apply({"range": make_range(p, p), "text": TOGGLE_PREFIX})

    def rename_func(self):
        """Types into / deletes from the quoted name of the first function
        (document symbols show the exact name, so a misplaced edit shows)."""
        m = FIRST_FUNC_RE.search(self.doc.text)
        b, e = m.start(1), m.end(1)
        if e - b > 2 and self.rng.random() < 0.4:
            i = self.rng.randint(b, e - 2)
            j = self.rng.randint(i + 1, min(e - 1, i + 2))
            text = ""
        else:
            i = j = self.rng.randint(b, e)
            text = "".join(self.rng.choice(POOL) for _ in range(self.rng.randint(1, 2)))
        return self.apply({"range": make_range(self.doc.position(i), self.doc.position(j)),
                           "text": text})

    def break_ir(self):
        free = [k for k in range(len(RECIPES)) if k not in self.broken]
        k = self.rng.choice(free)
        self.broken.append(k)
        return self.recipe_change(*RECIPES[k])

    def fix_ir(self, k=None):
        if k is None:
            k = self.rng.choice(self.broken)
        self.broken.remove(k)
        frm, to = RECIPES[k]
        return self.recipe_change(to, frm)

    SAFE = ["insert_comment_line", "type_in_comment", "delete_in_comment",
            "replace_in_comment", "split_comment", "join_comments", "toggle",
            "rename_func"]
    SAFE_WEIGHTS = [3, 4, 3, 1, 1, 1, 2, 2]

    def safe_edit(self):
        kind = self.rng.choices(self.SAFE, self.SAFE_WEIGHTS)[0]
        return getattr(self, kind)()

    def next_changes(self, i, total):
        """The contentChanges of edit number i (1-based) of `total`."""
        if i == total // 4:  # one full-text (range-less) change
            self.doc.apply({"text": self.doc.text + "// full sync é 😀\n"})
            return [{"text": self.doc.text}]
        if i == total * 3 // 10:
            return [self.recipe_change(*E2_RECIPE)]
        if i == total * 6 // 10:
            p = self.doc.text.index(E1_BEFORE)
            pos = self.doc.position(p)
            return [self.apply({"range": make_range(pos, pos), "text": E1_LINE})]
        if i == total:  # the last edit fixes the last breakage
            assert len(self.broken) == 1
            return [self.fix_ir()]
        if i >= total - min(14, total // 10):  # wind down: one breakage left for the end
            if not self.broken:
                return [self.break_ir()]
            if len(self.broken) > 1:
                return [self.fix_ir()]
            return [self.safe_edit()]
        kinds = ["safe", "multi"]
        weights = [15, 2]
        if len(self.broken) < 2:
            kinds.append("break")
            weights.append(1.5)
        if self.broken:
            kinds.append("fix")
            weights.append(2)
        kind = self.rng.choices(kinds, weights)[0]
        if kind == "safe":
            return [self.safe_edit()]
        if kind == "break":
            return [self.break_ir()]
        if kind == "fix":
            return [self.fix_ir()]
        return [self.safe_edit() for _ in range(self.rng.randint(2, 4))]


def expected_symbol_selections(text):
    """{name: (line, start, end)} of `func.func @name` in `text` (UTF-16)."""
    out = {}
    for ln, line in enumerate(text.split("\n")):
        m = re.match(r'func\.func (@(?:"[^"]*"|[A-Za-z_][\w$.]*))', line)
        if m:
            raw = m.group(1)
            name = "@" + raw[1:].strip('"')
            out[name] = (ln, index_to_utf16(line, m.start(1)), index_to_utf16(line, m.end(1)))
    return out


def function_token_ranges(text, header_offset, token):
    """UTF-16 ranges of `token` (e.g. "%b") in code lines of the function
    whose header starts at `header_offset`."""
    lines = text.split("\n")
    start = text.count("\n", 0, header_offset)
    out = set()
    for ln in range(start, len(lines)):
        line = lines[ln]
        if ln > start and line.startswith("}"):
            break
        if line.lstrip().startswith("//"):
            continue
        for m in re.finditer(re.escape(token) + r"(?![\w$.])", line):
            out.add((ln, index_to_utf16(line, m.start()), index_to_utf16(line, m.end())))
    return out


def ranges_of(locations):
    return {(l["range"]["start"]["line"], l["range"]["start"]["character"],
             l["range"]["end"]["character"]) for l in locations}


def part_a(args, workdir, label, server_args, jitter, seed):
    name = "(a:%s)" % label
    path = os.path.join(workdir, "storm-%s.mlir" % label)
    doc = TextDocument(path_to_uri(path), BASE_TEXT, version=1)
    texts = {1: doc.text}
    gen = EditGenerator(doc, random.Random(seed))
    jrng = random.Random(seed + 1)
    c = start_server(args, server_args)
    c.notify("textDocument/didOpen", doc.open_params())

    # 200 rapid didChanges, a hover every 25 edits.
    hover_ids = []
    t_start = time.monotonic()
    for i in range(1, args.edits + 1):
        changes = gen.next_changes(i, args.edits)
        doc.version += 1
        c.notify("textDocument/didChange", {
            "textDocument": {"uri": doc.uri, "version": doc.version},
            "contentChanges": changes})
        texts[doc.version] = doc.text
        if i % 25 == 0 and i != args.edits:
            lines = doc.lines()
            ln = jrng.randrange(len(lines))
            ch = index_to_utf16(lines[ln], jrng.randint(0, len(lines[ln])))
            hover_ids.append(c.send_request("textDocument/hover", doc.position_params(ln, ch))[0])
        if jitter and jrng.random() < 0.5:
            time.sleep(jrng.uniform(0, 0.004))
    final_version = doc.version
    final_text = doc.text
    t_last_edit = time.monotonic()

    # A hover right after the last change must be answered (no hang).
    op = final_text.index("%0 = tosa.add %a, %b") + len("%0 = ")
    op_pos = doc.position(op)
    hid, t_hover = c.send_request("textDocument/hover",
                                  doc.position_params(op_pos["line"], op_pos["character"]))
    t_send_done = time.monotonic()
    m = c.wait_response(hid, timeout=args.wait)
    RESULTS.check("error" not in m.body, "%s hover right after the last change answered" % name,
                  repr(m.body.get("error")))
    hover_latency = m.time - t_hover

    pub = c.wait_for_diagnostics(doc.uri, final_version, timeout=args.wait)
    info("%s %d edits sent in %.3fs; hover after last edit answered in %.1f ms; "
         "final diagnostics (version %d) %.1f ms after the last edit"
         % (name, args.edits, t_send_done - t_start, hover_latency * 1e3,
            final_version, (pub.time - t_last_edit) * 1e3))

    for h in hover_ids:
        r = c.wait_response(h, timeout=args.wait)
        if "error" in r.body:
            RESULTS.check(False, "%s interleaved hover %d answered" % (name, h), repr(r.body))
            break
    else:
        RESULTS.check(True, "%s %d interleaved hovers answered" % (name, len(hover_ids)))

    # Final diagnostics == check on the final text.
    eq, exp, got, chk = diag_compare(args, path, final_text, pub.body["params"]["diagnostics"])
    RESULTS.check(eq, "%s final diagnostics equal `check --format=json` on the final text"
                  % name, diff_text(exp, got))
    errors = sorted(d["message"] for f in chk["files"] for d in f["diagnostics"]
                    if d["severity"] == "error")
    RESULTS.check(errors == sorted(EXPECTED_FINAL_ERRORS),
                  "%s final text has exactly the known errors" % name, repr(errors))
    e2 = [d for f in chk["files"] for d in f["diagnostics"]
          if d["message"] == "expected non-function type"]
    if e2:
        # The parse error sits after two astral characters: its byte column
        # and UTF-16 column differ by 4 (2 UTF-16 units per 4-byte char).
        lsp = [d for d in pub.body["params"]["diagnostics"]
               if d["message"] == "expected non-function type"]
        line = final_text.split("\n")[e2[0]["line"] - 1]
        want = index_to_utf16(line, line.index("bogus"))
        RESULTS.check(len(lsp) == 1 and lsp[0]["range"]["start"]["character"] == want,
                      "%s parse error after astral chars at UTF-16 column %d" % (name, want),
                      repr(lsp))

    # Published versions: never beyond the last sent, never backwards; each
    # published intermediate version matches check on that version's text.
    pubs = [p for p in c.diagnostics_messages(doc.uri)]
    versions = [p.body["params"].get("version") for p in pubs]
    RESULTS.check(all(v is not None and v <= final_version for v in versions),
                  "%s no publishDiagnostics beyond the last version sent (%d)"
                  % (name, final_version), repr([v for v in versions if v is None or v > final_version]))
    RESULTS.check(all(a < b for a, b in zip(versions, versions[1:])),
                  "%s published versions strictly increase" % name, repr(versions))
    published = set(versions)
    skipped = [v for v in range(1, final_version + 1) if v not in published]
    info("%s published %d of %d versions, %d analyses skipped (superseded); published: %s"
         % (name, len(published), final_version, len(skipped),
            ",".join(str(v) for v in sorted(published))))
    sample = [p for p in pubs if p.body["params"].get("version") != final_version]
    if len(sample) > args.max_checks:
        step = len(sample) / args.max_checks
        sample = [sample[int(k * step)] for k in range(args.max_checks)]
    bad = []
    n_diags = n_notes = 0
    for p in sample:
        v = p.body["params"]["version"]
        if v not in texts:
            continue
        eq, exp, got, _ = diag_compare(args, path, texts[v], p.body["params"]["diagnostics"])
        n_diags += len(got)
        n_notes += sum(1 for g in got if g[-1])
        if not eq:
            bad.append((v, diff_text(exp, got, 4)))
    info("%s compared %d intermediate versions: %d diagnostics, %d with related notes"
         % (name, len(sample), n_diags, n_notes))
    RESULTS.check(not bad, "%s %d intermediate published versions match check on their text"
                  % (name, len(sample)),
                  "" if not bad else "version %d:%s" % bad[0])

    # Position conversion on lines with astral characters, now that the
    # final snapshot is published.
    r = c.request("textDocument/hover", doc.position_params(op_pos["line"], op_pos["character"]))
    RESULTS.check(r is not None and r["range"]["start"] == op_pos
                  and r["range"]["end"]["character"] == op_pos["character"] + len("tosa.add"),
                  "%s hover on the final snapshot covers `tosa.add`" % name, repr(r and r.get("range")))
    use = doc.position(final_text.index("%0 = tosa.add %a, %b") + len("%0 = tosa.add "))
    first = FIRST_FUNC_RE.search(final_text)
    want = doc.position(first.end(0) - len("%a: tensor<3xf32>, %b"))
    r = c.request("textDocument/definition", doc.position_params(use["line"], use["character"]))
    RESULTS.check(isinstance(r, list) and len(r) == 1 and r[0]["range"]["start"] == want
                  and r[0]["range"]["end"]["character"] == want["character"] + 2,
                  "%s definition of %%a lands after the astral chars (UTF-16 %d:%d)"
                  % (name, want["line"], want["character"]), repr(r))
    bdef = doc.position(final_text.index("%b: tensor<3xf32>) -> tensor<3xf32> {"))
    r = c.request("textDocument/references", {
        "textDocument": doc.ident(), "position": bdef,
        "context": {"includeDeclaration": True}})
    want_refs = function_token_ranges(final_text, first.start(0), "%b")
    RESULTS.check(isinstance(r, list) and ranges_of(r) == want_refs,
                  "%s references of %%b (asked at a UTF-16 column after astral chars)" % name,
                  "got %r want %r" % (sorted(ranges_of(r or [])), sorted(want_refs)))
    syms = c.request("textDocument/documentSymbol", {"textDocument": doc.ident()})
    got_syms = {}

    def walk(ss):
        for s in ss:
            sr = s["selectionRange"]
            got_syms[s["name"]] = (sr["start"]["line"], sr["start"]["character"],
                                   sr["end"]["character"])
            walk(s.get("children", []))
    walk(syms or [])
    want_syms = expected_symbol_selections(final_text)
    want_syms.pop('@😀😀', None)  # its section does not parse in the final text
    info("%s first function's name after the edits: %s" % (name, "@" + first.group(1)))
    RESULTS.check(all(got_syms.get(k) == v for k, v in want_syms.items()),
                  "%s document symbols: names and UTF-16 selection ranges" % name,
                  "got %r want %r" % (got_syms, want_syms))

    shown = [m.body for m in c.notifications if m.body.get("method") == "window/showMessage"]
    RESULTS.check(not shown, "%s no window/showMessage (server never lost sync)" % name,
                  repr(shown[:2]))
    finish_server(c, name)


# --------------------------------------------------------------------------
# (b)-(e) big documents
# --------------------------------------------------------------------------

def make_big(n):
    lines = ["// big document, %d ops" % n,
             "func.func @big(%a: tensor<2x3xf32>, %b: tensor<1x3xf32>) -> tensor<2x3xf32> {"]
    prev = "%a"
    for i in range(n):
        lines.append("  %%v%d = tosa.add %s, %%b : (tensor<2x3xf32>, tensor<1x3xf32>) "
                     "-> tensor<2x3xf32>" % (i, prev))
        prev = "%%v%d" % i
    lines.append("  return %s : tensor<2x3xf32>" % prev)
    lines.append("}")
    # A small function after the big one: what an edit in @big moves.
    lines.append("func.func @small(%a: tensor<2x3xf32>, %b: tensor<1x3xf32>) -> tensor<2x3xf32> {")
    lines.append("  %s0 = tosa.add %a, %b : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>")
    lines.append("  return %s0 : tensor<2x3xf32>")
    lines.append("}")
    return "\n".join(lines) + "\n"


def small_op_line(doc):
    """The line of @small's op."""
    return next(i for i, l in enumerate(doc.lines()) if l.startswith("  %s0 = tosa.add"))


def op_position(doc, line_no):
    """Position of `tosa.add` on line `line_no` of `doc`."""
    line = doc.lines()[line_no]
    return {"line": line_no, "character": index_to_utf16(line, line.index("tosa.add"))}


def insert_line_change(doc, line_no, text):
    p = {"line": line_no, "character": 0}
    return [{"range": make_range(p, p), "text": text}]


def timed_edit(c, doc, changes):
    """Applies and sends a didChange; returns the send time."""
    t0 = time.monotonic()
    c.notify("textDocument/didChange", doc.change_params(changes))
    return t0


def part_bcde(args, workdir):
    debounce = args.debounce_ms / 1000.0
    c = start_server(args, ["--debounce=%d" % args.debounce_ms])

    # Size the document so that one analysis takes at least --target-ms.
    n = args.big_ops
    uri = path_to_uri(os.path.join(workdir, "big.mlir"))
    doc = TextDocument(uri, make_big(n))
    t0 = time.monotonic()
    c.notify("textDocument/didOpen", doc.open_params())
    pub = c.wait_for_diagnostics(uri, doc.version, timeout=args.wait)
    info("(b) opened %d ops: first diagnostics after %.0f ms" % (n, (pub.time - t0) * 1e3))
    analysis = 0.0
    for _ in range(4):
        t0 = timed_edit(c, doc, insert_line_change(doc, 0, "// sizing é😀\n"))
        pub = c.wait_for_diagnostics(uri, doc.version, timeout=args.wait)
        analysis = pub.time - t0 - debounce
        info("(b) %d ops: edit -> diagnostics %.0f ms (analysis ~%.0f ms after the %d ms debounce)"
             % (n, (pub.time - t0) * 1e3, analysis * 1e3, args.debounce_ms))
        if analysis * 1e3 >= args.target_ms or n >= args.max_ops:
            break
        n = min(args.max_ops, int(n * args.target_ms * 1.3 / max(analysis * 1e3, 5.0)))
        doc.change_params([{"text": make_big(n)}])
        c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": doc.version},
                                            "contentChanges": [{"text": doc.text}]})
        c.wait_for_diagnostics(uri, doc.version, timeout=args.wait)
    big_text = doc.text
    info("(b) big document: %d ops, %d lines, %.1f MB; one analysis takes %.0f ms"
         % (n, len(doc.lines()), len(doc.text.encode()) / 1e6, analysis * 1e3))
    RESULTS.check(analysis * 1e3 >= args.target_ms / 2,
                  "(b) one analysis of the big document takes noticeably long (%.0f ms)"
                  % (analysis * 1e3), "the document could not be made big enough")

    # (b1) an edit in @big, then at once a hover in @small, which the edit
    # moved down a line: the previous snapshot answers (before the new
    # version's diagnostics), at the op's new place.
    since = len(c.notifications)
    t0 = timed_edit(c, doc, insert_line_change(doc, 10, "// inserted é 😀\n"))
    pos = op_position(doc, small_op_line(doc))
    hid, t1 = c.send_request("textDocument/hover", doc.position_params(**pos))
    r = c.wait_response(hid, timeout=args.wait)
    pub = c.wait_for_diagnostics(uri, doc.version, timeout=args.wait, since=since)
    info("(b1) hover sent %.1f ms after the edit: reply after %.1f ms, new diagnostics after %.0f ms"
         % ((t1 - t0) * 1e3, (r.time - t1) * 1e3, (pub.time - t0) * 1e3))
    res = r.body.get("result")
    RESULTS.check("error" not in r.body and r.time < pub.time,
                  "(b1) hover outside the edited function answered before that version's diagnostics",
                  "reply %.3f publish %.3f %r" % (r.time, pub.time, r.body.get("error")))
    RESULTS.check(res is not None and res["range"]["start"] == pos,
                  "(b1) its range is in the client's text (%d:%d)" % (pos["line"], pos["character"]),
                  repr(res and res.get("range")))

    # (b2) while the analysis of the new version runs: a hover outside the
    # edited function is answered at once; one on the line the edit wrote
    # waits for that version (which has a comment there: no hover).
    # A round whose hover left the client only after the new version's
    # diagnostics had arrived (the client's own sleep overran on a loaded
    # machine: sent 430-445 ms after the edit instead of ~250) shows
    # nothing either way: it is run again, up to as many times again.
    lat, anal = [], []
    k = attempt = 0
    while k < args.busy_rounds and attempt < 2 * args.busy_rounds:
        attempt += 1
        op_line = 20 + 7 * attempt
        since = len(c.notifications)
        t0 = timed_edit(c, doc, insert_line_change(doc, op_line, "// busy round %d é 😀\n" % k))
        time.sleep(debounce + min(0.25 * analysis, 0.2))
        pos = op_position(doc, small_op_line(doc))
        hid, t1 = c.send_request("textDocument/hover", doc.position_params(**pos))
        edited = {"line": op_line, "character": 2}
        hid2, _ = c.send_request("textDocument/hover", doc.position_params(**edited))
        r = c.wait_response(hid, timeout=args.wait)
        r2 = c.wait_response(hid2, timeout=args.wait)
        pub = c.wait_for_diagnostics(uri, doc.version, timeout=args.wait, since=since)
        info("(b2) round %d: hover sent %.0f ms after the edit, answered in %.1f ms; "
             "diagnostics of the new version %.0f ms after the edit"
             % (k, (t1 - t0) * 1e3, (r.time - t1) * 1e3, (pub.time - t0) * 1e3))
        if pub.time <= t1:
            info("(b2) round %d: the diagnostics came before the hover was sent; again" % k)
            continue
        lat.append(r.time - t1)
        anal.append(pub.time - t0 - debounce)
        res = r.body.get("result")
        RESULTS.check("error" not in r.body and r.time < pub.time,
                      "(b2) round %d: hover outside the edited function answered before the new "
                      "version's diagnostics" % k,
                      "reply %.3f publish %.3f %r" % (r.time - t0, pub.time - t0, r.body.get("error")))
        RESULTS.check(res is not None and res["range"]["start"] == pos,
                      "(b2) round %d: at the op's place in the client's text (%d:%d)"
                      % (k, pos["line"], pos["character"]), repr(res and res.get("range")))
        RESULTS.check("error" not in r2.body and r2.time >= pub.time
                      and r2.body.get("result") is None,
                      "(b2) round %d: a hover on the edited line waits for its version: the "
                      "comment there has none" % k,
                      "reply %.3f publish %.3f %r" % (r2.time - t0, pub.time - t0, r2.body))
        k += 1
    RESULTS.check(k == args.busy_rounds,
                  "(b2) %d rounds with the hover sent while the new version's analysis ran"
                  % args.busy_rounds, "%d of %d attempts" % (k, attempt))
    if lat:
        info("(b) hover latency while busy: min %.1f / median %.1f / max %.1f ms; "
             "analysis of the big document: median %.0f ms"
             % (min(lat) * 1e3, statistics.median(lat) * 1e3, max(lat) * 1e3,
                statistics.median(anal) * 1e3))

    part_c(args, workdir, c, big_text)
    part_d(args, c, doc)
    part_e(args, workdir, c, big_text, analysis)
    finish_server(c, "(b-e)")


def part_c(args, workdir, c, big_text):
    # (c1) open + hover + cancel.
    uri = path_to_uri(os.path.join(workdir, "big-cancel.mlir"))
    doc = TextDocument(uri, big_text)
    c.notify("textDocument/didOpen", doc.open_params())
    pos = op_position(doc, 5)
    hid, t1 = c.send_request("textDocument/hover", doc.position_params(**pos))
    c.cancel(hid)
    r = c.wait_response(hid, timeout=args.wait)
    if "error" in r.body:
        outcome = "error %s (%s)" % (r.body["error"].get("code"), r.body["error"].get("message"))
        ok = r.body["error"].get("code") == REQUEST_CANCELLED
    else:
        outcome = "normal result (snapshot was ready)"
        ok = True
    info("(c) hover + $/cancelRequest on a new big document: %s after %.1f ms"
         % (outcome, (r.time - t1) * 1e3))
    RESULTS.check(ok, "(c) cancelled request answered with a result or -32800", outcome)
    c.wait_for_diagnostics(uri, 1, timeout=args.wait)
    time.sleep(0.2)
    RESULTS.check(len(c.responses_for(hid)) == 1,
                  "(c) cancelled request answered exactly once",
                  "%d responses" % len(c.responses_for(hid)))
    r = c.request("textDocument/hover", doc.position_params(**pos))
    RESULTS.check(r is not None and r["range"]["start"] == pos,
                  "(c) hover after the first snapshot works", repr(r))
    # Cancelling an already answered request is harmless.
    c.cancel(hid)

    # (c2) requests on a new document, not cancelled: answered once its
    # first snapshot exists.
    uri2 = path_to_uri(os.path.join(workdir, "big-deferred.mlir"))
    doc2 = TextDocument(uri2, big_text)
    t0 = time.monotonic()
    c.notify("textDocument/didOpen", doc2.open_params())
    ids = {
        "hover": c.send_request("textDocument/hover", doc2.position_params(**pos))[0],
        "documentSymbol": c.send_request("textDocument/documentSymbol",
                                         {"textDocument": doc2.ident()})[0],
        "inlayHint": c.send_request("textDocument/inlayHint", {
            "textDocument": doc2.ident(),
            "range": make_range({"line": 0, "character": 0}, {"line": 20, "character": 0})})[0],
    }
    for method, i in ids.items():
        r = c.wait_response(i, timeout=args.wait)
        RESULTS.check("error" not in r.body and r.body.get("result") is not None,
                      "(c2) %s on a just-opened document answered after its first analysis "
                      "(%.0f ms)" % (method, (r.time - t0) * 1e3), repr(r.body.get("error")))
    c.notify("textDocument/didClose", {"textDocument": doc.ident()})
    c.notify("textDocument/didClose", {"textDocument": doc2.ident()})


def part_d(args, c, doc):
    c.send_body(b"this is not JSON {{{")
    c.send_body(b'{"id": 9001, "method": "textDocument/hover", "params": '
                b'{"textDocument": {"uri": "' + doc.uri.encode() + b'"}, '
                b'"position": {"line": 3, "character": 8}}}')
    c.send_body(b"[1, 2, 3]")
    c.send_body(b'{"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"bogus": 1}}')
    c.send_body(b'{"jsonrpc": "2.0", "method": "textDocument/didChange", "params": '
                b'{"textDocument": {"uri": "file:///nowhere/never-opened.mlir", "version": 3}, '
                b'"contentChanges": [{"text": "x"}]}}')
    pos = op_position(doc, 30)
    r = c.request("textDocument/hover", doc.position_params(**pos), timeout=args.wait)
    RESULTS.check(r is not None and r["range"]["start"] == pos,
                  "(d) server keeps serving after malformed messages", repr(r))
    got = c.responses_for(9001)
    info("(d) the request without \"jsonrpc\" got %s"
         % ("no reply (ignored)" if not got else "reply %r" % got[0].body))
    try:
        c.request("tosa/noSuchMethod", {}, timeout=args.wait)
        RESULTS.check(False, "(d) unknown method answered with -32601", "got a result")
    except LspError as e:
        RESULTS.check(e.code == METHOD_NOT_FOUND, "(d) unknown method answered with -32601",
                      "code %s" % e.code)
    try:
        c.request("textDocument/hover", {"textDocument": {"uri": "file:///nowhere/x.mlir"},
                                         "position": {"line": 0, "character": 0}},
                  timeout=args.wait)
        RESULTS.check(False, "(d) unknown document answered with -32602", "got a result")
    except LspError as e:
        RESULTS.check(e.code == INVALID_PARAMS, "(d) unknown document answered with -32602",
                      "code %s" % e.code)
    try:
        c.request("textDocument/hover", {"textDocument": doc.ident()}, timeout=args.wait)
        RESULTS.check(False, "(d) hover without a position answered with an error", "got a result")
    except LspError as e:
        RESULTS.check(e.code == INVALID_PARAMS,
                      "(d) hover without a position answered with -32602", "code %s" % e.code)
    r = c.request("textDocument/hover", doc.position_params(**pos), timeout=args.wait)
    RESULTS.check(r is not None, "(d) still serving after error replies", repr(r))


def part_e(args, workdir, c, big_text, analysis):
    # Bound: a debounce, a few analyses, slack for a loaded machine.
    bound = args.debounce_ms / 1000.0 + 4 * analysis + 5.0
    for variant in ("close", "close+reopen"):
        uri = path_to_uri(os.path.join(workdir, "big-%s.mlir" % variant.replace("+", "-")))
        doc = TextDocument(uri, big_text)
        c.notify("textDocument/didOpen", doc.open_params())
        hid, t1 = c.send_request("textDocument/hover", doc.position_params(**op_position(doc, 5)))
        c.notify("textDocument/didClose", {"textDocument": doc.ident()})
        if variant == "close+reopen":
            c.notify("textDocument/didOpen", doc.open_params())
        try:
            r = c.wait_response(hid, timeout=bound)
            outcome = ("error %s" % r.body["error"].get("code")) if "error" in r.body else "result"
            RESULTS.check(True, "(e) hover pending on a document's first analysis, then "
                          "didClose%s: answered (%s)" % (
                              " + didOpen" if variant != "close" else "", outcome))
        except LspTimeout:
            RESULTS.check(False, "(e) hover pending on a document's first analysis, then "
                          "didClose%s: answered" % (" + didOpen" if variant != "close" else ""),
                          "no reply within %.1fs: the request waits forever (a request on a "
                          "new document waits for its first snapshot; didClose drops the "
                          "document and its waiters unanswered)" % bound)
            c.cancel(hid)  # releases it (answered -32800) so the server can shut down cleanly
        if variant == "close+reopen":
            c.wait_for_diagnostics(uri, doc.version, timeout=args.wait)
            c.notify("textDocument/didClose", {"textDocument": doc.ident()})


# --------------------------------------------------------------------------
# (f) lowering preview (runs on its own thread)
# --------------------------------------------------------------------------

PREVIEW_TEXT = """\
func.func @f(%a: tensor<3xf32>) -> tensor<3xf32> {
// ééééé comment with 2-byte characters
  %0 = tosa.abs %a : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
"""


def mapping_errors(mappings, texts):
    """Mappings of tosa ops whose sourcePosition does not point at that op's
    name in any of `texts` (the texts the preview may legitimately be of)."""
    bad = []
    for m in mappings:
        op, pos = m.get("sourceOp", ""), m.get("sourcePosition")
        if not op.startswith("tosa.") or pos is None:
            continue
        ok = False
        for t in texts:
            d = TextDocument("x", t)
            try:
                off = d.offset(pos["line"], pos["character"])
            except ValueError:
                continue
            ok |= t.startswith(op, off)
        if not ok:
            bad.append((op, pos))
    return bad


def part_f(args, workdir):
    # A long debounce makes "text newer than the latest snapshot" last.
    c = start_server(args, ["--debounce=2000"])
    uri = path_to_uri(os.path.join(workdir, "preview.mlir"))
    doc = TextDocument(uri, PREVIEW_TEXT)
    c.notify("textDocument/didOpen", doc.open_params())
    c.wait_for_diagnostics(uri, 1, timeout=args.wait)
    params = {"uri": uri, "function": "f", "stage": "linalg", "mode": "upstream"}
    r = c.request("tosa/previewLowering", params, timeout=args.wait)
    bad = mapping_errors(r.get("mappings", []), [doc.text])
    RESULTS.check(r.get("mappings") and not bad,
                  "(f) preview mappings point at the source ops", repr(bad[:3]))

    # Delete the comment line, then preview before the new version is
    # analysed: the mapping must be consistent with the text it lowered
    # (new) or with the snapshot (old), not line numbers of one converted
    # with the other's lines.
    old_text = doc.text
    c.notify("textDocument/didChange", doc.change_params(
        [{"range": make_range({"line": 1, "character": 0}, {"line": 2, "character": 0}),
          "text": ""}]))
    r = c.request("tosa/previewLowering", params, timeout=args.wait)
    bad = mapping_errors(r.get("mappings", []), [doc.text, old_text])
    RESULTS.check(r.get("mappings") and not bad,
                  "(f) preview right after an edit: source positions consistent with one "
                  "text version", "tosa op mappings pointing at no tosa op: %r (the op is at "
                  "%r in the edited text)" % (bad[:2], doc.find("tosa.abs")))

    # Previews run off the main thread: edits and hovers meanwhile.
    ids = [c.send_request("tosa/previewLowering", params)[0] for _ in range(3)]
    for k in range(20):
        p = doc.end_position()
        c.notify("textDocument/didChange", doc.change_params(
            [{"range": make_range(p, p), "text": "// more %d é😀\n" % k}]))
    t0 = time.monotonic()
    c.request("textDocument/hover", doc.position_params(0, 0), timeout=args.wait)
    RESULTS.check(True, "(f) hover answered while previews run (%.1f ms)"
                  % ((time.monotonic() - t0) * 1e3))
    c.cancel(ids[-1])
    for i in ids:
        m = c.wait_response(i, timeout=args.wait)
        if "error" in m.body and m.body["error"].get("code") != REQUEST_CANCELLED:
            RESULTS.check(False, "(f) concurrent previews answered", repr(m.body["error"]))
            break
    else:
        RESULTS.check(True, "(f) %d concurrent previews answered (one cancelled)" % len(ids))
    RESULTS.check(all(len(c.responses_for(i)) == 1 for i in ids),
                  "(f) each preview answered exactly once")
    finish_server(c, "(f)")

    # A document nested too deeply for the parser: the analysis refuses it
    # ("nesting deeper than ..."); previewing it must not crash the server.
    c = start_server(args, [])
    n = args.deep_nesting
    uri = path_to_uri(os.path.join(workdir, "deep.mlir"))
    text = ("func.func @deep(%a: tensor<3xf32>) -> tensor<3xf32> {\n"
            + '"test.op"() ({\n' * n + "}) : () -> ()\n" * n
            + "  return %a : tensor<3xf32>\n}\n")
    doc = TextDocument(uri, text)
    c.notify("textDocument/didOpen", doc.open_params())
    c.wait_for_diagnostics(uri, 1, timeout=args.wait)
    try:
        m = c.wait_response(c.send_request("tosa/previewLowering", {
            "uri": uri, "function": "deep", "stage": "linalg", "mode": "upstream"})[0],
            timeout=args.wait)
        outcome = ("error: " + m.body["error"].get("message", "")[:80]) if "error" in m.body \
            else "result"
        h = c.request("textDocument/hover", doc.position_params(0, 0), timeout=args.wait)
        RESULTS.check(True, "(f) preview of a %d-deep document answered (%s); server alive"
                      % (n, outcome))
        del h
    except ServerDied as e:
        RESULTS.check(False, "(f) preview of a %d-deep document does not crash the server" % n,
                      str(e).split(";")[0])
        c.kill()
        return
    finish_server(c, "(f-deep)")


# --------------------------------------------------------------------------
# (g) a change position past the end of its line
# --------------------------------------------------------------------------

def part_g(args, workdir):
    """LSP 3.17, Position: "If the character value is greater than the line
    length it defaults back to the line length." """
    c = start_server(args, ["--debounce=0"])
    path = os.path.join(workdir, "clamp.mlir")
    doc = TextDocument(path_to_uri(path), "func.func @g(%a: tensor<3xf32>) -> tensor<3xf32> {\n"
                       "  return %a : tensor<3xf32>\n}\n")
    c.notify("textDocument/didOpen", doc.open_params())
    c.wait_for_diagnostics(doc.uri, 1, timeout=args.wait)
    line = doc.lines()[1]
    p = {"line": 1, "character": utf16_len(line) + 50}
    change = {"range": make_range(p, p), "text": " extra"}
    # The client-side text: the position clamped to the end of the line.
    end = {"line": 1, "character": utf16_len(line)}
    doc.apply({"range": make_range(end, end), "text": " extra"})
    doc.version += 1
    c.notify("textDocument/didChange", {"textDocument": {"uri": doc.uri, "version": doc.version},
                                        "contentChanges": [change]})
    try:
        pub = c.wait_for_diagnostics(doc.uri, doc.version, timeout=min(args.wait, 10))
        eq, exp, got, _ = diag_compare(args, path, doc.text, pub.body["params"]["diagnostics"])
        RESULTS.check(eq, "(g) change at a character past the end of the line is clamped "
                      "(LSP Position)", diff_text(exp, got))
    except LspTimeout:
        shown = [m.body["params"]["message"] for m in c.notifications
                 if m.body.get("method") == "window/showMessage"]
        RESULTS.check(False, "(g) change at a character past the end of the line is clamped "
                      "(LSP Position)", "the change was rejected, version %d never analysed; "
                      "server said: %r" % (doc.version, shown))
    finish_server(c, "(g)")


# --------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tosa-lsp", required=True)
    ap.add_argument("--edits", type=int, default=200, help="didChanges in (a); at least 40")
    ap.add_argument("--seed", type=int, default=20240601)
    ap.add_argument("--wait", type=float, default=60.0, help="bound of every single wait (s)")
    ap.add_argument("--timeout", type=float, default=600.0, help="bound of the whole run (s)")
    ap.add_argument("--debounce-ms", type=int, default=50,
                    help="debounce of the (b)-(e) server (the server's default is 50)")
    ap.add_argument("--big-ops", type=int, default=8000, help="initial size of the big document")
    ap.add_argument("--max-ops", type=int, default=150000)
    ap.add_argument("--target-ms", type=float, default=500.0,
                    help="grow the big document until one analysis takes this long")
    ap.add_argument("--busy-rounds", type=int, default=3)
    ap.add_argument("--max-checks", type=int, default=40,
                    help="intermediate published versions compared against check")
    ap.add_argument("--deep-nesting", type=int, default=10000,
                    help="nesting depth of the (f) document")
    ap.add_argument("--parts", default="abcdefg")
    args = ap.parse_args()
    if args.edits < 40:
        ap.error("--edits must be at least 40")

    def watchdog():
        print("FAIL watchdog: the run exceeded %.0fs" % args.timeout)
        for c in CLIENTS:
            c.kill()
        RESULTS.failed += 1
        print(RESULTS.summary())
        sys.stdout.flush()
        os._exit(1)
    timer = threading.Timer(args.timeout, watchdog)
    timer.daemon = True
    timer.start()

    # The binary may be mid-relink while someone rebuilds.
    for _ in range(60):
        if os.access(args.tosa_lsp, os.X_OK):
            break
        time.sleep(1)

    with tempfile.TemporaryDirectory(prefix="lsp-concurrency-") as workdir:
        if "a" in args.parts:
            run_part("(a:debounce-default)", part_a, args, workdir, "debounce-default", [],
                     False, args.seed)
            run_part("(a:debounce-0)", part_a, args, workdir, "debounce-0",
                     ["--debounce=0"], False, args.seed + 10)
            run_part("(a:debounce-0-jitter)", part_a, args, workdir, "debounce-0-jitter",
                     ["--debounce=0"], True, args.seed + 20)
        if any(p in args.parts for p in "bcde"):
            run_part("(b)", part_bcde, args, workdir)
        if "f" in args.parts:
            run_part("(f)", part_f, args, workdir)
        if "g" in args.parts:
            run_part("(g)", part_g, args, workdir)
    for c in CLIENTS:
        c.kill()
    timer.cancel()
    print(RESULTS.summary())
    return 0 if RESULTS.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
