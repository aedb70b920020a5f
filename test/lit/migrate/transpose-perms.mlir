// tosa.transpose with a perms operand (MLIR 22: the `perms` attribute).
// RUN: not %tosa-lsp check %s | FileCheck %s --check-prefix=OLD
// RUN: %tosa-lsp fix %s | FileCheck %s --check-prefix=FIX
// RUN: %tosa-lsp fix --migrate %s > %t.mlir
// RUN: %mlir-opt --split-input-file %t.mlir -o /dev/null
// RUN: %tosa-lsp check %t.mlir
// RUN: grep -v "^ *//" %t.mlir | FileCheck %s --check-prefix=NEW

func.func @f(%a: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %p = "tosa.const"() {values = dense<[2, 0, 1]> : tensor<3xi32>} : () -> tensor<3xi32>
  %0 = tosa.transpose %a, %p : (tensor<2x3x4xf32>, tensor<3xi32>) -> tensor<4x2x3xf32>
  return %0 : tensor<4x2x3xf32>
}

// OLD: {{.*}}transpose-perms.mlir:11:8: error: 'tosa.transpose' op requires a single operand
// FIX: 0: {{.*}}transpose-perms.mlir:11:8: Migrate this file to MLIR 22 TOSA (1 ops) [verifier-error]
// FIX: 1: {{.*}}transpose-perms.mlir:11:8: Migrate tosa.transpose to MLIR 22: perms operand -> `perms` attribute [verifier-error]
// NEW: %p = "tosa.const"() {values = dense<[2, 0, 1]> : tensor<3xi32>} : () -> tensor<3xi32>
// NEW: %0 = tosa.transpose %a {perms = array<i32: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
