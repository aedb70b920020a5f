// An op the configuration names Broadcastable that MLIR does not know (so
// nothing verified it) must have what the trait requires (spec: exactly one
// result; operands and result tensors or vectors): each section gets the
// error mlir-opt-22 gives for its own registered test op, at the same
// place, and no broadcast report of its shapes.
// RUN: not %tosa-lsp check %s 2>&1 | FileCheck %s
// RUN: not %mlir-opt --split-input-file %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=UPSTREAM

func.func @results(%a: tensor<4xi32>, %c: tensor<4xi32>) {
  %0:2 = "test.broadcastable"(%a, %c) : (tensor<4xi32>, tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>)
  return
}
// CHECK: broadcastable-structure.mlir:[[@LINE-3]]:10: error: 'test.broadcastable' op requires one result
// UPSTREAM: broadcastable-structure.mlir:[[@LINE-4]]:10: error: 'test.broadcastable' op requires one result

// -----
func.func @scalar_result(%a: tensor<4xi32>) {
  %0 = "test.broadcastable"(%a, %a) : (tensor<4xi32>, tensor<4xi32>) -> i32
  return
}
// CHECK: broadcastable-structure.mlir:[[@LINE-3]]:8: error: 'test.broadcastable' op result #0 must be a tensor or vector, but got 'i32'
// UPSTREAM: broadcastable-structure.mlir:[[@LINE-4]]:8: error: 'test.broadcastable' op result #0 must be

// -----
func.func @memref_operand(%a: memref<4xi32>) {
  %0 = "test.broadcastable"(%a, %a) : (memref<4xi32>, memref<4xi32>) -> tensor<5xi32>
  return
}
// CHECK: broadcastable-structure.mlir:[[@LINE-3]]:8: error: 'test.broadcastable' op operand #0 must be a tensor or vector, but got 'memref<4xi32>'
// CHECK-NOT: declared 5
// UPSTREAM: broadcastable-structure.mlir:[[@LINE-5]]:8: error: 'test.broadcastable' op operand #0 must be

// -----
// Well-formed: the broadcast analysis as usual (4 vs 3 conflict).
func.func @conflict(%a: tensor<4xi32>, %c: tensor<3xi32>) -> tensor<4xi32> {
  %0 = "test.broadcastable"(%a, %c) : (tensor<4xi32>, tensor<3xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}
// CHECK: broadcastable-structure.mlir:[[@LINE-3]]:8: error: {{.*}}not broadcast-compatible in dimension 0
// CHECK-NOT: error
