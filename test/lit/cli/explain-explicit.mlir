// Explicit broadcasts (spec 003): broadcast_dimensions mappings, their
// composition with degenerate dimensions, and linalg.broadcast.
// RUN: not %tosa-lsp check %s 2>&1 | FileCheck %s --check-prefix=CHECK-DIAG
// RUN: %tosa-lsp explain %s | FileCheck %s

func.func @f(%v: tensor<3xf32>, %m: tensor<2x3xf32>, %r: tensor<1x2xf32>,
             %w: tensor<4xf32>, %init: tensor<3x5xf32>) {
  %0 = "stablehlo.broadcast_in_dim"(%v) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf32>) -> tensor<2x3xf32>
  %1 = "chlo.broadcast_add"(%w, %r) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>, tensor<1x2xf32>) -> tensor<4x2xf32>
  %2 = "mhlo.broadcast_in_dim"(%m) {broadcast_dimensions = dense<[2, 1]> : tensor<2xi64>} : (tensor<2x3xf32>) -> tensor<5x3x2xf32>
  %3 = linalg.broadcast ins(%v : tensor<3xf32>) outs(%init : tensor<3x5xf32>) dimensions = [1]
  return
}

// CHECK-DIAG: explain-explicit.mlir:10:8: error: 'mhlo.broadcast_in_dim' op broadcast_dimensions [2, 1] is not strictly increasing: entry 1 (1) must be greater than entry 0 (2)
// CHECK-DIAG: note: fix: list the target dimensions in increasing order (transpose the operand first if its dimensions must be reordered)

// CHECK:      explain-explicit.mlir:8:8: stablehlo.broadcast_in_dim: ok
// CHECK:        broadcast_dimensions = [1]
// CHECK-NEXT:   operand dim  size  target dim  size  notes
// CHECK-NEXT:   0            3     1           3     equal
// CHECK-NEXT:   added (broadcast) target dimensions: 0

// CHECK:      explain-explicit.mlir:9:8: chlo.broadcast_add: ok
// CHECK:        0            4     0           1     degenerate: target 1 stretched
// CHECK:        then degenerate-dimension broadcasting of the expanded operands:
// CHECK-NEXT:   dim  #0  #1  inferred  declared  rule          notes
// CHECK-NEXT:   0    4   1   4         4         1 | >1 -> >1  #1 stretched from 1; from #0
// CHECK-NEXT:   1    1   2   2         2         1 | >1 -> >1  #0 stretched from 1; from #1

// CHECK:      explain-explicit.mlir:10:8: mhlo.broadcast_in_dim: error
// CHECK:        error (bad-broadcast-dimensions): broadcast_dimensions [2, 1] is not strictly increasing

// CHECK:      explain-explicit.mlir:11:8: linalg.broadcast: ok
// CHECK:        operand dimensions map to init dimensions [0]
// CHECK:        added (broadcast) target dimensions: 1
