// `#tosa.rounding_type<...>` (MLIR 22: `#tosa.rounding_mode<...>`) is a
// parse error, so the section has no IR: the rename is found from MLIR's
// diagnostic and made in place, then the section is migrated as usual.
// RUN: not %tosa-lsp check %s | FileCheck %s --check-prefix=OLD
// RUN: %tosa-lsp fix %s | FileCheck %s --check-prefix=FIX
// RUN: %tosa-lsp fix --migrate %s > %t.mlir
// RUN: %mlir-opt --split-input-file %t.mlir -o /dev/null
// RUN: %tosa-lsp check %t.mlir
// RUN: grep -v "^ *//" %t.mlir | FileCheck %s --check-prefix=NEW

func.func @f(%arg0 : i64, %arg1 : i32, %arg2 : i8, %a: tensor<2xi32>, %b: tensor<2xi32>) -> (i32, tensor<2xi32>) {
  %res = tosa.apply_scale %arg0, %arg1, %arg2 {rounding_mode = #tosa.rounding_type<DOUBLE_ROUND>} : (i64, i32, i8) -> i32
  %0 = tosa.mul %a, %b {shift = 0 : i8} : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  return %res, %0 : i32, tensor<2xi32>
}

// OLD: rounding-type.mlir:12:70: error: unknown attribute `rounding_type` in dialect `tosa`
// FIX: 0: {{.*}}rounding-type.mlir:12:70: Migrate this file to MLIR 22 TOSA (2 ops) [parse-error]
// FIX: 1: {{.*}}rounding-type.mlir:12:70: Migrate to MLIR 22: `#tosa.rounding_type` -> `#tosa.rounding_mode` [parse-error]
// NEW: %res = tosa.apply_scale %arg0, %arg1, %arg2 {rounding_mode = #tosa.rounding_mode<DOUBLE_ROUND>} : (i64, i32, i8) -> i32
// NEW: %0 = tosa.mul %a, %b, %v22{{_}}shift_0 : (tensor<2xi32>, tensor<2xi32>, tensor<1xi8>) -> tensor<2xi32>
