// A padded window op is computed in pieces around its border, straight from
// the input (WindowOps.cpp's splitPadded: no padded copy of a big input).
// More pieces than a 3x3 grid only pay where that copy would be big (at
// least 1 MiB): a small input with wide pads is padded and computed by one
// generic (before: 25 generics, and 9.4 s at -O3 for a 2x4x9x64 input);
// a big one with a 5x3 window keeps its 15 pieces. Values:
// kernel_numeric.py (dw2x8_pad4_s2).
// (Windows are unrolled only where the kernels run: a host with FMA vectors.)
// REQUIRES: fma-vectors
// RUN: %tosa-lsp lower %s --function=small --stage=linalg | FileCheck %s --check-prefix=SMALL
// RUN: %tosa-lsp lower %s --function=big --stage=linalg | FileCheck %s --check-prefix=BIG

func.func @small(%x: tensor<2x4x10x64xf32>, %w: tensor<2x8x64x1xf32>, %b: tensor<64xf32>) -> tensor<2x6x6x64xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %r = tosa.depthwise_conv2d %x, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 4, 4, 4, 4>, stride = array<i64: 2, 2>} : (tensor<2x4x10x64xf32>, tensor<2x8x64x1xf32>, tensor<64xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x6x6x64xf32>
  return %r : tensor<2x6x6x64xf32>
}

func.func @big(%x: tensor<1x64x64x64xf32>, %w: tensor<5x3x64x1xf32>, %b: tensor<64xf32>) -> tensor<1x64x64x64xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %r = tosa.depthwise_conv2d %x, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 2, 2, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x64x64x64xf32>, tensor<5x3x64x1xf32>, tensor<64xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x64x64x64xf32>
  return %r : tensor<1x64x64x64xf32>
}

// SMALL-LABEL: func.func @small(
// SMALL:         tensor.pad
// SMALL-COUNT-1: linalg.generic
// SMALL-NOT:     linalg.generic
// SMALL:         return

// BIG-LABEL: func.func @big(
// BIG-NOT:     tensor.pad
// BIG-COUNT-15: linalg.generic
// BIG-NOT:     linalg.generic
// BIG:         return
