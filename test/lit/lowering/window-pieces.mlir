// A padded window op is computed in pieces around its border, straight from
// the input (WindowOps.cpp's splitPadded: no padded copy of a big input),
// while the pieces' taps, the inputs of their generics, stay within 225 (a
// 3x3 window in 25 pieces, a 5x5 one in 9): beyond, the input is padded and
// computed by one generic, as each piece costs compile time (a 5x5 window
// with pads of 2 in 25 pieces: 2.35 s at -O3, 0.41 s padded). A small input
// (under 1 MiB padded) gets a 3x3 grid at most (a 2x4x9x64 input, 2x8
// window, pad 4, in 45 pieces: 9.4 s). A big one with a 5x3 window keeps
// its 15 pieces. Values: kernel_numeric.py (dw2x8_pad4_s2, dw5x5,
// dw5x5_s2).
// (Windows are unrolled only where the kernels run: a host with FMA vectors.)
// REQUIRES: fma-vectors
// RUN: %tosa-lsp lower %s --function=small --stage=linalg | FileCheck %s --check-prefix=SMALL
// RUN: %tosa-lsp lower %s --function=big --stage=linalg | FileCheck %s --check-prefix=BIG
// RUN: %tosa-lsp lower %s --function=five --stage=linalg | FileCheck %s --check-prefix=FIVE
// RUN: %tosa-lsp lower %s --function=five_s2 --stage=linalg | FileCheck %s --check-prefix=FIVE-S2

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

func.func @five(%x: tensor<1x64x64x64xf32>, %w: tensor<5x5x64x1xf32>, %b: tensor<64xf32>) -> tensor<1x64x64x64xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %r = tosa.depthwise_conv2d %x, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 2, 2, 2, 2>, stride = array<i64: 1, 1>} : (tensor<1x64x64x64xf32>, tensor<5x5x64x1xf32>, tensor<64xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x64x64x64xf32>
  return %r : tensor<1x64x64x64xf32>
}

func.func @five_s2(%x: tensor<1x65x65x64xf32>, %w: tensor<5x5x64x1xf32>, %b: tensor<64xf32>) -> tensor<1x33x33x64xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %r = tosa.depthwise_conv2d %x, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 2, 2, 2, 2>, stride = array<i64: 2, 2>} : (tensor<1x65x65x64xf32>, tensor<5x5x64x1xf32>, tensor<64xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x33x33x64xf32>
  return %r : tensor<1x33x33x64xf32>
}

// SMALL-LABEL: func.func @small(
// SMALL-NOT:     tensor.pad
// SMALL:         tensor.insert_slice %arg0 into %{{.*}}[0, 4, 4, 0] [2, 4, 10, 64]
// SMALL-COUNT-1: linalg.generic
// SMALL-NOT:     linalg.generic
// SMALL:         return

// BIG-LABEL: func.func @big(
// BIG-NOT:     tensor.pad
// BIG-COUNT-15: linalg.generic
// BIG-NOT:     linalg.generic
// BIG:         return

// FIVE-LABEL: func.func @five(
// The padded copy writes each element once: the input into the interior,
// the padding value into the border's four slabs only (tensor.pad
// bufferized fills the whole copy first).
// FIVE-NOT:     tensor.pad
// FIVE:         tensor.insert_slice %arg0 into %{{.*}}[0, 2, 2, 0] [1, 64, 64, 64]
// FIVE-COUNT-2: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x2x68x64xf32>)
// FIVE-COUNT-2: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x64x2x64xf32>)
// FIVE:         %[[PADDED:.*]] = tensor.insert_slice %{{.*}}[0, 2, 66, 0] [1, 64, 2, 64]
// FIVE-NOT:     linalg.depthwise_conv
// FIVE-COUNT-25: tensor.extract_slice %[[PADDED]]
// FIVE-COUNT-1: linalg.generic
// FIVE-NOT:     linalg.generic
// FIVE:         return

// FIVE-S2-LABEL: func.func @five_s2(
// FIVE-S2-NOT:     tensor.pad
// FIVE-S2-COUNT-9: linalg.generic
// FIVE-S2-NOT:     linalg.generic
// FIVE-S2:         return
