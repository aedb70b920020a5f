// A depthwise 3x3 at stride 1 (WindowPrefetch.cpp): adjacent output
// columns read overlapping taps, so the interior's column loop computes 4
// columns an iteration (8 of its 10, then 2 alone), jammed into the channel
// loop: the first column loads its 9 taps, 9 weights and the bias, each
// next column only its 3 new taps. Each column's line prefetches the newest
// row a few pixels ahead. F_into's jammed nest stores 4 contiguous streams
// and still gets its non-temporal twin (StreamingStores.cpp): 3 nests here,
// 2 without it, and a fourth, the rows as aligned streams this nest is the
// else branch of (window-streams.mlir). At stride 2 adjacent columns share
// one tap column of three, and all of a depthwise conv's weights: 2 columns an iteration,
// the second loading 6 new taps and no weights (pools at stride 2 are not
// jammed: no weights, and slower jammed). Values: kernel_numeric.py
// (dw3x3_jam, dw3x3_s2, maxpool3x3_s1).
// (Windows are unrolled only where the kernels run: a host with FMA vectors.)
// REQUIRES: fma-vectors
// RUN: %tosa-lsp lower %s --function=dw --stage=loops | FileCheck %s
// RUN: %tosa-lsp lower %s --function=dw_s2 --stage=loops | FileCheck %s --check-prefix=S2
// RUN: rm -rf %t && mkdir -p %t
// RUN: %tosa-lsp compile %s --function=dw -o %t/dw.ll --emit=llvm-ir -O3 --force --streaming-stores=4K 2>&1 | FileCheck %s --check-prefix=LOG
// RUN: FileCheck %s --check-prefix=LL --input-file=%t/dw.ll

func.func @dw(%x: tensor<1x6x12x64xf32>, %w: tensor<3x3x64x1xf32>, %b: tensor<64xf32>) -> tensor<1x6x12x64xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %r = tosa.depthwise_conv2d %x, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x6x12x64xf32>, tensor<3x3x64x1xf32>, tensor<64xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x6x12x64xf32>
  return %r : tensor<1x6x12x64xf32>
}

func.func @dw_s2(%x: tensor<1x7x21x16xf32>, %w: tensor<3x3x16x1xf32>, %b: tensor<16xf32>) -> tensor<1x4x11x16xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %r = tosa.depthwise_conv2d %x, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 2, 2>} : (tensor<1x7x21x16xf32>, tensor<3x3x16x1xf32>, tensor<16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x11x16xf32>
  return %r : tensor<1x4x11x16xf32>
}

// CHECK-LABEL: func.func @dw(
// CHECK:         scf.for %[[OW:arg[0-9]+]] = %c0 to %c8 step %c4 {
// CHECK-NEXT:      scf.for %[[C:arg[0-9]+]] = %c0 to %c64 step %c16 {
// CHECK:             memref.prefetch
// CHECK-COUNT-3:     memref.prefetch
// CHECK-NEXT:        scf.for %[[L:arg[0-9]+]] = %[[C]] to
// CHECK-COUNT-19:      memref.load
// CHECK-NOT:           memref.load
// CHECK:               memref.store
// CHECK-NEXT:          %[[OW1:[0-9]+]] = arith.addi %[[OW]], %c1
// CHECK-COUNT-3:       memref.load %{{[a-z_0-9]+}}[%{{.*}}, %{{.*}}, %[[OW1]], %[[L]]]
// CHECK-NOT:           memref.load
// CHECK:               memref.store
// CHECK-NEXT:          arith.addi %[[OW]], %c2
// CHECK-COUNT-3:       memref.load
// CHECK-NOT:           memref.load
// CHECK:               memref.store
// CHECK-NEXT:          arith.addi %[[OW]], %c3
// CHECK-COUNT-3:       memref.load
// CHECK-NOT:           memref.load
// CHECK:               memref.store
// CHECK-NEXT:        } {llvm.loop_annotation
// The 2 columns left, one an iteration, all 19 loads each.
// CHECK:         scf.for %{{.*}} = %c8 to %c10 step %c1 {
// CHECK:             memref.prefetch
// CHECK-NEXT:        scf.for
// CHECK-COUNT-19:      memref.load
// CHECK-NOT:           memref.load
// CHECK:               memref.store

// S2-LABEL: func.func @dw_s2(
// S2:         scf.for %{{.*}} = %c0 to %c8 step %c2 {
// S2:           scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c1 {
// S2-COUNT-19:    memref.load
// S2-COUNT-6:     memref.load %subview
// S2-NOT:         memref.load
// S2:           } {llvm.loop_annotation

// LOG: streaming stores: 4 loop nest(s) store non-temporally from 4096 bytes

// LL-LABEL: define void @dw_into(
// LL-COUNT-4: store <16 x float> {{.*}}, !nontemporal
