// Pre-MLIR-22 `nan_mode = "IGNORE"` strings (which MLIR 22 drops without a
// word, so the op propagates NaN): the quick fix and the migration write
// MLIR 22's enum, on ops MLIR 22 takes as they are and on an old-form op
// the migration rewrites whole (a clamp with min_fp/max_fp). What MLIR 22
// then keeps is the enum.
// RUN: %tosa-lsp fix %s | FileCheck %s --check-prefix=FIX
// RUN: %tosa-lsp fix --apply=2 %s | FileCheck %s --check-prefix=ONE
// RUN: %tosa-lsp fix --migrate %s > %t.mlir
// RUN: %tosa-lsp check %t.mlir 2>&1 | FileCheck %s --check-prefix=CLEAN --allow-empty
// RUN: %mlir-opt %t.mlir --mlir-print-op-generic | FileCheck %s --check-prefix=MLIR

func.func @f(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %r = tosa.maximum %a, %b {nan_mode = "IGNORE"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %u = tosa.clamp %r {min_int = 0 : i64, max_int = 6 : i64, min_fp = 0.0 : f32, max_fp = 6.0 : f32, nan_mode = "IGNORE"} : (tensor<4xf32>) -> tensor<4xf32>
  return %u : tensor<4xf32>
}

// FIX: 0: {{.*}}nan-mode.mlir:14:8: Migrate this file to MLIR 22 TOSA (2 ops) [verifier-error]
// FIX: 1: {{.*}}nan-mode.mlir:14:8: Migrate tosa.clamp to MLIR 22
// FIX: 2: {{.*}}nan-mode.mlir:13:29: Migrate to MLIR 22: `nan_mode = "IGNORE"` -> `#tosa.nan_mode<IGNORE>` [dropped-nan-mode]
// ONE: tosa.maximum %a, %b {nan_mode = #tosa.nan_mode<IGNORE>}
// ONE: tosa.clamp %r {min_int
// CLEAN-NOT: warning
// CLEAN-NOT: error
// MLIR: "tosa.maximum"(%{{.*}}) <{nan_mode = #tosa.nan_mode<IGNORE>}>
// MLIR: "tosa.clamp"(%{{.*}}) <{max_val = 6.000000e+00 : f32, min_val = 0.000000e+00 : f32, nan_mode = #tosa.nan_mode<IGNORE>}>
