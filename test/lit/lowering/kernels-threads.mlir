// --threads=N (lowering/ParallelLoops.cpp): a kernel of 2^24 FLOP and more
// gets its N panels (or channel blocks, or rows) as an scf.parallel, each
// iteration packing into a buffer of its own, then OpenMP's parallel loop
// and libomp's calls; a smaller kernel, --threads=1 and upstream mode get
// none. The threaded kernels' numbers: kernels-numeric.test.
// (The kernels, and so their threads, exist only on a host with FMA
// vectors; elsewhere matmul and conv2d keep MLIR's loops.)
// REQUIRES: fma-vectors
// RUN: rm -rf %t && mkdir -p %t
// RUN: %tosa-lsp lower --stage=loops --threads=2 %s | FileCheck %s
// RUN: %tosa-lsp lower --stage=loops %s | FileCheck %s --check-prefix=ONE
// RUN: %tosa-lsp lower --stage=llvm --threads=2 --function=mm %s | FileCheck %s --check-prefix=OMP
// RUN: %tosa-lsp compile --emit=llvm-ir --threads=2 -O3 -o %t/k.ll %s 2>&1 | FileCheck %s --check-prefix=LOG
// RUN: FileCheck %s --check-prefix=IR --input-file=%t/k.ll
// RUN: %tosa-lsp compile --emit=llvm-ir --threads=2 --mode=upstream -o %t/u.ll %s 2>&1 | FileCheck %s --check-prefix=UPSTREAM
// RUN: not grep -q __kmpc %t/u.ll
// RUN: %tosa-lsp lower --stage=llvm --threads=0 --function=mm %s | FileCheck %s --check-prefix=OMP-ANY
// RUN: not %tosa-lsp compile --threads=300 -o %t/x.o %s 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not %tosa-lsp lower --threads=257 %s 2>&1 | FileCheck %s --check-prefix=BAD
// Without libomp, --emit=shared says what to install; an object file does
// not need it yet.
// RUN: not env TOSA_LSP_OPENMP_RUNTIME=%t/none/libomp.so.5 %tosa-lsp compile --quiet --emit=shared --threads=2 -o %t/k.so %s 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: env TOSA_LSP_OPENMP_RUNTIME=%t/none/libomp.so.5 %tosa-lsp compile --emit=obj --threads=2 -o %t/k.o %s 2>&1 | FileCheck %s --check-prefix=OBJ
// RUN: %if libomp %{ %tosa-lsp compile --quiet --emit=shared --threads=2 -o %t/k.so %s %}
// RUN: %if libomp %{ readelf -d %t/k.so | FileCheck %s --check-prefix=NEEDED %}
// `run` loads libomp into the JIT: the same numbers as on one thread.
// RUN: %if libomp %{ %tosa-lsp run --function=mid --random=3 --threads=2 %s > %t/mid2.json %}
// RUN: %if libomp %{ %tosa-lsp run --function=mid --random=3 %s > %t/mid1.json %}
// RUN: %if libomp %{ cmp %t/mid1.json %t/mid2.json %}
// RUN: not env TOSA_LSP_OPENMP_RUNTIME=%t/none/libomp.so.5 %tosa-lsp run --function=mid --random=3 --threads=2 %s 2>&1 | FileCheck %s --check-prefix=RUN-MISSING

// 512 x 256 x 512: 2^27 FLOP, 16 N panels.
func.func @mm(%a: tensor<1x512x256xf32>, %b: tensor<1x256x512xf32>) -> tensor<1x512x512xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %r = tosa.matmul %a, %b, %zp, %zp : (tensor<1x512x256xf32>, tensor<1x256x512xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x512x512xf32>
  return %r : tensor<1x512x512xf32>
}

// 64^3: a fork would cost more than a thread saves.
func.func @small(%a: tensor<1x64x64xf32>, %b: tensor<1x64x64xf32>) -> tensor<1x64x64xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %r = tosa.matmul %a, %b, %zp, %zp : (tensor<1x64x64xf32>, tensor<1x64x64xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x64x64xf32>
  return %r : tensor<1x64x64xf32>
}

// 256 x 128 x 256: 2^24 FLOP, the smallest kernel on threads.
func.func @mid(%a: tensor<1x256x128xf32>, %b: tensor<1x128x256xf32>) -> tensor<1x256x256xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %r = tosa.matmul %a, %b, %zp, %zp : (tensor<1x256x128xf32>, tensor<1x128x256xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x256x256xf32>
  return %r : tensor<1x256x256xf32>
}

// CHECK-LABEL: func.func private @__tosa_lsp_kernel1(
// CHECK-SAME: memref<1x512x256xf32>
// CHECK: scf.parallel ({{.*}}) = ({{.*}}) to (%c16) step
// B's panel: one buffer per N panel, so per thread.
// CHECK-NEXT: memref.alloc() {{.*}} : memref<1x1x256x32x1xf32>
// CHECK-NOT: tosa_lsp.parallel
// CHECK-LABEL: func.func private @__tosa_lsp_kernel2(
// CHECK-NOT: scf.parallel
// CHECK-LABEL: func.func private @__tosa_lsp_kernel3(
// CHECK-SAME: memref<1x256x128xf32>
// CHECK: scf.parallel ({{.*}}) = ({{.*}}) to (%c8) step
// CHECK-NOT: tosa_lsp.parallel

// ONE-NOT: scf.parallel
// ONE-NOT: tosa_lsp.parallel

// OMP: omp.parallel num_threads
// OMP-NEXT: omp.wsloop schedule(dynamic)
// OMP-NEXT: omp.loop_nest

// LOG: threads: 2 for matmuls and convolutions of 2^24 FLOP and more (OpenMP)
// LOG: uses LLVM's OpenMP runtime (__kmpc_*): link the program with libomp.so.5

// IR: call void {{.*}}@__kmpc_fork_call(

// UPSTREAM: threads: 1 (--threads applies to the host's kernels: not in upstream mode or with --cpu)

// --threads=0: no num_threads clause, libomp decides where the code runs.
// OMP-ANY: omp.parallel {
// OMP-ANY-NEXT: omp.wsloop schedule(dynamic)

// BAD: the thread count is 1 to 256, or 0 for the running machine's

// MISSING: tosa-lsp: error: the shared library (--threads) needs libomp: TOSA_LSP_OPENMP_RUNTIME names {{.*}}none/libomp.so.5, which does not exist

// OBJ: uses LLVM's OpenMP runtime (__kmpc_*): link the program with libomp.so.5 (Debian's libomp5; -lomp with libomp-dev)

// NEEDED: (NEEDED) Shared library: [libomp.so.5]

// RUN-MISSING: tosa-lsp: error: @mid (--threads) needs libomp
