// The `vector` stage: matmuls and convolutions tiled, packed and vectorised
// by the transform dialect schedules of lowering/Kernels.cpp, each in a
// private kernel function that every call site of the same kernel shares.
// The register tile's accumulators are loop-carried vectors of the
// reduction loops, updated by FMAs of a broadcast input element and a row of
// the other operand. Upstream mode keeps MLIR's named ops (its vector stage
// is its linalg stage).
// REQUIRES: fma-vectors
// RUN: %tosa-lsp lower %s --stage=vector | FileCheck %s
// RUN: %tosa-lsp lower %s --stage=vector --function=conv | FileCheck %s --check-prefix=FN
// RUN: %tosa-lsp lower %s --stage=vector --mode=upstream | FileCheck %s --check-prefix=UP
// RUN: %tosa-lsp lower %s --stage=llvm | FileCheck %s --check-prefix=LLVM
// RUN: %tosa-lsp lower %s --stage=vector --function=mmk | FileCheck %s --check-prefix=KB
// RUN: %tosa-lsp lower %s --stage=loops --function=mmk | FileCheck %s --check-prefix=PF
// RUN: %tosa-lsp lower %s --stage=vector --function=mmtall | FileCheck %s --check-prefix=KT
// RUN: %tosa-lsp lower %s --function=dw | FileCheck %s --check-prefix=DW
// RUN: %tosa-lsp lower %s --function=dw --stage=loops | FileCheck %s --check-prefix=DWLOOPS
// RUN: %tosa-lsp compile %s -o %t.ll --emit=llvm-ir -O0 --quiet --force && FileCheck %s --check-prefix=DWVEC --input-file=%t.ll
// RUN: %tosa-lsp lower %s --function=dw --mode=upstream | FileCheck %s --check-prefix=DWUP

