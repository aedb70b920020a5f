// A conv2d whose bias is a splat constant: canonicalization folds it into
// the body of the bias broadcast, which the kernel function copies along
// (a value of the caller used inside the kernel's body made invalid IR:
// "'linalg.yield' op using value defined outside the region"). Ones in,
// ones as 3x3 weights, pad 1: corners sum 4 taps, edges 6, the centre 9.
// REQUIRES: fma-vectors
// RUN: %tosa-lsp lower %s --stage=vector | FileCheck %s
// RUN: %tosa-lsp run %s --function conv --inputs '[[[[[1],[1],[1],[1]],[[1],[1],[1],[1]],[[1],[1],[1],[1]],[[1],[1],[1],[1]]]]]' | tr -d ' \n' > %t.json
// RUN: grep -F '"data":[[[[4.5,4.5,4.5,4.5,4.5,4.5,4.5,4.5,4.5,4.5,4.5,4.5,4.5,4.5,4.5,4.5],[6.5,' %t.json
// RUN: grep -F '[[6.5,6.5,6.5,6.5,6.5,6.5,6.5,6.5,6.5,6.5,6.5,6.5,6.5,6.5,6.5,6.5],[9.5,' %t.json

// CHECK: func.func private @__tosa_lsp_kernel{{[0-9]+}}(
// CHECK:   arith.constant 5.000000e-01 : f32
// CHECK:   vector.fma
func.func @conv(%x: tensor<1x4x4x1xf32>) -> tensor<1x4x4x16xf32> {
  %w = "tosa.const"() <{values = dense<1.0> : tensor<16x3x3x1xf32>}> : () -> tensor<16x3x3x1xf32>
  %b = "tosa.const"() <{values = dense<0.5> : tensor<16xf32>}> : () -> tensor<16xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %r = tosa.conv2d %x, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x4x4x1xf32>, tensor<16x3x3x1xf32>, tensor<16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4x16xf32>
  return %r : tensor<1x4x4x16xf32>
}
