#!/usr/bin/env python3
"""Generates TOSA element-wise chains for the benchmark (stdlib only).

    gen.py --lines 10000 --shape one|multi|weights|split [--seed 1] -o FILE
           [--verify MLIR_OPT]

Shapes: `one` is a single function of about LINES lines; `multi` is
functions of about 200 lines each (a typical model file); `weights` is
`one` with a converted model's weights first: `tosa.const` ops of
`dense<"0x...">` literals (256 KiB of hex each), as many bytes as the ops
have, which the ops then use; `split` is `multi` with the functions in
`// -----` parts (a test file of MLIR's kind, one module each). Every function
mixes static dims, size-1 broadcast dims and dynamic dims (`?`) over one
rank, so any two values broadcast, and uses the RFC element-wise ops
(unary, binary incl. `mul` with its MLIR 22 `shift` operand, `select`).
Some declared result dims are relaxed to `?` where the inferred size is
static: legal MLIR that tosa-lsp reports as refinable (as real files do).
The output is deterministic for a given (lines, shape, seed) and verifies
with `mlir-opt-22 --split-input-file --allow-unregistered-dialect`.
"""

import argparse
import random
import subprocess
import sys

FUNC_LINES = 200  # body size of a `multi` function, per the issue

# (name, operand dtypes, result dtype); `F` f32, `I` i32, `B` i1. Result
# shapes are the broadcast of the operands'.
UNARY = [
    ("abs", "F", "F"), ("abs", "I", "I"), ("ceil", "F", "F"), ("floor", "F", "F"),
    ("exp", "F", "F"), ("log", "F", "F"), ("negate", "F", "F"), ("reciprocal", "F", "F"),
    ("rsqrt", "F", "F"), ("sigmoid", "F", "F"), ("tanh", "F", "F"), ("erf", "F", "F"),
    ("clz", "I", "I"), ("bitwise_not", "I", "I"), ("logical_not", "B", "B"),
    ("cast", "F", "I"), ("cast", "I", "F"),
]
BINARY = [
    ("add", "FF", "F"), ("add", "II", "I"), ("sub", "FF", "F"), ("sub", "II", "I"),
    ("mul", "FF", "F"), ("mul", "II", "I"), ("maximum", "FF", "F"), ("minimum", "FF", "F"),
    ("maximum", "II", "I"), ("minimum", "II", "I"), ("pow", "FF", "F"),
    ("arithmetic_right_shift", "II", "I"), ("bitwise_and", "II", "I"),
    ("bitwise_or", "II", "I"), ("bitwise_xor", "II", "I"),
    ("logical_left_shift", "II", "I"), ("logical_right_shift", "II", "I"),
    ("logical_and", "BB", "B"), ("logical_or", "BB", "B"), ("logical_xor", "BB", "B"),
    ("equal", "FF", "B"), ("equal", "II", "B"), ("greater", "FF", "B"),
    ("greater", "II", "B"), ("greater_equal", "FF", "B"), ("greater_equal", "II", "B"),
]
TERNARY = [("select", "BFF", "F"), ("select", "BII", "I")]
ELEM = {"F": "f32", "I": "i32", "B": "i1"}
ALL_OPS = UNARY + BINARY + TERNARY


def tensor(shape, dtype):
    dims = "x".join("?" if d is None else str(d) for d in shape)
    return "tensor<%sx%s>" % (dims, ELEM[dtype])


def broadcast(shapes):
    """MLIR's broadcast of equal-rank shapes whose dims are `full`, 1 or ?
    (None): a static size wins over 1 and ?, ? wins over 1."""
    out = []
    for dims in zip(*shapes):
        static = [d for d in dims if d is not None and d != 1]
        if static:
            out.append(static[0])
        elif None in dims:
            out.append(None)
        else:
            out.append(1)
    return out


