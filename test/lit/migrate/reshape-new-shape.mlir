// tosa.reshape with `new_shape` (MLIR 22: a !tosa.shape operand from
// tosa.const_shape); -1 takes the size from the declared result.
// RUN: not %tosa-lsp check %s | FileCheck %s --check-prefix=OLD
// RUN: %tosa-lsp fix %s | FileCheck %s --check-prefix=FIX
// RUN: %tosa-lsp fix --migrate %s > %t.mlir
// RUN: %mlir-opt --split-input-file %t.mlir -o /dev/null
// RUN: %tosa-lsp check %t.mlir
// RUN: grep -v "^ *//" %t.mlir | FileCheck %s --check-prefix=NEW

func.func @f(%arg0: tensor<6xf32>) -> tensor<2x3xf32> {
  %0 = tosa.reshape %arg0 {new_shape = array<i64: 2, -1>} : (tensor<6xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----
func.func @g(%arg0: tensor<1x6xi8>) -> tensor<6xi8> {
  %0 = "tosa.reshape"(%arg0) {new_shape = [6]} : (tensor<1x6xi8>) -> tensor<6xi8>
  return %0 : tensor<6xi8>
}

// OLD: {{.*}}reshape-new-shape.mlir:11:8: error: 'tosa.reshape' op expected 2 operands, but found 1
// OLD: {{.*}}reshape-new-shape.mlir:17:8: error: 'tosa.reshape' op expected 2 operands, but found 1
// FIX: 0: {{.*}}reshape-new-shape.mlir:11:8: Migrate this file to MLIR 22 TOSA (2 ops) [verifier-error]
// FIX: 1: {{.*}}reshape-new-shape.mlir:11:8: Migrate tosa.reshape to MLIR 22: `new_shape` attribute -> tosa.const_shape operand [verifier-error]
// FIX: 2: {{.*}}reshape-new-shape.mlir:17:8: Migrate tosa.reshape to MLIR 22: `new_shape` attribute -> tosa.const_shape operand [verifier-error]
// NEW: %v22{{_}}shape_0 = tosa.const_shape {values = dense<[2, 3]> : tensor<2xindex>} : () -> !tosa.shape<2>
// NEW: %0 = tosa.reshape %arg0, %v22{{_}}shape_0 : (tensor<6xf32>, !tosa.shape<2>) -> tensor<2x3xf32>
// NEW: %v22{{_}}shape_0 = tosa.const_shape {values = dense<6> : tensor<1xindex>} : () -> !tosa.shape<1>
// NEW: %0 = "tosa.reshape"(%arg0, %v22{{_}}shape_0) : (tensor<1x6xi8>, !tosa.shape<1>) -> tensor<6xi8>
