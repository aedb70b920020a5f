// tosa.pad with a tensor padding operand (MLIR 22: !tosa.shape from
// tosa.const_shape, and a tensor<1xT> pad_const operand).
// RUN: not %tosa-lsp check %s | FileCheck %s --check-prefix=OLD
// RUN: %tosa-lsp fix %s | FileCheck %s --check-prefix=FIX
// RUN: %tosa-lsp fix --migrate %s > %t.mlir
// RUN: %mlir-opt --split-input-file %t.mlir -o /dev/null
// RUN: %tosa-lsp check %t.mlir
// RUN: grep -v "^ *//" %t.mlir | FileCheck %s --check-prefix=NEW

func.func @f(%a: tensor<2x3xf32>) -> tensor<3x6xf32> {
  %p = "tosa.const"() {values = dense<[[0, 1], [1, 2]]> : tensor<2x2xi32>} : () -> tensor<2x2xi32>
  %0 = tosa.pad %a, %p {pad_const_fp = 1.5 : f32, pad_const_int = 0 : i64} : (tensor<2x3xf32>, tensor<2x2xi32>) -> tensor<3x6xf32>
  return %0 : tensor<3x6xf32>
}

// -----
func.func @g(%a: tensor<2xi8>) -> tensor<4xi8> {
  %p = "tosa.const"() {values = dense<[[1, 1]]> : tensor<1x2xi64>} : () -> tensor<1x2xi64>
  %c = "tosa.const"() {values = dense<7> : tensor<i8>} : () -> tensor<i8>
  %0 = "tosa.pad"(%a, %p, %c) : (tensor<2xi8>, tensor<1x2xi64>, tensor<i8>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// OLD: {{.*}}pad.mlir:12:8: error: 'tosa.pad' op expected 3 operands, but found 2
// OLD: {{.*}}pad.mlir:20:8: error: 'tosa.pad' op operand #1 must be Shape with static rank and Index element type, but got 'tensor<1x2xi64>'
// FIX: 0: {{.*}}pad.mlir:12:8: Migrate this file to MLIR 22 TOSA (2 ops) [verifier-error]
// FIX: 1: {{.*}}pad.mlir:12:8: Migrate tosa.pad to MLIR 22: padding as tosa.const_shape, pad_const operand [verifier-error]
// FIX: 2: {{.*}}pad.mlir:20:8: Migrate tosa.pad to MLIR 22: padding as tosa.const_shape, pad_const operand [verifier-error]
// NEW: %p = "tosa.const"() {values = dense<{{\[\[}}0, 1], [1, 2]]> : tensor<2x2xi32>} : () -> tensor<2x2xi32>
// NEW: %v22{{_}}padding_0 = tosa.const_shape {values = dense<[0, 1, 1, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
// NEW: %v22{{_}}pad_const_1 = "tosa.const"() <{values = dense<1.500000e+00> : tensor<1xf32>}> : () -> tensor<1xf32>
// NEW: %0 = tosa.pad %a, %v22{{_}}padding_0, %v22{{_}}pad_const_1 : (tensor<2x3xf32>, !tosa.shape<4>, tensor<1xf32>) -> tensor<3x6xf32>
// NEW: %p = "tosa.const"() {values = dense<{{\[\[}}1, 1]]> : tensor<1x2xi64>} : () -> tensor<1x2xi64>
// NEW: %c = "tosa.const"() {values = dense<7> : tensor<i8>} : () -> tensor<i8>
// NEW: %v22{{_}}pad_const_0 = "tosa.const"() <{values = dense<7> : tensor<1xi8>}> : () -> tensor<1xi8>
// NEW: %v22{{_}}padding_1 = tosa.const_shape {values = dense<1> : tensor<2xindex>} : () -> !tosa.shape<2>
// NEW: %0 = "tosa.pad"(%a, %v22{{_}}padding_1, %v22{{_}}pad_const_0) : (tensor<2xi8>, !tosa.shape<2>, tensor<1xi8>) -> tensor<4xi8>
