// A big transpose moving the innermost dim outwards (NHWC -> NCHW), F_into's
// result, bigger than L2 (StreamTranspose.cpp): 16x16 blocks on a grid
// shifted so each output row is one 64-byte line, stored non-temporally at
// align 64; the pixels before the first line and after the last (16 - s)
// with masked ordinary stores; an sfence before returning. F's fresh result
// too; not a transpose whose result is read again (@tr_add);
// --streaming-stores=off: none non-temporal. --streaming-stores=SIZE moves
// the threshold (the host's L2 by default): at 1G the 16 MiB @tr is not
// streamed, at 64K the 256 KiB @tr_small is. For another --cpu than the
// host's, no kernels run (their vectors and L2 are the host's): no streamed
// transpose either (the LLVM-level streaming stores may still apply).
// kernel_numeric.py checks the values at every 4-byte offset of the line.
// REQUIRES: fma-vectors
// RUN: rm -rf %t && mkdir -p %t
// RUN: %tosa-lsp compile %s -o %t/t.ll --emit=llvm-ir -O3 --quiet
// RUN: FileCheck %s --check-prefix=LL --input-file=%t/t.ll
// RUN: %tosa-lsp compile %s -o %t/off.ll --emit=llvm-ir -O3 --quiet --streaming-stores=off
// RUN: FileCheck %s --check-prefix=OFF --input-file=%t/off.ll
// RUN: %tosa-lsp compile %s -o %t/big.ll --emit=llvm-ir -O3 --quiet --streaming-stores=1G
// RUN: FileCheck %s --check-prefix=BIG --input-file=%t/big.ll
// RUN: %tosa-lsp compile %s -o %t/small.ll --emit=llvm-ir -O3 --quiet --streaming-stores=64K
// RUN: FileCheck %s --check-prefix=SMALL --input-file=%t/small.ll
// RUN: %tosa-lsp compile %s -o %t/cpu.ll --emit=llvm-ir -O3 --quiet --cpu=x86-64 --streaming-stores=64K
// RUN: FileCheck %s --check-prefix=CPU --input-file=%t/cpu.ll

func.func @tr(%x: tensor<1x256x256x64xf32>) -> tensor<1x64x256x256xf32> {
  %r = tosa.transpose %x {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x256x256x64xf32>) -> tensor<1x64x256x256xf32>
  return %r : tensor<1x64x256x256xf32>
}

func.func @tr_add(%x: tensor<1x256x256x64xf32>, %y: tensor<1x64x256x256xf32>) -> tensor<1x64x256x256xf32> {
  %t = tosa.transpose %x {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x256x256x64xf32>) -> tensor<1x64x256x256xf32>
  %r = tosa.add %t, %y : (tensor<1x64x256x256xf32>, tensor<1x64x256x256xf32>) -> tensor<1x64x256x256xf32>
  return %r : tensor<1x64x256x256xf32>
}

func.func @tr_small(%x: tensor<1x32x32x64xf32>) -> tensor<1x64x32x32xf32> {
  %r = tosa.transpose %x {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x32x32x64xf32>) -> tensor<1x64x32x32xf32>
  return %r : tensor<1x64x32x32xf32>
}

// LL-LABEL: define {{.*}} @tr(
// LL:         store <16 x float> {{.*}}, align 64, !nontemporal
// LL-LABEL: define void @tr_into(
// LL:         call void @llvm.masked.store.v16f32
// LL:         store <16 x float> {{.*}}, align 64, !nontemporal
// LL:         call void @llvm.x86.sse.sfence()
// LL:         ret void
// LL-LABEL: define {{.*}} @tr_add(
// LL-NOT:     align 64, !nontemporal
// LL-LABEL: define void @_mlir_ciface_tr_add_into(

// OFF-LABEL: define void @tr_into(
// OFF-NOT:     !nontemporal
// OFF:         ret void

// BIG-LABEL: define void @tr_into(
// BIG-NOT:     llvm.masked.store
// BIG-NOT:     !nontemporal
// BIG:         ret void

// SMALL-LABEL: define void @tr_small_into(
// SMALL:         call void @llvm.masked.store.v16f32
// SMALL:         store <16 x float> {{.*}}, align 64, !nontemporal
// SMALL:         call void @llvm.x86.sse.sfence()
// SMALL:         ret void

// CPU-LABEL: define void @tr_small_into(
// CPU-NOT:     llvm.masked.store
// CPU:         ret void
