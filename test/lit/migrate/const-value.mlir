// tosa.const with `value =` (before MLIR 22: `values =`), in every spelling
// old converters printed: properties, an attribute dictionary, a custom
// form; the rename is done in place (constants are never re-printed).
// RUN: not %tosa-lsp check %s | FileCheck %s --check-prefix=OLD
// RUN: %tosa-lsp fix %s | FileCheck %s --check-prefix=FIX
// RUN: %tosa-lsp fix --apply=1 %s | grep -v '^ *//' | FileCheck %s --check-prefix=ONE
// RUN: %tosa-lsp fix --migrate %s > %t.mlir
// RUN: %mlir-opt --split-input-file %t.mlir -o /dev/null
// RUN: %tosa-lsp check %t.mlir
// RUN: grep -v '^ *//' %t.mlir | FileCheck %s --check-prefix=NEW

// OLD: const-value.mlir:[[@LINE+2]]:8: error: 'tosa.const' op requires attribute 'values'
func.func @props() -> tensor<2xf32> {
  %0 = "tosa.const"() <{value = dense<[1.0, 2.0]> : tensor<2xf32>}> : () -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----
// OLD: const-value.mlir:[[@LINE+2]]:8: error: 'tosa.const' op requires attribute 'values'
func.func @dict() -> tensor<4xi8> {
  %0 = "tosa.const"() {value = dense<"0x01020304"> : tensor<4xi8>, keep = "value = 1"} : () -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// FIX: 0: {{.*}}const-value.mlir:14:8: Migrate this file to MLIR 22 TOSA (2 ops) [verifier-error]
// FIX: 1: {{.*}}const-value.mlir:14:8: Migrate tosa.const to MLIR 22: `value` -> `values` [verifier-error]
// FIX: 2: {{.*}}const-value.mlir:21:8: Migrate tosa.const to MLIR 22: `value` -> `values` [verifier-error]

// ONE: %0 = "tosa.const"() <{values = dense<[1.0, 2.0]> : tensor<2xf32>}> : () -> tensor<2xf32>
// ONE: %0 = "tosa.const"() {value = dense<"0x01020304"> : tensor<4xi8>, keep = "value = 1"} : () -> tensor<4xi8>

// NEW: %0 = "tosa.const"() <{values = dense<[1.0, 2.0]> : tensor<2xf32>}> : () -> tensor<2xf32>
// NEW: %0 = "tosa.const"() {values = dense<"0x01020304"> : tensor<4xi8>, keep = "value = 1"} : () -> tensor<4xi8>
