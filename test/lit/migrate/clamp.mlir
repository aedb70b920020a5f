// tosa.clamp with min_fp/max_fp/min_int/max_int (MLIR 22: min_val/max_val
// of the element type).
// RUN: not %tosa-lsp check %s | FileCheck %s --check-prefix=OLD
// RUN: %tosa-lsp fix %s | FileCheck %s --check-prefix=FIX
// RUN: %tosa-lsp fix --migrate %s > %t.mlir
// RUN: %mlir-opt --split-input-file %t.mlir -o /dev/null
// RUN: %tosa-lsp check %t.mlir
// RUN: grep -v "^ *//" %t.mlir | FileCheck %s --check-prefix=NEW

func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = tosa.clamp %a {min_fp = 0.0 : f32, max_fp = 6.0 : f32, min_int = 0 : i64, max_int = 6 : i64} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----
func.func @i(%a: tensor<2xi8>) -> tensor<2xi8> {
  %0 = "tosa.clamp"(%a) {min_fp = 0.0 : f32, max_fp = 0.0 : f32, min_int = -1000 : i64, max_int = 100 : i64} : (tensor<2xi8>) -> tensor<2xi8>
  return %0 : tensor<2xi8>
}

// OLD: {{.*}}clamp.mlir:11:8: error: 'tosa.clamp' op requires attribute 'max_val'
// OLD: {{.*}}clamp.mlir:17:8: error: 'tosa.clamp' op requires attribute 'max_val'
// FIX: 0: {{.*}}clamp.mlir:11:8: Migrate this file to MLIR 22 TOSA (2 ops) [verifier-error]
// FIX: 1: {{.*}}clamp.mlir:11:8: Migrate tosa.clamp to MLIR 22: `min_fp`/`max_fp`/`min_int`/`max_int` -> typed `min_val`/`max_val` [verifier-error]
// FIX: 2: {{.*}}clamp.mlir:17:8: Migrate tosa.clamp to MLIR 22: `min_fp`/`max_fp`/`min_int`/`max_int` -> typed `min_val`/`max_val` [verifier-error]
// NEW: %0 = tosa.clamp %a {max_val = 6.000000e+00 : f32, min_val = 0.000000e+00 : f32, nan_mode = #tosa.nan_mode<PROPAGATE>} : (tensor<2xf32>) -> tensor<2xf32>
// NEW: %0 = "tosa.clamp"(%a) {max_val = 100 : i8, min_val = -128 : i8, nan_mode = #tosa.nan_mode<PROPAGATE>} : (tensor<2xi8>) -> tensor<2xi8>
