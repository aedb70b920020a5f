// tosa.rescale with multiplier/shift/zero points as attributes and
// double_round (MLIR 22: operands, rounding_mode, input/output_unsigned).
// RUN: not %tosa-lsp check %s | FileCheck %s --check-prefix=OLD
// RUN: %tosa-lsp fix %s | FileCheck %s --check-prefix=FIX
// RUN: %tosa-lsp fix --migrate %s > %t.mlir
// RUN: %mlir-opt --split-input-file %t.mlir -o /dev/null
// RUN: %tosa-lsp check %t.mlir
// RUN: grep -v "^ *//" %t.mlir | FileCheck %s --check-prefix=NEW

func.func @f(%a: tensor<1x16xi32>) -> tensor<1x16xi8> {
  %0 = "tosa.rescale"(%a) {double_round = true, input_zp = 0 : i32, multiplier = array<i32: 2039655736>, output_zp = -128 : i32, per_channel = false, scale32 = true, shift = array<i8: 38>} : (tensor<1x16xi32>) -> tensor<1x16xi8>
  return %0 : tensor<1x16xi8>
}

// -----
func.func @per_channel(%a: tensor<2x2xi8>) -> tensor<2x2xi16> {
  %0 = tosa.rescale %a {double_round = false, input_zp = 0 : i32, multiplier = array<i32: 1000, 2000>, output_zp = 0 : i32, per_channel = true, scale32 = false, shift = array<i8: 10, 11>} : (tensor<2x2xi8>) -> tensor<2x2xi16>
  return %0 : tensor<2x2xi16>
}

// OLD: {{.*}}rescale.mlir:11:8: error: 'tosa.rescale' op expected 5 operands, but found 1
// OLD: {{.*}}rescale.mlir:17:8: error: 'tosa.rescale' op expected 5 operands, but found 1
// FIX: 0: {{.*}}rescale.mlir:11:8: Migrate this file to MLIR 22 TOSA (2 ops) [verifier-error]
// FIX: 1: {{.*}}rescale.mlir:11:8: Migrate tosa.rescale to MLIR 22: multiplier, shift and zero points as operands, `double_round` -> `rounding_mode` [verifier-error]
// FIX: 2: {{.*}}rescale.mlir:17:8: Migrate tosa.rescale to MLIR 22: multiplier, shift and zero points as operands, `double_round` -> `rounding_mode` [verifier-error]
// NEW: %v22{{_}}multiplier_0 = "tosa.const"() <{values = dense<2039655736> : tensor<1xi32>}> : () -> tensor<1xi32>
// NEW: %v22{{_}}shift_1 = "tosa.const"() <{values = dense<38> : tensor<1xi8>}> : () -> tensor<1xi8>
// NEW: %v22{{_}}input_zp_2 = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
// NEW: %v22{{_}}output_zp_3 = "tosa.const"() <{values = dense<-128> : tensor<1xi8>}> : () -> tensor<1xi8>
// NEW: %0 = "tosa.rescale"(%a, %v22{{_}}multiplier_0, %v22{{_}}shift_1, %v22{{_}}input_zp_2, %v22{{_}}output_zp_3) {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = #tosa.rounding_mode<DOUBLE_ROUND>, scale32 = true} : (tensor<1x16xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<1x16xi8>
// NEW: %v22{{_}}multiplier_0 = "tosa.const"() <{values = dense<[1000, 2000]> : tensor<2xi16>}> : () -> tensor<2xi16>
// NEW: %v22{{_}}shift_1 = "tosa.const"() <{values = dense<[10, 11]> : tensor<2xi8>}> : () -> tensor<2xi8>
// NEW: %v22{{_}}input_zp_2 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
// NEW: %v22{{_}}output_zp_3 = "tosa.const"() <{values = dense<0> : tensor<1xi16>}> : () -> tensor<1xi16>
// NEW: %0 = tosa.rescale %a, %v22{{_}}multiplier_0, %v22{{_}}shift_1, %v22{{_}}input_zp_2, %v22{{_}}output_zp_3 {input_unsigned = false, output_unsigned = false, per_channel = true, rounding_mode = #tosa.rounding_mode<SINGLE_ROUND>, scale32 = false} : (tensor<2x2xi8>, tensor<2xi16>, tensor<2xi8>, tensor<1xi8>, tensor<1xi16>) -> tensor<2x2xi16>
