// Result types are refined (tosa-infer-shapes) before the default modes
// lower: MLIR 22's tosa-to-linalg-named sizes a conv2d result declared
// `?x?x?x?` with the input's channel count, not the weights' output
// channels, so its own pipeline (--mode=upstream) returns 1 channel of
// wrong numbers here; the default mode returns x * w + b for both.
// RUN: %tosa-lsp run %s --function=conv --inputs='[[[[[1],[2]],[[3],[4]]]], [[[[1]]],[[[2]]]], [0, 10]]' | FileCheck %s
// RUN: %tosa-lsp run %s --mode=safe --function=conv --inputs='[[[[[1],[2]],[[3],[4]]]], [[[[1]]],[[[2]]]], [0, 10]]' | FileCheck %s
// CHECK:      "results": [
// CHECK:        "data": [
// CHECK-COUNT-3: [
// CHECK-NEXT:   1,
// CHECK-NEXT:   12
// CHECK:        2,
// CHECK-NEXT:   14
// CHECK:        3,
// CHECK-NEXT:   16
// CHECK:        4,
// CHECK-NEXT:   18
// CHECK:      "shape": [
// CHECK-NEXT:   1,
// CHECK-NEXT:   2,
// CHECK-NEXT:   2,
// CHECK-NEXT:   2
// CHECK-NEXT: ]

// The preview shows the refined type and the cast back to the declared one.
// RUN: %tosa-lsp lower %s --stage=linalg | FileCheck %s --check-prefix=LINALG
// LINALG: tensor<1x2x2x2xf32>
// LINALG: tensor.cast {{.*}} : tensor<1x2x2x2xf32> to tensor<?x?x?x?xf32>

// A depthwise conv declared `?x?x?x?` did not lower at all (tensor.empty
// with 4 dynamic sizes for 3 `?`): it runs now.
// RUN: %tosa-lsp run %s --function=dw --inputs='[[[[[1,2]]]], [[[[3],[4]]]], [0, 0]]' | FileCheck %s --check-prefix=DW
// DW:      "data": [
// DW-COUNT-3: [
// DW-NEXT:  3,
// DW-NEXT:  8
// An element-wise op declared less static than its operand, then used, in
// a function with dynamic arguments (so fast mode makes versions): "failed
// to legalize unresolved materialization" in every mode before.
// RUN: %tosa-lsp lower --stage=llvm %s --function=ew > /dev/null
// RUN: %tosa-lsp lower --stage=llvm --mode=safe %s --function=ew > /dev/null
// RUN: %tosa-lsp run %s --function=ew --random=1 | FileCheck %s --check-prefix=EW
// EW: "shape": [
// EW-NEXT: 1,
// EW-NEXT: 1,
// EW-NEXT: 3
func.func @ew(%arg0: tensor<?x?x3xf32>, %arg1: tensor<1x1x?xf32>, %arg2: tensor<1x1x3xf32>, %arg4: tensor<16x2x3xi32>) -> tensor<?x1x?xf32> {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %0 = tosa.equal %arg4, %arg4 : (tensor<16x2x3xi32>, tensor<16x2x3xi32>) -> tensor<16x2x3xi1>
  %2 = tosa.abs %arg2 : (tensor<1x1x3xf32>) -> tensor<1x1x3xf32>
  %3 = tosa.abs %2 : (tensor<1x1x3xf32>) -> tensor<?x1x?xf32>
  %4 = tosa.mul %3, %3, %shift : (tensor<?x1x?xf32>, tensor<?x1x?xf32>, tensor<1xi8>) -> tensor<?x1x?xf32>
  return %4 : tensor<?x1x?xf32>
}

func.func @conv(%in: tensor<1x2x2x1xf32>, %w: tensor<2x1x1x1xf32>, %b: tensor<2xf32>) -> tensor<?x?x?x?xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %0 = tosa.conv2d %in, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x2x2x1xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<?x?x?x?xf32>
  return %0 : tensor<?x?x?x?xf32>
}

func.func @dw(%in: tensor<1x1x1x2xf32>, %w: tensor<1x1x2x1xf32>, %b: tensor<2xf32>) -> tensor<?x?x?x?xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %0 = tosa.depthwise_conv2d %in, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x1x1x2xf32>, tensor<1x1x2x1xf32>, tensor<2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<?x?x?x?xf32>
  return %0 : tensor<?x?x?x?xf32>
}
