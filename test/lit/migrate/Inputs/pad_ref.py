"""Checks `tosa-lsp run --format=json` of a function of pad-quant-old.mlir
against numpy's model of the pre-MLIR-22 quantized tosa.pad: padded with
the pad_const operand when given, else with the input zero point of the
quantization info (TOSA 0.x; MLIR's old lowering did the same). Prints
`ok NAME`."""
import json
import sys

import numpy as np

PAD = {  # name: (padding, value)
    "padq": (((1, 0), (0, 2)), 42),
    "padd": (((0, 2), (1, 0)), -5),
    "padc": (((0, 0), (1, 1)), 7),
}
name = sys.argv[1]
run = json.load(sys.stdin)
padding, value = PAD[name]
x = np.array(run["inputs"][0], dtype=np.int64)
got = np.array(run["results"][0]["data"], dtype=np.int64)
want = np.pad(x, padding, constant_values=value)
if got.shape != want.shape or not (got == want).all():
    print(f"MISMATCH {name}: got\n{got}\nwant\n{want}")
    sys.exit(1)
print(f"ok {name}")
