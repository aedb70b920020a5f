// A reduction over an outer dim (reduce_max over H of NHWC) combines 4 rows
// per pass over the result (OuterReductions.cpp), 8 where 8 divide H: the H
// loop steps by 4 (8) and the innermost body loads and stores each result
// element once for the 4 (8) input rows, in lines of one vector, each
// prefetching its rows' line 2 KB ahead. Upstream mode: one row per pass.
// REQUIRES: fma-vectors
// RUN: %tosa-lsp lower %s --stage=loops | FileCheck %s
// RUN: %tosa-lsp lower %s --stage=loops --mode=upstream | FileCheck %s --check-prefix=UP

func.func @rmax(%x: tensor<1x36x40x64xf32>) -> tensor<1x1x40x64xf32> {
  %r = tosa.reduce_max %x {axis = 1 : i32} : (tensor<1x36x40x64xf32>) -> tensor<1x1x40x64xf32>
  return %r : tensor<1x1x40x64xf32>
}

// CHECK-LABEL: func.func @rmax(
// CHECK:         scf.for %[[H:arg[0-9]+]] = %c0 to %c36 step %c4 {
// CHECK:           memref.load %{{.*}}[%{{.*}}, %[[H]],
// CHECK-NEXT:      memref.load %[[OUT:[a-z_0-9]+]][
// CHECK-NEXT:      arith.maximumf
// CHECK-COUNT-3:   arith.maximumf
// CHECK-NOT:       memref.load %[[OUT]]
// CHECK:           memref.store %{{.*}}, %[[OUT]][
// CHECK-NEXT:    }

func.func @rmax8(%x: tensor<1x32x40x64xf32>) -> tensor<1x1x40x64xf32> {
  %r = tosa.reduce_max %x {axis = 1 : i32} : (tensor<1x32x40x64xf32>) -> tensor<1x1x40x64xf32>
  return %r : tensor<1x1x40x64xf32>
}

// CHECK-LABEL: func.func @rmax8(
// CHECK:         scf.for %[[H:arg[0-9]+]] = %c0 to %c32 step %c8 {
// CHECK:           scf.for %[[C:arg[0-9]+]] = %c0 to %c64 step %c16 {
// CHECK:             %[[AHEAD:.*]] = arith.addi %[[C]], %c512
// CHECK:             memref.prefetch %[[IN:[a-z_0-9]+]][%{{.*}}, %[[H]], %{{.*}}, %{{.*}}, %[[AHEAD]]], read, locality<3>, data
// CHECK-COUNT-7:     memref.prefetch %[[IN]][
// CHECK-NOT:         memref.prefetch
// CHECK:             scf.for %{{.*}} = %[[C]] to
// CHECK:           memref.load %{{.*}}[%{{.*}}, %[[H]],
// CHECK-NEXT:      memref.load %[[OUT:[a-z_0-9]+]][
// CHECK-NEXT:      arith.maximumf
// CHECK-COUNT-7:   arith.maximumf
// CHECK-NOT:       memref.load %[[OUT]]
// CHECK:           memref.store %{{.*}}, %[[OUT]][
// CHECK-NEXT:    } {llvm.loop_annotation
// UP-NOT:        memref.prefetch
// UP-NOT:        step %c4
// UP-NOT:        step %c8
