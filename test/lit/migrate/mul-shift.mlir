// tosa.mul with a `shift` attribute (MLIR 22: a tensor<1xi8> operand).
// RUN: not %tosa-lsp check %s | FileCheck %s --check-prefix=OLD
// RUN: %tosa-lsp fix %s | FileCheck %s --check-prefix=FIX
// RUN: %tosa-lsp fix --migrate %s > %t.mlir
// RUN: %mlir-opt --split-input-file %t.mlir -o /dev/null
// RUN: %tosa-lsp check %t.mlir
// RUN: grep -v "^ *//" %t.mlir | FileCheck %s --check-prefix=NEW

func.func @attr(%a: tensor<2xi32>, %b: tensor<2xi32>) -> tensor<2xi32> {
  %0 = tosa.mul %a, %b {shift = 1 : i8} : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----
func.func @generic(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
    %0 = "tosa.mul"(%a, %b) <{shift = 0 : i8}> {tag} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32> loc("model.py":3:4)
    return %0 : tensor<2xf32>
}

// OLD: {{.*}}mul-shift.mlir:10:8: error: 'tosa.mul' op expected 3 operands, but found 2
// OLD: {{.*}}mul-shift.mlir:16:10: error: invalid properties {shift = 0 : i8} for op tosa.mul: this operation does not support properties
// FIX: 0: {{.*}}mul-shift.mlir:10:8: Migrate this file to MLIR 22 TOSA (2 ops) [verifier-error]
// FIX: 1: {{.*}}mul-shift.mlir:10:8: Migrate tosa.mul to MLIR 22: `shift` attribute -> operand [verifier-error]
// FIX: 2: {{.*}}mul-shift.mlir:16:10: Migrate tosa.mul to MLIR 22: `shift` attribute -> operand [parse-error]
// NEW: %v22{{_}}shift_0 = "tosa.const"() <{values = dense<1> : tensor<1xi8>}> : () -> tensor<1xi8>
// NEW: %0 = tosa.mul %a, %b, %v22{{_}}shift_0 : (tensor<2xi32>, tensor<2xi32>, tensor<1xi8>) -> tensor<2xi32>
// NEW: %v22{{_}}shift_0 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
// NEW: %0 = "tosa.mul"(%a, %b, %v22{{_}}shift_0) {tag} : (tensor<2xf32>, tensor<2xf32>, tensor<1xi8>) -> tensor<2xf32> loc("model.py":3:4)
