// Every failing op is reported (mlir-opt stops at the first one per
// function), in mlir-opt's format, with file line numbers across sections.
// RUN: not %tosa-lsp check %s 2>&1 | FileCheck %s --match-full-lines
// RUN: sh -c '%tosa-lsp check %s >/dev/null 2>&1; test $? -eq 1'

func.func @two_errors(%a: tensor<3xf32>, %b: tensor<2xf32>, %c: tensor<1xf32>) -> tensor<3xf32> {
  %0 = tosa.add %a, %b : (tensor<3xf32>, tensor<2xf32>) -> tensor<3xf32>
  %1 = tosa.sub %c, %c : (tensor<1xf32>, tensor<1xf32>) -> tensor<4xf32>
  return %0 : tensor<3xf32>
}
// CHECK:      {{.*}}check-all-errors.mlir:7:8: error: 'tosa.add' op operands don't have broadcast-compatible shapes
// CHECK-NEXT:   %0 = tosa.add %a, %b : (tensor<3xf32>, tensor<2xf32>) -> tensor<3xf32>
// CHECK-NEXT:        ^
// CHECK-NEXT: {{.*}}check-all-errors.mlir:7:8: note: see current operation: %0 = "tosa.add"(%arg0, %arg1) : (tensor<3xf32>, tensor<2xf32>) -> tensor<3xf32>
// CHECK:      {{.*}}check-all-errors.mlir:8:8: error: 'tosa.sub' op result type '4' not broadcast compatible with broadcasted operands's shapes '1'

// -----

func.func @parse_error(%a: tensor<3xf32>) {
  %0 = tosa.abs %undefined : (tensor<3xf32>) -> tensor<3xf32>
}
// CHECK:      {{.*}}check-all-errors.mlir:20:17: error: use of undeclared SSA value name

// -----

// A later section is unaffected by the parse error above.
func.func @rank(%a: tensor<3x4xf32>, %b: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = tosa.add %a, %b : (tensor<3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}
// CHECK:      {{.*}}check-all-errors.mlir:28:8: error: 'tosa.add' op operands don't have matching ranks
// CHECK-NOT:  error:
