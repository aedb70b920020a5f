// tosa.avg_pool2d with one operand (MLIR 22: input and output zero points
// as operands; acc_type required).
// RUN: not %tosa-lsp check %s | FileCheck %s --check-prefix=OLD
// RUN: %tosa-lsp fix %s | FileCheck %s --check-prefix=FIX
// RUN: %tosa-lsp fix --migrate %s > %t.mlir
// RUN: %mlir-opt --split-input-file %t.mlir -o /dev/null
// RUN: %tosa-lsp check %t.mlir
// RUN: grep -v "^ *//" %t.mlir | FileCheck %s --check-prefix=NEW

func.func @f(%a: tensor<1x4x4x1xf32>) -> tensor<1x2x2x1xf32> {
  %0 = tosa.avg_pool2d %a {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>} : (tensor<1x4x4x1xf32>) -> tensor<1x2x2x1xf32>
  return %0 : tensor<1x2x2x1xf32>
}

// -----
func.func @q(%a: tensor<1x4x4x1xi8>) -> tensor<1x2x2x1xi8> {
  %0 = "tosa.avg_pool2d"(%a) {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, acc_type = i32, input_zp = -128 : i32, output_zp = 5 : i32} : (tensor<1x4x4x1xi8>) -> tensor<1x2x2x1xi8>
  return %0 : tensor<1x2x2x1xi8>
}

// OLD: {{.*}}avg-pool2d.mlir:11:8: error: 'tosa.avg_pool2d' op expected 3 operands, but found 1
// OLD: {{.*}}avg-pool2d.mlir:17:8: error: 'tosa.avg_pool2d' op expected 3 operands, but found 1
// FIX: 0: {{.*}}avg-pool2d.mlir:11:8: Migrate this file to MLIR 22 TOSA (2 ops) [verifier-error]
// FIX: 1: {{.*}}avg-pool2d.mlir:11:8: Migrate tosa.avg_pool2d to MLIR 22: zero points as operands [verifier-error]
// FIX: 2: {{.*}}avg-pool2d.mlir:17:8: Migrate tosa.avg_pool2d to MLIR 22: zero points as operands [verifier-error]
// NEW: %v22{{_}}input_zp_0 = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}> : () -> tensor<1xf32>
// NEW: %v22{{_}}output_zp_1 = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}> : () -> tensor<1xf32>
// NEW: %0 = tosa.avg_pool2d %a, %v22{{_}}input_zp_0, %v22{{_}}output_zp_1 {acc_type = f32, kernel = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>} : (tensor<1x4x4x1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x2x1xf32>
// NEW: %v22{{_}}input_zp_0 = "tosa.const"() <{values = dense<-128> : tensor<1xi8>}> : () -> tensor<1xi8>
// NEW: %v22{{_}}output_zp_1 = "tosa.const"() <{values = dense<5> : tensor<1xi8>}> : () -> tensor<1xi8>
// NEW: %0 = "tosa.avg_pool2d"(%a, %v22{{_}}input_zp_0, %v22{{_}}output_zp_1) {acc_type = i32, kernel = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>} : (tensor<1x4x4x1xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x2x2x1xi8>
