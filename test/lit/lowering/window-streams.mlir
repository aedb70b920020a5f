// Stride-1 windows whose channels are whole cache lines (WindowStreams.cpp):
// each output row is one stream of W x C elements, tap (i, j) the same
// stream of input row i shifted by j pixels, so when the input and the
// result start at the same offset in a 64-byte line (numpy's arrays: 16
// bytes past a page) every tap line is line-aligned. The run time checks
// the offsets once per call; the pixel nest (window-jam.mlir) is the else
// branch, also taken when the result is itself line-aligned. The stream:
// the elements before the first line boundary and after the last one as
// masked vectors; blocks of 4 pixels, each tap line loaded once for the
// outputs it serves; the weights and the bias read from a copy holding
// each twice (a vector that starts in one pixel and ends in the next reads
// its channels contiguously). Values at every offset: kernel_numeric.py
// (dw3x3_c32, dw3x3_jam, dw3x3_c48_b2, maxpool3x3_s1, ...).
// REQUIRES: fma-vectors
// RUN: %tosa-lsp lower %s --function=dw --stage=loops | FileCheck %s
// RUN: %tosa-lsp lower %s --function=pool --stage=loops | FileCheck %s --check-prefix=POOL
// RUN: %tosa-lsp lower %s --function=dw24 --stage=loops | FileCheck %s --check-prefix=NOT
// RUN: %tosa-lsp lower %s --function=dw_s2 --stage=loops | FileCheck %s --check-prefix=NOT
// RUN: %tosa-lsp lower %s --function=dw --stage=loops --mode=upstream | FileCheck %s --check-prefix=NOT
// RUN: rm -rf %t && mkdir -p %t
// RUN: %tosa-lsp compile %s --function=dw -o %t/dw.s --emit=asm -O3 --force --streaming-stores=4K
// RUN: FileCheck %s --check-prefix=ASM --input-file=%t/dw.s

func.func @dw(%x: tensor<1x6x12x64xf32>, %w: tensor<3x3x64x1xf32>, %b: tensor<64xf32>) -> tensor<1x6x12x64xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %r = tosa.depthwise_conv2d %x, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x6x12x64xf32>, tensor<3x3x64x1xf32>, tensor<64xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x6x12x64xf32>
  return %r : tensor<1x6x12x64xf32>
}

func.func @pool(%x: tensor<1x6x12x16xf32>) -> tensor<1x6x12x16xf32> {
  %r = tosa.max_pool2d %x {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x6x12x16xf32>) -> tensor<1x6x12x16xf32>
  return %r : tensor<1x6x12x16xf32>
}

// 24 channels: not whole lines; stride 2: taps are not shifted streams.
func.func @dw24(%x: tensor<1x6x12x24xf32>, %w: tensor<3x3x24x1xf32>, %b: tensor<24xf32>) -> tensor<1x6x12x24xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %r = tosa.depthwise_conv2d %x, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x6x12x24xf32>, tensor<3x3x24x1xf32>, tensor<24xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x6x12x24xf32>
  return %r : tensor<1x6x12x24xf32>
}

func.func @dw_s2(%x: tensor<1x7x21x16xf32>, %w: tensor<3x3x16x1xf32>, %b: tensor<16xf32>) -> tensor<1x4x11x16xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %r = tosa.depthwise_conv2d %x, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 2, 2>} : (tensor<1x7x21x16xf32>, tensor<3x3x16x1xf32>, tensor<16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x11x16xf32>
  return %r : tensor<1x4x11x16xf32>
}

// The 9 weights and the bias, each twice over, on the stack.
// CHECK-LABEL: func.func @dw(
// CHECK:         %[[TWICE:.*]] = memref.alloca() {alignment = 64 : i64} : memref<10x128xf32>
// The interior's 9 taps and its result at the same offset in a line, and
// the result not line-aligned.
// CHECK-COUNT-10:  memref.extract_aligned_pointer_as_index
// CHECK:         %[[OK:.*]] = arith.andi
// CHECK-NEXT:    scf.if %[[OK]] {
// CHECK:           scf.for %[[C:.*]] = %c0 to %c64 step %c16 {
// CHECK-COUNT-20:    vector.store %{{.*}}, %[[TWICE]]
// CHECK:           }
// The input as one flat view for all 9 taps, the result as another.
// CHECK:           memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [4608], strides: [1]
// CHECK-NEXT:      memref.extract_strided_metadata %subview
// CHECK-NEXT:      memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [3776], strides: [1]
// CHECK-NOT:       memref.reinterpret_cast
// CHECK:           scf.for
// CHECK-NEXT:        scf.for
// Before the first line boundary: masked.
// CHECK:               %[[HEAD:.*]] = vector.create_mask
// CHECK-COUNT-19:      vector.maskedload
// CHECK:               vector.maskedstore
// Blocks of 4 pixels (4 x 64 elements), a line of each an iteration, the
// channel carried: 10 weight lines and 18 aligned tap lines for 4 results.
// CHECK:               scf.for %[[B:.*]] = %{{.*}} to %{{.*}} step %c256 {
// CHECK:                 scf.for %{{.*}} = %[[B]] to %{{.*}} step %c16 iter_args(%[[CH:.*]] = %{{.*}}) -> (index) {
// CHECK-COUNT-4:           memref.prefetch
// CHECK-COUNT-10:          vector.load %[[TWICE]][%{{.*}}, %[[CH]]]
// CHECK-COUNT-9:           vector.load %{{.*}} {alignment = 64 : i64}
// CHECK:                   vector.store %{{.*}} {alignment = 64 : i64}
// CHECK-COUNT-3:           vector.load %{{.*}} {alignment = 64 : i64}
// CHECK:                   vector.store %{{.*}} {alignment = 64 : i64}
// CHECK-COUNT-3:           vector.load %{{.*}} {alignment = 64 : i64}
// CHECK:                   vector.store %{{.*}} {alignment = 64 : i64}
// CHECK-COUNT-3:           vector.load %{{.*}} {alignment = 64 : i64}
// CHECK:                   vector.store %{{.*}} {alignment = 64 : i64}
// CHECK-NOT:               vector.load
// CHECK:                   scf.yield
// The lines left one at a time, then the masked tail.
// CHECK:               scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c16 iter_args
// CHECK:               vector.maskedstore
// CHECK:         } else {
// CHECK:           scf.for %{{.*}} = %c0 to %c8 step %c4 {

// POOL-LABEL: func.func @pool(
// POOL-NOT:      memref.alloca
// POOL:          scf.if
// POOL:            step %c64 {
// POOL:              iter_args
// POOL-COUNT-6:        vector.load %{{.*}} {alignment = 64 : i64}
// POOL:                arith.maximumf {{.*}} : vector<16xf32>
// POOL:          } else {

// NOT-NOT: memref.extract_aligned_pointer_as_index
// NOT-NOT: vector.maskedload

// F_into's streams get whole-line non-temporal stores.
// ASM-LABEL: dw_into:
// ASM: vmovntps %zmm
