"""Checks `tosa-lsp run --format=json` of a function of stride-old.mlir
against numpy models of the pre-MLIR-22 ops (TOSA 0.80: output size
floor((in - 1 + pad_before + pad_after - dilation*(k-1)) / stride) + 1;
avg_pool2d divides by the count of non-pad elements). Prints `ok NAME`."""
import json
import sys

import numpy as np

W = np.array([[[[1.0, -1.0], [0.5, 2.0], [1.0, 0.0]], [[0.0, 1.0], [-2.0, 1.0], [1.0, 1.0]], [[3.0, 0.0], [1.0, -1.0], [0.0, 2.0]]],
              [[[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]], [[0.0, 0.0], [1.0, 0.0], [0.0, 0.0]], [[-1.0, -1.0], [2.0, 2.0], [0.5, 0.5]]],
              [[[0.0, 2.0], [0.0, 0.0], [1.0, 0.0]], [[1.0, 0.0], [0.0, -3.0], [0.0, 1.0]], [[2.0, 1.0], [1.0, 2.0], [-1.0, 0.0]]]])
B = np.array([0.5, -1.0, 2.0])


def windows(x, kh, kw, pad, stride):
    """(oy, ox, window values, mask of real elements) for NHWC x (N=1)."""
    t, b, l, r = pad
    h, w = x.shape[1], x.shape[2]
    xp = np.pad(x[0], ((t, b), (l, r), (0, 0)))
    mask = np.pad(np.ones((h, w)), ((t, b), (l, r)))
    oh = (h - 1 + t + b - (kh - 1)) // stride[0] + 1
    ow = (w - 1 + l + r - (kw - 1)) // stride[1] + 1
    for oy in range(oh):
        for ox in range(ow):
            y0, x0 = oy * stride[0], ox * stride[1]
            yield oy, ox, xp[y0:y0 + kh, x0:x0 + kw], mask[y0:y0 + kh, x0:x0 + kw]


def conv(x):
    out = np.zeros((1, 4, 4, 3))
    for oy, ox, win, _ in windows(x, 3, 3, (1, 1, 1, 1), (2, 2)):
        out[0, oy, ox] = np.einsum("hwc,ohwc->o", win, W) + B
    return out


def avg(x):
    out = np.zeros((1, 3, 3, 1))
    for oy, ox, win, m in windows(x, 2, 2, (1, 0, 0, 1), (3, 3)):
        out[0, oy, ox, 0] = (win[..., 0] * m).sum() / m.sum()
    return out


def maxp(x):
    out = np.zeros((1, 4, 3, 1))
    for oy, ox, win, m in windows(x, 3, 3, (0, 1, 0, 0), (2, 2)):
        out[0, oy, ox, 0] = np.where(m > 0, win[..., 0], -np.inf).max()
    return out


name = sys.argv[1]
run = json.load(sys.stdin)
x = np.array(run["inputs"][0], dtype=np.float64)
got = np.array(run["results"][0]["data"], dtype=np.float64)
want = {"conv": conv, "avg": avg, "maxp": maxp}[name](x)
if got.shape != want.shape or not np.allclose(got, want, rtol=1e-5, atol=1e-5):
    print(f"MISMATCH {name}: got\n{got}\nwant\n{want}")
    sys.exit(1)
print(f"ok {name}")
