// tosa.matmul and tosa.negate without zero-point operands.
// RUN: not %tosa-lsp check %s | FileCheck %s --check-prefix=OLD
// RUN: %tosa-lsp fix %s | FileCheck %s --check-prefix=FIX
// RUN: %tosa-lsp fix --migrate %s > %t.mlir
// RUN: %mlir-opt --split-input-file %t.mlir -o /dev/null
// RUN: %tosa-lsp check %t.mlir
// RUN: grep -v "^ *//" %t.mlir | FileCheck %s --check-prefix=NEW

func.func @matmul(%a: tensor<1x2x3xi8>, %b: tensor<1x3x4xi8>) -> tensor<1x2x4xi32> {
  %0 = tosa.matmul %a, %b {a_zp = 3 : i32, b_zp = 0 : i32} : (tensor<1x2x3xi8>, tensor<1x3x4xi8>) -> tensor<1x2x4xi32>
  return %0 : tensor<1x2x4xi32>
}

// -----
func.func @negate(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = tosa.negate %a : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// OLD: {{.*}}matmul-negate.mlir:10:8: error: 'tosa.matmul' op expected 4 operands, but found 2
// OLD: {{.*}}matmul-negate.mlir:16:8: error: 'tosa.negate' op expected 3 operands, but found 1
// FIX: 0: {{.*}}matmul-negate.mlir:10:8: Migrate this file to MLIR 22 TOSA (2 ops) [verifier-error]
// FIX: 1: {{.*}}matmul-negate.mlir:10:8: Migrate tosa.matmul to MLIR 22: zero points as operands [verifier-error]
// FIX: 2: {{.*}}matmul-negate.mlir:16:8: Migrate tosa.negate to MLIR 22: zero points as operands [verifier-error]
// NEW: %v22{{_}}a_zp_0 = "tosa.const"() <{values = dense<3> : tensor<1xi8>}> : () -> tensor<1xi8>
// NEW: %v22{{_}}b_zp_1 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
// NEW: %0 = tosa.matmul %a, %b, %v22{{_}}a_zp_0, %v22{{_}}b_zp_1 : (tensor<1x2x3xi8>, tensor<1x3x4xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x2x4xi32>
// NEW: %v22{{_}}input1_zp_0 = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}> : () -> tensor<1xf32>
// NEW: %v22{{_}}output_zp_1 = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}> : () -> tensor<1xf32>
// NEW: %0 = tosa.negate %a, %v22{{_}}input1_zp_0, %v22{{_}}output_zp_1 : (tensor<2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2xf32>