// CHECK-LABEL: func.func @mm(
// CHECK:         call @[[MM:__tosa_lsp_kernel[0-9]+]](%arg0, %arg1,
// CHECK:         call @[[MM]](%arg2, %arg1,
// CHECK-LABEL: func.func @conv(
// Weights as HWCF, for contiguous output channels.
// CHECK:         linalg.transpose ins(%arg1 : tensor<32x3x3x16xf32>) {{.*}} permutation = [1, 2, 3, 0]
// CHECK:         call @[[CONV:__tosa_lsp_kernel[0-9]+]](
// More output channels than a block: TOSA's FHWC weights go to the kernel,
// which transposes them one channel block at a time into a contiguous panel.
// CHECK-LABEL: func.func @convp(
// CHECK-NOT:     linalg.transpose
// CHECK:         call @[[CONVP:__tosa_lsp_kernel[0-9]+]](%padded, %arg1, %arg2)
// CHECK-LABEL: func.func @mmp(
// CHECK:         call @[[MMP:__tosa_lsp_kernel[0-9]+]](%arg0, %arg1,
// CHECK-NOT:   func.func private @__tosa_lsp_kernel
// CHECK:       func.func private @[[MM]](
// CHECK:         %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : vector<8x{{32|16}}xf32>
// CHECK-NOT:     linalg.fill
// The packing of B as vector copies, its panels in rows of 32 (or 16)
// floats; A is not packed: a view of its rows in panels of 8 (no copy),
// read in place. Then C's tiles, 8 rows by 32 or 16 columns, computed in C
// itself (a view of its rows in tiles, no packed copy of C). One K block:
// each tile starts from zero in registers and is stored once; C is neither
// zero-filled nor read.
// CHECK-NOT:     tensor<1x8x48x8x1xf32>
// CHECK:         scf.for {{.*}} -> (tensor<1x{{2|4}}x48x{{32|16}}x1xf32>)
// CHECK:           vector.transfer_read {{.*}} vector<{{32|16}}xf32>
// CHECK:         tensor.expand_shape %{{[0-9]+}} {{.*}} output_shape [1, 8, 8, {{2|4}}, {{32|16}}] : tensor<1x64x64xf32>
// CHECK:         %[[A:.+]] = tensor.expand_shape %arg0 {{.*}} output_shape [1, 8, 8, 48, 1] : tensor<1x64x48xf32>
// CHECK:         scf.for {{.*}} -> (tensor<1x8x8x{{2|4}}x{{32|16}}xf32>)
// CHECK:           scf.for {{.*}} -> (tensor<1x8x8x{{2|4}}x{{32|16}}xf32>)
// CHECK-NOT:           vector.transfer_read {{.*}} vector<8x1x{{32|16}}xf32>
// The K loop runs four k steps per iteration (KernelTiles.cpp): 8 rows x 4
// = 32 FMAs, each k's 8 elements of A read from A's 8 rows.
// CHECK:             scf.for {{.*}} step %c4 iter_args(%{{.*}} = %[[ZERO]]) -> (vector<8x{{16|32}}xf32>)
// CHECK:               vector.transfer_read %[[A]]{{.*}} : tensor<1x8x8x48x1xf32>, vector<8x1x1xf32>
// CHECK:               vector.broadcast {{.*}} : f32 to vector<{{16|32}}xf32>
// CHECK-NEXT:          vector.extract
// CHECK-NEXT:          vector.fma {{.*}} : vector<{{16|32}}xf32>
// CHECK-COUNT-31:      vector.fma
// CHECK-NOT:           vector.fma
// CHECK:               scf.yield
// CHECK:             vector.transfer_write {{.*}} : vector<8x1x{{32|16}}xf32>
// CHECK-NOT:     linalg.transpose
// CHECK-NOT:     linalg.unpack
// CHECK-NOT:     linalg.batch_matmul
// One output row, 8 columns by 32 (or 16) channels in registers across the
// taps and input channels; the input read in place.
// CHECK:       func.func private @[[CONV]](
// CHECK:         scf.for {{.*}} iter_args({{.*}}) -> (vector<8x{{16|32}}xf32>)
// CHECK:           vector.fma {{.*}} : vector<{{16|32}}xf32>
// CHECK-NOT:     linalg.conv_2d
// CHECK:       func.func private @[[CONVP]](%arg0: tensor<1x10x10x16xf32>, %arg1: tensor<64x3x3x16xf32>
// CHECK:         scf.for {{.*}} -> (tensor<1x8x8x64xf32>)
// CHECK:           vector.transfer_read %arg1{{.*}} : tensor<64x3x3x16xf32>, vector<{{16|8}}x1x1x{{16|8}}xf32>
// CHECK:           vector.fma {{.*}} : vector<{{16|32}}xf32>
// CHECK-NOT:     linalg.conv_2d
// K a multiple of a block from 128 up: B packed one panel at a time into a
// KC x NR buffer, inside the N-panel loop, before the M panels use it.
// CHECK:       func.func private @[[MMP]](
// CHECK:         %[[PANEL:[0-9]+]] = tensor.empty() : tensor<1x1x256x{{32|16}}x1xf32>
// CHECK:         scf.for {{.*}} -> (tensor<1x2x8x{{2|4}}x{{32|16}}xf32>)
// CHECK-NEXT:      affine.apply
// CHECK-NEXT:      tensor.extract_slice %arg1[0, 0, %{{[0-9]+}}] [1, 256, {{32|16}}]
// CHECK:           scf.for {{.*}} iter_args(%{{.*}} = %[[PANEL]]) -> (tensor<1x1x256x{{32|16}}x1xf32>)
// CHECK:           scf.for {{.*}} -> (tensor<1x2x8x{{2|4}}x{{32|16}}xf32>)
// CHECK:             vector.fma {{.*}} : vector<{{16|32}}xf32>
// Two K blocks of 1024 (KernelTiles.cpp): the tile starts from zero; C is
// read and added after the K loop from the second block on (the first
// writes C whole, so C is not zero-filled), and after bufferization the
// tile's rows are prefetched before the K loop (their misses overlap it).
// KB-LABEL:   func.func private @__tosa_lsp_kernel{{[0-9]+}}(
// KB-NOT:       linalg.fill
// KB:           scf.for %[[KB:[a-z0-9]+]] = %[[C0:c0]] to %c2048 step %c1024
// KB:             scf.for {{.*}} iter_args(%{{.*}} = %[[Z:cst[_0-9]*]]) -> (vector<8x{{32|16}}xf32>)
// KB:             %[[FIRST:[0-9]+]] = arith.cmpi eq, %[[KB]], %[[C0]]
// KB-NEXT:        scf.if %[[FIRST]] -> (vector<8x{{32|16}}xf32>)
// KB:             } else {
// KB-NEXT:          vector.transfer_read {{.*}} vector<8x1x{{32|16}}xf32>
// KB-NEXT:          vector.shape_cast
// KB-NEXT:          arith.addf
// A tall A (M = 2048): K blocks of 512, not 1024, so that one K block of
// the packed A (M x KC floats, read again for every N panel) is at most
// 4 MiB and stays in L3 (Kernels.cpp, kABlockBytes). A is packed one K
// block at a time, inside the K-block loop, not whole before it.
// KT-LABEL:   func.func private @__tosa_lsp_kernel{{[0-9]+}}(
// KT-NOT:       tensor<1x256x1024x8x1xf32>
// KT:           scf.for %{{[a-z0-9]+}} = %c0 to %c1024 step %c512
// KT-NEXT:        tensor.extract_slice %arg0
// KT-NEXT:        tensor.empty() : tensor<1x256x512x8x1xf32>
// KT:             scf.for {{.*}} iter_args(%{{.*}} = %{{cst[_0-9]*}}) -> (vector<8x{{32|16}}xf32>)
// PF-LABEL:   func.func private @__tosa_lsp_kernel{{[0-9]+}}(
// PF-COUNT-8:     memref.prefetch {{.*}}, write, locality<3>, data
// PF:             scf.for {{.*}} -> (vector<8x{{32|16}}xf32>)
// A depthwise 3x3 (WindowOps.cpp): element-wise generics over the output,
// each tap a strided view: the interior (every tap in bounds) straight from
// the input, no padded copy of it; then the border pieces (each border row
// and column alone, corners apart), also straight from the input, their
// taps outside it reading the padding value (no padded slices: fresh
// buffers on every call); all inserted into one result. Upstream keeps the
// named op.
// DW-LABEL:   func.func @dw(
// DW:           %[[PAD:.*]] = arith.constant 0.000000e+00 : f32
// DW-NOT:       linalg.depthwise_conv
// DW-COUNT-9:   tensor.extract_slice %arg0{{.*}} [1, 6, 6, 16] [1, 1, 1, 1] : tensor<1x8x8x16xf32> to tensor<1x6x6x16xf32>
// The bias is the accumulator's start (an input read by d3), not a
// second pass; the output has no multiplier dim (no collapse after it);
// the interior generic is marked for prefetching.
// DW:           linalg.generic
// DW-SAME:        affine_map<(d0, d1, d2, d3) -> (d3)>
// DW-SAME:        iterator_types = ["parallel", "parallel", "parallel", "parallel"]
// DW-SAME:        ins({{.*}}, %arg2 : {{.*}}tensor<16xf32>)
// DW-SAME:        tosa_lsp.prefetch_window = array<i64: 64, 16, 1, 4, 16>
// DW:             %[[M:[0-9]+]] = arith.mulf {{.*}} fastmath<contract>
// DW-NEXT:        arith.addf %in_{{[0-9]+}}, %[[M]] fastmath<contract>
// DW:           tensor.insert_slice {{.*}}[0, 1, 1, 0] [1, 6, 6, 16]
// DW-NOT:       tensor.pad
// The left column: input columns 0 and 1 (6 taps); the column left of the
// input is the padding value (0.0) times the weights.
// DW-COUNT-6:   tensor.extract_slice %arg0[0, {{[0-2]}}, {{[01]}}, 0] [1, 6, 1, 16]
// DW-NEXT:      tensor.empty
// DW-NEXT:      linalg.generic
// DW-NOT:       tensor.extract_slice
// DW-COUNT-3:   arith.mulf %in{{(_[0-9]+)?}}, %[[PAD]] fastmath<contract>
// DW:           tensor.insert_slice {{.*}}[0, 1, 0, 0] [1, 6, 1, 16]
// DW-NOT:       tensor.pad
// DW:           tensor.insert_slice {{.*}}[0, 0, 0, 0] [1, 1, 1, 16]
// DW-NOT:       tensor.pad
// DW:           %[[LAST:.*]] = tensor.insert_slice {{.*}}[0, 7, 7, 0] [1, 1, 1, 16]
// DW-NEXT:      return %[[LAST]]
// At the loops stage the interior's channel loop runs by cache lines, each
// prefetching the newest input row's line 64 pixels (4 KB) ahead.
// (That nest is the else branch of the rows as aligned streams, which
// window-streams.mlir checks.)
// DWLOOPS-LABEL: func.func @dw(
// DWLOOPS:         } else {
// DWLOOPS:         scf.for %{{.*}} = %c0 to %c1 step %c1 {
// DWLOOPS-NEXT:      scf.for %{{.*}} = %c0 to %c6 step %c1 {
// DWLOOPS-NEXT:        scf.for %[[OW:arg[0-9]+]] = %c0 to %c6 step %c1 {
// DWLOOPS-NEXT:          scf.for %[[C:arg[0-9]+]] = %c0 to %c16 step %c16 {
// DWLOOPS-NEXT:            arith.addi %[[C]], %c16
// DWLOOPS-NEXT:            %[[AHEAD:[0-9]+]] = arith.addi %[[OW]], %c64
// DWLOOPS-NEXT:        memref.prefetch %subview{{(_[0-9]+)?}}[%{{.*}}, %{{.*}}, %[[AHEAD]], %[[C]]], read, locality<3>, data
// DWLOOPS-NEXT:        scf.for %{{.*}} = %[[C]] to
// The line's loop asks LLVM for one 16-lane vector, not unrolled (its default here is
// 256-bit vectors), through to the LLVM IR's loop metadata.
// DWLOOPS:             } {llvm.loop_annotation = #llvm.loop_annotation<vectorize = <width = 16 : i32>, unroll = <disable = true>>}
// DWVEC: !{!"llvm.loop.vectorize.width", i32 16}
// DWUP:         linalg.depthwise_conv_2d_nhwc_hwcm
// With --function, the kernels it calls are shown too.
// FN: func.func @conv(
// FN: func.func private @__tosa_lsp_kernel{{[0-9]+}}(
// FN:   vector.fma
// UP-LABEL: func.func @mm(
// UP:         linalg.batch_matmul
// UP:         linalg.batch_matmul
// UP-LABEL: func.func @conv(
// UP:         linalg.conv_2d_nhwc_fhwc
// LLVM-LABEL: llvm.func @mm(
// LLVM:       llvm.intr.fmuladd({{.*}}) : (vector<{{16|32}}xf32>
func.func @mm(%a: tensor<1x64x48xf32>, %b: tensor<1x48x64xf32>, %c: tensor<1x64x48xf32>) -> tensor<1x64x64xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %r = tosa.matmul %a, %b, %zp, %zp : (tensor<1x64x48xf32>, tensor<1x48x64xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x64x64xf32>
  %s = tosa.matmul %c, %b, %zp, %zp : (tensor<1x64x48xf32>, tensor<1x48x64xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x64x64xf32>
  %t = tosa.add %r, %s : (tensor<1x64x64xf32>, tensor<1x64x64xf32>) -> tensor<1x64x64xf32>
  return %t : tensor<1x64x64xf32>
}

func.func @conv(%x: tensor<1x16x16x16xf32>, %w: tensor<32x3x3x16xf32>, %bias: tensor<32xf32>) -> tensor<1x16x16x32xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %r = tosa.conv2d %x, %w, %bias, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x16x16x16xf32>, tensor<32x3x3x16xf32>, tensor<32xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x16x16x32xf32>
  return %r : tensor<1x16x16x32xf32>
}

