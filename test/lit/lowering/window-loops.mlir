// A depthwise conv's window of more than 25 taps (7x7: ConvNeXt's) is not
// unrolled into one input per tap: it becomes one generic over (n, oh, ow,
// kh, kw, c), the window's loops outside the channels' so that the
// innermost loop runs along them, without the multiplier dim, starting from the bias (WindowOps.cpp's windowLoops).
// Before, the named op's loops kept the window innermost (scalar), and the
// zero-filled accumulator, the bias add and the collapse each wrote a
// buffer of the output's size. A pool's big window stays the named op (as
// this generic, a max pool 7x7 compiled 8x slower). Values:
// kernel_numeric.py (dw7x7, dw7x7_s2; the pools' loops: maxpool7x7_s1,
// avgpool7x7_global).
// (Windows are rewritten only where the kernels run: a host with FMA
// vectors; elsewhere the named ops stay, as in window-pieces.mlir.)
// REQUIRES: fma-vectors
// RUN: %tosa-lsp lower %s --function=dw --stage=linalg | FileCheck %s --check-prefix=DW
// RUN: %tosa-lsp lower %s --function=pool --stage=linalg | FileCheck %s --check-prefix=POOL

func.func @dw(%x: tensor<1x32x32x64xf32>, %w: tensor<7x7x64x1xf32>, %b: tensor<64xf32>) -> tensor<1x32x32x64xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %r = tosa.depthwise_conv2d %x, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 3, 3, 3, 3>, stride = array<i64: 1, 1>} : (tensor<1x32x32x64xf32>, tensor<7x7x64x1xf32>, tensor<64xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x32x32x64xf32>
  return %r : tensor<1x32x32x64xf32>
}
// The bias broadcast is where the sums start:
// DW-LABEL: func.func @dw
// DW-NOT: linalg.depthwise_conv_2d
// DW: %[[START:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]{{.*}} ins(%arg2 : tensor<64xf32>) outs(%{{.*}} : tensor<1x32x32x64xf32>)
// DW: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 + d3, d2 + d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d4, d5, 0)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d5)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]}
// DW-SAME: outs(%[[START]] : tensor<1x32x32x64xf32>)
// DW: arith.mulf {{.*}} fastmath<contract>
// DW: arith.addf {{.*}} fastmath<contract>
// DW-NOT: tensor.collapse_shape
// DW: return

func.func @pool(%x: tensor<1x32x32x64xf32>) -> tensor<1x32x32x64xf32> {
  %r = tosa.max_pool2d %x {kernel = array<i64: 7, 7>, pad = array<i64: 3, 3, 3, 3>, stride = array<i64: 1, 1>} : (tensor<1x32x32x64xf32>) -> tensor<1x32x32x64xf32>
  return %r : tensor<1x32x32x64xf32>
}
// POOL-LABEL: func.func @pool
// POOL: linalg.pooling_nhwc_max
