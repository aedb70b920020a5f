#!/usr/bin/env python3
"""Writes hostile inputs for the reliability tests (stdlib only).

    gen_hostile.py alias-chain N OUT   N nested attribute aliases (#aK = [#aK-1])
                                       used by one op: N levels deep without
                                       nesting in any one line
    gen_hostile.py minus-chain N OUT   an affine map with N unary minus signs
    gen_hostile.py deep-json N OUT     a .tosa-lsp.json whose value nests N deep
"""
import sys


def alias_chain(n):
    lines = ["#a0 = [1]"] + ["#a%d = [#a%d]" % (i, i - 1) for i in range(1, n)]
    body = ("func.func @f(%a: tensor<2xf32>) -> tensor<3xf32> {\n"
            "  %0 = tosa.add %a, %a {x = #aLAST} : (tensor<2xf32>, tensor<2xf32>)"
            " -> tensor<3xf32>\n"
            "  return %0 : tensor<3xf32>\n}\n").replace("LAST", str(n - 1))
    return "\n".join(lines) + "\n" + body


def minus_chain(n):
    return "#m = affine_map<(d0) -> (" + "-" * n + "d0)>\n"


def deep_json(n):
    return '{"extraBroadcastableOps": ' + "[" * n + "]" * n + "}\n"


def main():
    kind, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    make = {"alias-chain": alias_chain, "minus-chain": minus_chain,
            "deep-json": deep_json}[kind]
    with open(out, "w") as f:
        f.write(make(n))


if __name__ == "__main__":
    main()
