// A big transpose that is a function's result: F_into writes the caller's
// buffer with the vectorised 16x16 (8x8) block transposes too (Kernels.cpp,
// intoCallersBuffer), not with scalar loops (NHWC -> NCHW of 64 MiB: 11x
// the copy time against 2x). kernel_numeric.py checks its values.
// REQUIRES: fma-vectors
// RUN: rm -rf %t && mkdir -p %t
// RUN: %tosa-lsp compile %s -o %t/t.ll --emit=llvm-ir -O3 --quiet
// RUN: FileCheck %s --input-file=%t/t.ll

func.func @tr(%x: tensor<1x32x48x64xf32>) -> tensor<1x64x32x48xf32> {
  %r = tosa.transpose %x {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x32x48x64xf32>) -> tensor<1x64x32x48xf32>
  return %r : tensor<1x64x32x48xf32>
}

// CHECK-LABEL: define void @tr_into(
// CHECK-NOT:     call void @llvm.memcpy
// CHECK:         shufflevector <{{8|16}} x float>
// CHECK-NOT:     call void @llvm.memcpy
// CHECK:         ret void
