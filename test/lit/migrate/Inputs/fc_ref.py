"""Checks `tosa-lsp run --format=json` of a function of fc-old.mlir against
numpy's model of the removed tosa.fully_connected (TOSA 0.80):
out[n, oc] = sum_ic (x[n, ic] - input_zp) * (w[oc, ic] - weight_zp) + b[oc].
Prints `ok NAME`."""
import json
import sys

import numpy as np

FC = {
    "fcq": (np.array([[1, 2, 3], [-1, 0, 1], [4, -5, 6], [0, 0, 7]]),
            np.array([10, 20, -30, 0]), -3, 0),
    "fcd": (np.array([[1, 2, 3], [-1, 0, 1], [4, -5, 6], [0, 0, 7]]),
            np.array([10, 20, -30, 0]), -3, 0),
    "fcf": (np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 1.0], [4.0, -5.0, 6.0],
                      [0.0, 0.0, 7.0]]), np.array([1.0, 2.0, -3.0, 0.0]), 0, 0),
}
name = sys.argv[1]
run = json.load(sys.stdin)
w, b, izp, wzp = FC[name]
x = np.array(run["inputs"][0], dtype=np.float64)
got = np.array(run["results"][0]["data"], dtype=np.float64)
want = (x - izp) @ (w - wzp).T + b
if got.shape != want.shape or not np.allclose(got, want, rtol=1e-5, atol=1e-5):
    print(f"MISMATCH {name}: got\n{got}\nwant\n{want}")
    sys.exit(1)
print(f"ok {name}")
