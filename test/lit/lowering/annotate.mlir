// RUN: %tosa-lsp lower --annotate --mode=upstream %s | FileCheck %s
// RUN: %tosa-lsp lower --annotate %s | FileCheck %s --check-prefix=FAST
// Every line holding a lowered op names its source op, not only the first
// line of each op's run (issue 13 #20).

func.func @add(%a: tensor<1x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tosa.add %a, %b : (tensor<1x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = tosa.exp %0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

// CHECK:      tensor.empty() : tensor<2x3xf32>  // from tosa.add @ 7:8
// CHECK-NEXT: linalg.generic {{.*}}  // from tosa.add @ 7:8
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: arith.addf {{.*}} : f32  // from tosa.add @ 7:8
// CHECK-NEXT: linalg.yield {{.*}} : f32  // from tosa.add @ 7:8
// CHECK:      tensor.empty() : tensor<2x3xf32>  // from tosa.exp @ 8:8
// CHECK-NEXT: linalg.generic {{.*}}  // from tosa.exp @ 8:8
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: math.exp {{.*}} : f32  // from tosa.exp @ 8:8
// CHECK-NEXT: linalg.yield {{.*}} : f32  // from tosa.exp @ 8:8
// CHECK:      return {{.*}}  // from func.return @ 9:3

// Fused: one loop body, each line still names its own op.
// FAST:      linalg.generic
// FAST-NEXT: ^bb0(
// FAST-NEXT: arith.addf {{.*}} : f32  // from tosa.add @ 7:8
// FAST-NEXT: math.exp {{.*}} : f32  // from tosa.exp @ 8:8
// FAST-NEXT: linalg.yield {{.*}}  // from tosa.exp @ 8:8
