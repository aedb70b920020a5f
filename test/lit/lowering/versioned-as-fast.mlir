// Issue 41: `--mode=versioned` is never slower than the default. Where the
// default's function versions (FastPath.cpp) already decide every size that
// could be 1 (the runtime broadcasts of bench/kernels: `?x?` + `4096x1`, an
// NHWC `?x?x?x?` whose second operand is a bias 1x1x1xC at run time),
// versioned mode's per-op versioning (Versioning.cpp) finds nothing left to
// version: both modes give the same LLVM IR, so a difference in their
// timings is the run's spread (bench/kernels/README.md, kernels9).
// RUN: rm -rf %t && mkdir -p %t
// RUN: %tosa-lsp compile %s -o %t/fast.ll --emit=llvm-ir -O3 --quiet
// RUN: %tosa-lsp compile %s -o %t/versioned.ll --emit=llvm-ir -O3 --quiet --mode=versioned
// RUN: diff %t/fast.ll %t/versioned.ll
// RUN: FileCheck %s --input-file=%t/versioned.ll

// CHECK: define void @add_col_dyn_into(
// CHECK: define void @add4_bias_rt_into(

func.func @add_col_dyn(%a: tensor<?x?xf32>, %b: tensor<4096x1xf32>) -> tensor<4096x?xf32> {
  %r = tosa.add %a, %b : (tensor<?x?xf32>, tensor<4096x1xf32>) -> tensor<4096x?xf32>
  return %r : tensor<4096x?xf32>
}

func.func @add4_bias_rt(%a: tensor<?x?x?x?xf32>, %b: tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32> {
  %r = tosa.add %a, %b : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  return %r : tensor<?x?x?x?xf32>
}
