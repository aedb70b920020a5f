// --mode=versioned (spec 004): one version per could-be-1 dynamic dim; where
// a dim is 1 the operand is cast to a static 1 and read through a projected
// (constant 0) map instead of being copied.
// RUN: %tosa-lsp lower --mode=versioned %s | FileCheck %s
// RUN: %tosa-lsp lower --mode=upstream %s | FileCheck %s --check-prefix=UP

// CHECK-LABEL: func.func @dyn_vs_static(
// CHECK:         %[[D:.*]] = tensor.dim %arg0, %{{.*}} : tensor<?x3xf32>
// CHECK:         %[[ONE:.*]] = arith.cmpi eq, %[[D]], %{{.*}} : index
// CHECK:         scf.if %[[ONE]] -> (tensor<4x3xf32>) {
// CHECK:           %[[C:.*]] = tensor.cast %arg0 : tensor<?x3xf32> to tensor<1x3xf32>
// CHECK:           linalg.generic {indexing_maps = [#[[PROJ:.*]], #{{.*}}, #{{.*}}], {{.*}} ins(%[[C]], %arg1 : tensor<1x3xf32>, tensor<4x3xf32>)
// CHECK:         } else {
// Here the size is known not to be 1: upstream's test of it (the same
// condition after cse) folds away with its copy block, and the operand is
// the static 4 the result needs.
// CHECK-NOT:       scf.if
// CHECK:           linalg.generic {{.*}} ins(%{{.*}}, %arg1 : tensor<4x3xf32>, tensor<4x3xf32>)
// Upstream copies %arg0 when its runtime size is 1 (a broadcast generic
// writing a new tensor), versioned mode never does.
// UP-LABEL: func.func @dyn_vs_static(
// UP:         scf.if
// UP:           linalg.generic {{.*}} ins(%arg0 : tensor<?x3xf32>) outs(
func.func @dyn_vs_static(%a: tensor<?x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = tosa.add %a, %b : (tensor<?x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Two `?x?` operands: the function-level tree of every mode but upstream
// (FastPath.cpp) gives each pattern of 1s in one operand its version; where
// both operands have a 1, the leaf calls the function as upstream lowers
// it, where the per-op versions give up (4 could-be-1 dims, more than the
// bound 3): upstream's form is kept there.
// CHECK-LABEL: func.func @too_many(
// CHECK:         call @too_many__generic(%arg0, %arg1)
// CHECK:         tensor.cast %arg0 : tensor<?x?xf32> to tensor<1x1xf32>
// CHECK:         tensor.cast %arg0 : tensor<?x?xf32> to tensor<1x?xf32>
// CHECK:         tensor.cast %arg0 : tensor<?x?xf32> to tensor<?x1xf32>
// CHECK:         tensor.cast %arg1 : tensor<?x?xf32> to tensor<1x1xf32>
// CHECK:         tensor.cast %arg1 : tensor<?x?xf32> to tensor<1x?xf32>
// CHECK:         tensor.cast %arg1 : tensor<?x?xf32> to tensor<?x1xf32>
// CHECK-LABEL: func.func private @too_many__generic(
// CHECK-NOT:     tensor.cast %arg
// CHECK:         arith.maxui
func.func @too_many(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = tosa.add %a, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
