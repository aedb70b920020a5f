// MLIR 22 requires (in - 1 + pad_before + pad_after - dilation*(k-1)) % stride
// == 0 for conv2d, depthwise_conv2d, conv3d, avg_pool2d and max_pool2d; older
// TOSA did not. The migration lowers the trailing pad by the remainder, and
// slices the input's end where that pad is smaller; the error says so and
// offers it as a quick fix.
// RUN: not %tosa-lsp check %s | FileCheck %s --check-prefix=OLD
// RUN: %tosa-lsp fix %s | FileCheck %s --check-prefix=FIX
// RUN: %tosa-lsp fix --migrate %s > %t.mlir
// RUN: %mlir-opt %t.mlir -o /dev/null
// RUN: %tosa-lsp check %t.mlir
// RUN: grep -v "^ *//" %t.mlir | FileCheck %s --check-prefix=NEW

func.func @s(%x: tensor<1x8x8x4xf32>, %w: tensor<3x3x3x4xf32>, %dw: tensor<3x3x4x1xf32>, %b: tensor<3xf32>, %db: tensor<4xf32>, %x3: tensor<1x7x8x8x4xf32>, %w3: tensor<3x3x3x3x4xf32>) -> (tensor<1x4x4x3xf32>, tensor<1x4x4x4xf32>, tensor<1x3x4x4x3xf32>, tensor<1x4x3x4xf32>, tensor<1x3x3x4xf32>) {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %0 = tosa.conv2d %x, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 2, 2>} : (tensor<1x8x8x4xf32>, tensor<3x3x3x4xf32>, tensor<3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4x3xf32>
  %1 = tosa.depthwise_conv2d %x, %dw, %db, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 1, 1, 1>, stride = array<i64: 2, 2>} : (tensor<1x8x8x4xf32>, tensor<3x3x4x1xf32>, tensor<4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4x4xf32>
  %2 = tosa.conv3d %x3, %w3, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1, 1>, pad = array<i64: 0, 1, 1, 0, 1, 1>, stride = array<i64: 2, 2, 2>} : (tensor<1x7x8x8x4xf32>, tensor<3x3x3x3x4xf32>, tensor<3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x3x4x4x3xf32>
  %3 = tosa.max_pool2d %x {kernel = array<i64: 3, 3>, pad = array<i64: 0, 1, 0, 0>, stride = array<i64: 2, 2>} : (tensor<1x8x8x4xf32>) -> tensor<1x4x3x4xf32>
  %4 = tosa.avg_pool2d %x, %zp, %zp {acc_type = f32, kernel = array<i64: 2, 2>, pad = array<i64: 1, 0, 0, 1>, stride = array<i64: 3, 3>} : (tensor<1x8x8x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x3x3x4xf32>
  return %0, %1, %2, %3, %4 : tensor<1x4x4x3xf32>, tensor<1x4x4x4xf32>, tensor<1x3x4x4x3xf32>, tensor<1x4x3x4xf32>, tensor<1x3x3x4xf32>
}

// OLD: stride.mlir:15:8: error: 'tosa.conv2d' op expected input_height - 1 + pad_top + pad_bottom - (kernel_height - 1) * dilation_y to be wholly divisible by stride_y
// OLD: note: TOSA before MLIR 22 allowed a padded size the stride does not divide: lower the trailing pad
// FIX: Migrate tosa.conv2d to MLIR 22: padded size made divisible by the stride (pad_bottom -1, pad_right -1; the rows dropped are past the last window)
// NEW: tosa.conv2d %x, %w, %b, %zp, %zp {{.*}}pad = array<i64: 1, 0, 1, 0>, stride = array<i64: 2, 2>}
// NEW: tosa.depthwise_conv2d %x, %dw, %db, %zp, %zp {{.*}}pad = array<i64: 0, 1, 1, 0>
// NEW: tosa.conv3d %x3, %w3, %b, %zp, %zp {{.*}}pad = array<i64: 0, 0, 1, 0, 1, 0>
// NEW: %v22{{_}}sliced_[[N:[0-9]+]] = tosa.slice %x, %{{.*}}, %{{.*}} : (tensor<1x8x8x4xf32>, !tosa.shape<4>, !tosa.shape<4>) -> tensor<1x8x7x4xf32>
// NEW: tosa.max_pool2d %v22{{_}}sliced_[[N]] {{.*}}pad = array<i64: 0, 1, 0, 0>{{.*}} : (tensor<1x8x7x4xf32>) -> tensor<1x4x3x4xf32>
// NEW: %v22{{_}}sliced_[[M:[0-9]+]] = tosa.slice %x, {{.*}} -> tensor<1x7x8x4xf32>
// NEW: tosa.avg_pool2d %v22{{_}}sliced_[[M]], %zp, %zp {{.*}}pad = array<i64: 1, 0, 0, 0>
