// tosa.variable as TF/TFLite legalization wrote it for MLIR 18-20:
// declared inside the function that uses it (MLIR 22: a symbol at module
// level), read and written with tosa.variable.read/.write (MLIR 22:
// variable_read/variable_write, a parse error in custom syntax); in generic
// form with `name` and a tensor `type` (MLIR 22: `sym_name`, `var_shape`
// and the element type). A declaration repeated in another function is
// declared once; one of another type is listed.
// RUN: not %tosa-lsp check %s 2>&1 | FileCheck %s --check-prefix=OLD
// RUN: %tosa-lsp fix --migrate %s > %t.mlir
// RUN: %mlir-opt --split-input-file %t.mlir -o /dev/null
// RUN: %tosa-lsp check %t.mlir
// RUN: grep -v "^ *//" %t.mlir | FileCheck %s --check-prefix=NEW
// RUN: not %tosa-lsp fix --migrate %S/Inputs/variable-clash.mlir 2>&1 >/dev/null | FileCheck %s --check-prefix=CLASH
// A variable named by a number (an interim form): no MLIR 22 form, said so.
// RUN: not %tosa-lsp check %S/Inputs/variable-number.mlir | FileCheck %s --check-prefix=NUMBER

func.func @step(%x: tensor<2x4xi32>) -> tensor<2x4xi32> {
  tosa.variable @acc = dense<-1> : tensor<2x4xi32>
  tosa.variable @unused : tensor<3xf32>
  %0 = tosa.variable.read @acc : tensor<2x4xi32>
  %1 = tosa.add %0, %x : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi32>
  tosa.variable.write @acc, %1 : tensor<2x4xi32>
  return %1 : tensor<2x4xi32>
}

func.func @peek() -> tensor<2x4xi32> {
  tosa.variable @acc = dense<-1> : tensor<2x4xi32>
  %0 = "tosa.variable.read"() {name = "acc"} : () -> tensor<2x4xi32>
  return %0 : tensor<2x4xi32>
}

// -----
module {
  "tosa.variable"() {name = "g", type = tensor<2xf32>, initial_value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> ()
  func.func @f(%x: tensor<2xf32>) {
    "tosa.variable.write"(%x) {name = "g"} : (tensor<2xf32>) -> ()
    return
  }
}

// OLD: variable.mlir:20:8: error: custom op 'tosa.variable.read' is unknown
// OLD: note: tosa.variable.read/.write are tosa.variable_read/_write in MLIR 22 (same syntax); `fix --migrate` renames them
// OLD: variable.mlir:34:3: error: 'tosa.variable' op requires attribute 'sym_name'
// NEW: tosa.variable @acc = dense<-1> : tensor<2x4xi32>
// NEW-NEXT: tosa.variable @unused : tensor<3xf32>
// NEW-NEXT: func.func @step(%x: tensor<2x4xi32>) -> tensor<2x4xi32> {
// NEW-NEXT: %0 = tosa.variable_read @acc : tensor<2x4xi32>
// NEW: tosa.variable_write @acc, %1 : tensor<2x4xi32>
// NEW: func.func @peek() -> tensor<2x4xi32> {
// NEW-NEXT: %0 = "tosa.variable_read"() {name = "acc"} : () -> tensor<2x4xi32>
// NEW: module {
// NEW-NEXT: tosa.variable @g = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// NEW: "tosa.variable_write"(%x) {name = "g"} : (tensor<2xf32>) -> ()
// CLASH: variable-clash.mlir:8:3: warning: another function declares variable @v with a different type or value; MLIR 22 declares a variable once per module
// NUMBER: variable-number.mlir:2:17: note: a tosa.variable named by a number (`tosa.variable 1 = ...`) has no MLIR 22 form
