// The default mode (fast): function-level versions on the dynamic argument
// sizes; in the version where none is 1 the chain has no size-1 test left
// and is one fused linalg.generic reading the broadcast operands in place
// (projected maps). Upstream keeps one generic per op.
// RUN: %tosa-lsp lower %s | FileCheck %s
// RUN: %tosa-lsp lower --mode=upstream %s | FileCheck %s --check-prefix=UP
// RUN: rm -rf %t && mkdir -p %t
// RUN: %tosa-lsp compile %s -o %t/chain.s --emit=asm --cpu=x86-64 -O2 --header --quiet
// RUN: FileCheck %s --check-prefix=ASM < %t/chain.s
// RUN: FileCheck %s --check-prefix=HDR < %t/chain.h

// CHECK-LABEL: func.func @chain(
// CHECK:         scf.if
// The last version: x's sizes are not 1, x is cast to the static size the
// broadcast leaves, and the four ops are one loop nest.
// CHECK:         } else {
// CHECK:           tensor.cast %arg0 : tensor<?x?xf32> to tensor<?x8xf32>
// CHECK-NOT:       scf.if
// CHECK:           linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}, #{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel"]}
// CHECK-NEXT:      ^bb0(
// CHECK-NEXT:        arith.addf
// CHECK-NEXT:        arith.mulf
// CHECK-NEXT:        arith.maximumf
// CHECK-NEXT:        arith.subf
// CHECK-NEXT:        linalg.yield

// UP-LABEL: func.func @chain(
// UP:         arith.addf
// UP-NEXT:    linalg.yield

// Vector loops (SSE at least, even for a generic x86-64 CPU).
// ASM: mulps
// ASM: subps

// HDR: Inputs must be contiguous
// HDR: void _mlir_ciface_chain(tosa_memref_f32_2d *result, tosa_memref_f32_2d *arg0, tosa_memref_f32_2d *arg1, tosa_memref_f32_2d *arg2, tosa_memref_f32_2d *arg3, tosa_memref_f32_2d *arg4);
// HDR: writes its result into out*
// HDR: void _mlir_ciface_chain_into(tosa_memref_f32_2d *arg0, tosa_memref_f32_2d *arg1, tosa_memref_f32_2d *arg2, tosa_memref_f32_2d *arg3, tosa_memref_f32_2d *arg4, tosa_memref_f32_2d *out0);
func.func @chain(%x: tensor<?x?xf32>, %r1: tensor<1x8xf32>, %c1: tensor<8x1xf32>, %r2: tensor<1x8xf32>, %c2: tensor<8x1xf32>) -> tensor<8x8xf32> {
  %s = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %0 = tosa.add %x, %r1 : (tensor<?x?xf32>, tensor<1x8xf32>) -> tensor<?x8xf32>
  %1 = tosa.mul %0, %c1, %s : (tensor<?x8xf32>, tensor<8x1xf32>, tensor<1xi8>) -> tensor<8x8xf32>
  %2 = tosa.maximum %1, %r2 : (tensor<8x8xf32>, tensor<1x8xf32>) -> tensor<8x8xf32>
  %3 = tosa.sub %2, %c2 : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
  return %3 : tensor<8x8xf32>
}
