// Pre-MLIR-22 TOSA wrote the NaN mode as a string: `nan_mode = "IGNORE"`.
// MLIR 22's property is an enum, and its parser drops the string from an
// attribute dictionary without a word (in a `<{...}>` properties dictionary
// it reports it): the op propagates NaN. `check` warns where it is written;
// not on the enum form, the default's string, or a comment
// (DroppedNanModes.cpp).
// RUN: %tosa-lsp check %s 2>&1 | FileCheck %s
// RUN: %mlir-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=MLIR

// nan_mode = "IGNORE" in a comment is not an attribute.
func.func @f(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %r = tosa.maximum %a, %b {nan_mode = "IGNORE"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s = tosa.minimum %a, %r {nan_mode = "PROPAGATE"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %t = tosa.maximum %a, %s {nan_mode = #tosa.nan_mode<IGNORE>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %u = tosa.clamp %t {max_val = 6.0 : f32, min_val = 0.0 : f32, nan_mode="IGNORE"} : (tensor<4xf32>) -> tensor<4xf32>
  return %u : tensor<4xf32>
}

// CHECK: dropped-nan-mode.mlir:12:29: warning: `nan_mode = "IGNORE"` is the pre-MLIR-22 string form: MLIR 22 drops it without a word, so this op propagates NaN (the default, PROPAGATE); MLIR 22 writes `nan_mode = #tosa.nan_mode<IGNORE>`
// CHECK: dropped-nan-mode.mlir:15:65: warning: `nan_mode = "IGNORE"`
// CHECK-NOT: warning

// What MLIR 22 keeps: only the enum form (the first maximum has the default).
// MLIR:     "tosa.maximum"(%{{.*}}) : (tensor<4xf32>, tensor<4xf32>)
// MLIR:     "tosa.minimum"(%{{.*}}) : (tensor<4xf32>, tensor<4xf32>)
// MLIR:     "tosa.maximum"(%{{.*}}) <{nan_mode = #tosa.nan_mode<IGNORE>}>
// MLIR:     "tosa.clamp"(%{{.*}}) <{max_val = 6.000000e+00 : f32, min_val = 0.000000e+00 : f32}>
