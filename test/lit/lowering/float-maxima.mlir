// On a host with AVX512DQ, each tree of vector maxima (a 3x3 max pool's
// nine taps per output) becomes VRANGEs and one NaN test of its leaves
// (FloatMaxima.cpp): no llvm.maximum is left in the vector code, and the
// compile log counts the trees. Upstream mode keeps LLVM's expansion.
// Values: float-extrema.test.
// (VRANGE is an AVX512DQ instruction: elsewhere the trees keep LLVM's
// expansion, whose values float-extrema.test checks on every host.)
// REQUIRES: avx512dq
// RUN: rm -rf %t && mkdir -p %t
// RUN: %tosa-lsp compile %s -o %t/p.ll --emit=llvm-ir -O3 --force 2>&1 | FileCheck %s --check-prefix=LOG
// RUN: FileCheck %s < %t/p.ll
// RUN: %tosa-lsp compile %s -o %t/u.ll --emit=llvm-ir -O3 --force --mode=upstream --quiet
// RUN: FileCheck %s --check-prefix=UP < %t/u.ll

func.func @pool(%x: tensor<1x18x18x64xf32>) -> tensor<1x18x18x64xf32> {
  %r = tosa.max_pool2d %x {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x18x18x64xf32>) -> tensor<1x18x18x64xf32>
  return %r : tensor<1x18x18x64xf32>
}

// LOG: float maxima: {{[1-9][0-9]*}} tree(s) of maximum/minimum on VRANGE
// CHECK-LABEL: define {{.*}}@pool(
// CHECK-NOT:     call {{.*}}<16 x float> @llvm.maximum.v16f32(
// CHECK:         call <16 x float> @llvm.x86.avx512.mask.range.ps.512(<16 x float> {{.*}}, <16 x float> {{.*}}, i32 5,
// CHECK:         fcmp uno <16 x float>
// CHECK:         select <16 x i1> {{.*}}, <16 x float> splat (float 0x7FF8000000000000)
// CHECK-LABEL: define {{.*}}@pool_into(
// UP-NOT:      llvm.x86.avx512.mask.range