class Function:
    """One function body: a pool of live values per dtype, grown op by op."""

    def __init__(self, name, rng, weights=False):
        self.name, self.rng = name, rng
        rank = rng.randint(2, 4)
        self.full = [rng.choice([2, 3, 4, 8, 16]) for _ in range(rank)]
        if weights:  # a weight of 16x32x64 f32: 256 KiB of hex
            self.full = [16, 32, 64]
        self.args = []   # (ssa, shape, dtype)
        self.pool = {"F": [], "I": [], "B": []}
        for dtype, count in (("F", 3), ("I", 2), ("B", 1)):
            for _ in range(count):
                ssa = "%%arg%d" % len(self.args)
                shape = self.operand_shape()
                self.args.append((ssa, shape, dtype))
                self.pool[dtype].append((ssa, shape))
        self.lines = []
        self.next_id = 0
        self.weight_lines = []
        self.weights = []  # (ssa, shape) of each weight

    def add_weights(self, hex_bytes):
        """`tosa.const` weights of the full static shape, random bits, at
        least `hex_bytes` of hex literals in all; the ops use them."""
        count = 1
        for d in self.full:
            count *= d
        digits = 8 * count  # f32: 8 hex digits an element
        for _ in range(-(-hex_bytes // digits)):
            ssa = "%%w%d" % len(self.weight_lines)
            t = tensor(self.full, "F")
            self.weight_lines.append(
                '  %s = "tosa.const"() <{values = dense<"0x%0*X"> : %s}> : () -> %s' % (
                    ssa, digits, self.rng.getrandbits(4 * digits), t, t))
            self.pool["F"].append((ssa, list(self.full)))
            self.weights.append((ssa, list(self.full)))

    def operand_shape(self):
        """Each dim: the full static size, a size-1 broadcast dim or `?`."""
        return [self.rng.choice([d, d, 1, None]) for d in self.full]

    def pick(self, dtype, first):
        """The latest value of `dtype` for the chain's first operand (so ops
        depend on each other), otherwise a random live one."""
        vals = self.pool[dtype]
        if first:
            return vals[-1]
        # A model's layers each use their weights, all through the function.
        if dtype == "F" and self.weights and self.rng.random() < 0.1:
            return self.rng.choice(self.weights)
        return self.rng.choice(vals[-16:])

    def declared(self, inferred):
        """Relaxes some static result dims to `?` (refinable results)."""
        return [None if d is not None and self.rng.random() < 0.1 else d for d in inferred]

    def add_op(self):
        name, ins, out = self.rng.choice(ALL_OPS)
        operands = [self.pick(t, i == 0) for i, t in enumerate(ins)]
        result = self.declared(broadcast([s for _, s in operands]))
        ssa = "%%%d" % self.next_id
        self.next_id += 1
        names = [v for v, _ in operands]
        types = [tensor(s, t) for (_, s), t in zip(operands, ins)]
        extra = ""
        if name == "mul":  # MLIR 22: `shift` operand, tensor<1xi8>
            names.append("%shift")
            types.append("tensor<1xi8>")
        elif name == "negate":  # MLIR 22: input and output zero points
            names += ["%zp", "%zp"]
            types += ["tensor<1xf32>"] * 2
        elif name == "arithmetic_right_shift":
            extra = " {round = false}"
        self.lines.append("  %s = tosa.%s %s%s : (%s) -> %s" % (
            ssa, name, ", ".join(names), extra, ", ".join(types), tensor(result, out)))
        self.pool[out].append((ssa, result))

    def text(self, body_lines):
        for _ in range(max(body_lines, 1)):
            self.add_op()
        ret, shape = self.pool["F"][-1]
        rtype = tensor(shape, "F")
        params = ", ".join("%s: %s" % (v, tensor(s, t)) for v, s, t in self.args)
        head = [
            "func.func @%s(%s) -> %s {" % (self.name, params, rtype),
            '  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>',
            '  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>',
        ]
        return head + self.weight_lines + self.lines + [
            "  return %s : %s" % (ret, rtype), "}"]


def generate(lines, shape, seed=1):
    """The text of a file of about `lines` lines (exact up to a few)."""
    rng = random.Random("%s-%d-%s" % (shape, lines, seed))
    overhead = 5  # header, two consts, return, closing brace
    out = ["// tosa-lsp bench input: %d lines, shape %s, seed %s" % (lines, shape, seed)]
    if shape == "weights":
        f = Function("f0", rng, weights=True)
        f.add_weights(100 * lines)  # about the ops' bytes
        return "\n".join(out + f.text(lines - overhead - 1 - len(f.weight_lines))) + "\n"
    if shape == "one":
        bodies = [lines - overhead - 1]
    elif shape in ("multi", "split"):
        per = FUNC_LINES + overhead + (shape == "split")  # a `// -----` each
        count = max(lines // per, 1)
        bodies = [FUNC_LINES] * count
        bodies[-1] += lines - 1 - count * per + (shape == "split")
    else:
        raise ValueError("unknown shape %r (one|multi|weights|split)" % shape)
    for i, body in enumerate(bodies):
        if i and shape == "split":
            out.append("// -----")
        out += Function("f%d" % i, rng).text(body)
    return "\n".join(out) + "\n"


def verify(path, mlir_opt="mlir-opt-22", timeout=600):
    """None when mlir-opt accepts the file, else its error text."""
    try:
        p = subprocess.run([mlir_opt, "--split-input-file", "--allow-unregistered-dialect",
                            path, "-o", "/dev/null"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        return "%s: %s" % (mlir_opt, e)
    if p.returncode != 0:
        return "%s exited %d: %s" % (mlir_opt, p.returncode,
                                     p.stderr.decode("utf-8", "replace")[:2000])
    return None


def parse_size(s):
    """'10k' -> 10000, '1000' -> 1000."""
    s = s.strip().lower()
    return int(float(s[:-1]) * 1000) if s.endswith("k") else int(s)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", required=True, type=parse_size)
    ap.add_argument("--shape", required=True, choices=["one", "multi", "weights", "split"])
    ap.add_argument("--seed", default="1")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--verify", metavar="MLIR_OPT", help="check the file with this mlir-opt")
    a = ap.parse_args(argv)
    with open(a.output, "w", encoding="utf-8") as f:
        f.write(generate(a.lines, a.shape, a.seed))
    if a.verify:
        err = verify(a.output, a.verify)
        if err:
            print("%s does not verify: %s" % (a.output, err), file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