func.func @convp(%x: tensor<1x8x8x16xf32>, %w: tensor<64x3x3x16xf32>, %bias: tensor<64xf32>) -> tensor<1x8x8x64xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %r = tosa.conv2d %x, %w, %bias, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x8x8x16xf32>, tensor<64x3x3x16xf32>, tensor<64xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x8x64xf32>
  return %r : tensor<1x8x8x64xf32>
}

func.func @mmp(%a: tensor<1x16x256xf32>, %b: tensor<1x256x64xf32>) -> tensor<1x16x64xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %r = tosa.matmul %a, %b, %zp, %zp : (tensor<1x16x256xf32>, tensor<1x256x64xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

func.func @mmtall(%a: tensor<1x2048x1024xf32>, %b: tensor<1x1024x64xf32>) -> tensor<1x2048x64xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %r = tosa.matmul %a, %b, %zp, %zp : (tensor<1x2048x1024xf32>, tensor<1x1024x64xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2048x64xf32>
  return %r : tensor<1x2048x64xf32>
}

func.func @mmk(%a: tensor<1x16x2048xf32>, %b: tensor<1x2048x64xf32>) -> tensor<1x16x64xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %r = tosa.matmul %a, %b, %zp, %zp : (tensor<1x16x2048xf32>, tensor<1x2048x64xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x16x64xf32>
  return %r : tensor<1x16x64xf32>
}

func.func @dw(%x: tensor<1x8x8x16xf32>, %w: tensor<3x3x16x1xf32>, %bias: tensor<16xf32>) -> tensor<1x8x8x16xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %r = tosa.depthwise_conv2d %x, %w, %bias, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x8x8x16xf32>, tensor<3x3x16x1xf32>, tensor<16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x8x16xf32>
  return %r : tensor<1x8x8x16xf32>
}
