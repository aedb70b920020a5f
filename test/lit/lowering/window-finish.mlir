// An average pool is a sum of taps and a divide by the count of taps in
// bounds. With padding, the sum is computed in pieces (interior, border
// rows and columns, corner: WindowOps.cpp) put into one result; the divide
// is applied in each piece at its place in the output, not as a second
// pass that reads the whole result again (1.85x the memory floor for
// 3x3 stride 2 of 1x256x256x256; 1.28x in one pass). Values:
// kernel_numeric.py (avgpool3x3_pad, avgpool3x3_s2_pad).
// (Windows are unrolled only where the kernels run: a host with FMA vectors;
// elsewhere the pool keeps MLIR's loops and its own divide pass.)
// REQUIRES: fma-vectors
// RUN: %tosa-lsp lower %s --stage=loops | FileCheck %s

func.func @avg(%x: tensor<1x10x12x16xf32>) -> tensor<1x5x6x16xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %r = tosa.avg_pool2d %x, %zp, %zp {acc_type = f32, kernel = array<i64: 3, 3>, pad = array<i64: 0, 1, 0, 1>, stride = array<i64: 2, 2>} : (tensor<1x10x12x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x5x6x16xf32>
  return %r : tensor<1x5x6x16xf32>
}

// CHECK-LABEL: func.func @avg(
// CHECK:         %[[OUT:alloc[_0-9]*]] = memref.alloc()
// CHECK-COUNT-4: arith.divf
// CHECK-NOT:     arith.divf
// CHECK-NOT:     memref.load %[[OUT]]
// CHECK:         return %[[OUT]]
