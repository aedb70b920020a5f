// `func @f` from before the func dialect (MLIR 14; TF's TOSA tests and
// converters of that time): MLIR 22 looks the bare `func` up as
// `builtin.func` and fails to parse the section. The migration parses it
// with a stand-in, renames it `func.func` (also `builtin.func` and
// `func private`) and migrates the TOSA ops inside as usual.
// RUN: not %tosa-lsp check %s 2>&1 | FileCheck %s --check-prefix=OLD
// RUN: %tosa-lsp fix %s | FileCheck %s --check-prefix=FIX
// RUN: %tosa-lsp fix --migrate %s > %t.mlir
// RUN: %mlir-opt --split-input-file %t.mlir -o /dev/null
// RUN: %tosa-lsp check %t.mlir
// RUN: grep -v "^ *//" %t.mlir | FileCheck %s --check-prefix=NEW

func @test_conv2d(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
  %0 = "tosa.const"() {value = dense<1.0> : tensor<3x1x1x2xf32>} : () -> tensor<3x1x1x2xf32>
  %1 = "tosa.const"() {value = dense<0.5> : tensor<3xf32>} : () -> tensor<3xf32>
  %2 = "tosa.conv2d"(%arg0, %0, %1) {dilation = [1, 1], pad = [0, 0, 0, 0], stride = [1, 1]} : (tensor<1x4x4x2xf32>, tensor<3x1x1x2xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %2 : tensor<1x4x4x3xf32>
}

// -----
module {
  func private @ext(tensor<2xf32>) -> tensor<2xf32>
  builtin.func @g(%a: tensor<2xf32>) -> tensor<2xf32> {
    %0 = "tosa.mul"(%a, %a) {shift = 0 : i32} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %1 = call @ext(%0) : (tensor<2xf32>) -> tensor<2xf32>
    return %1 : tensor<2xf32>
  }
}

// OLD: func-keyword.mlir:13:1: error: custom op 'func' is unknown (tried 'builtin.func' as well)
// OLD: func-keyword.mlir:13:1: note: `func` is `func.func` since MLIR 15 (the func dialect); `fix --migrate` renames it
// OLD: func-keyword.mlir:22:3: error: custom op 'func' is unknown (tried 'builtin.func' as well)
// FIX: 0: {{.*}}func-keyword.mlir:13:1: Migrate this file to MLIR 22 TOSA (7 ops) [parse-error]
// NEW: func.func @test_conv2d(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32> {
// NEW: %2 = "tosa.conv2d"(%arg0, %0, %1, %v22{{_}}input_zp_0, %v22{{_}}weight_zp_1) {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>}
// NEW: func.func private @ext(tensor<2xf32>) -> tensor<2xf32>
// NEW: func.func @g(%a: tensor<2xf32>) -> tensor<2xf32> {
// NEW: %0 = "tosa.mul"(%a, %a, %v22{{_}}shift_0)
