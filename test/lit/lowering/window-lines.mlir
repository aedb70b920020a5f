// Window and reduction nests run by lines of one vector (WindowPrefetch.cpp,
// OuterReductions.cpp), each line loop annotated for LLVM: vectorised 16
// wide and never unrolled before that. A 2x2 max pool's line body is small:
// LLVM unrolled its 16 iterations before its loop vectoriser ran, and they
// stayed scalar (5.2x the memory floor on 1x256x256x256; 1.1x vectorised).
// (Windows become line loops only where the kernels run: a host with FMA
// vectors.)
// REQUIRES: fma-vectors
// RUN: %tosa-lsp lower %s --function=max2s2 --stage=loops | FileCheck %s
// RUN: rm -rf %t && mkdir -p %t
// RUN: %tosa-lsp compile %s --function=max2s2 -o %t/m.ll --emit=llvm-ir -O3 --force --quiet
// RUN: FileCheck %s --check-prefix=IR < %t/m.ll

func.func @max2s2(%x: tensor<1x16x16x64xf32>) -> tensor<1x8x8x64xf32> {
  %r = tosa.max_pool2d %x {kernel = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>} : (tensor<1x16x16x64xf32>) -> tensor<1x8x8x64xf32>
  return %r : tensor<1x8x8x64xf32>
}

// CHECK-LABEL: func.func @max2s2(
// CHECK:         memref.prefetch
// CHECK:         arith.maximumf
// CHECK:         } {llvm.loop_annotation = #llvm.loop_annotation<vectorize = <width = 16 : i32>, unroll = <disable = true>>}

// IR-LABEL: define {{.*}}@max2s2(
// IR:         call {{.*}}<16 x float> @llvm.{{maximum.v16f32|x86.avx512.mask.range.ps.512}}(
