// Windows whose padded size the stride does not divide (accepted before
// MLIR 22), with random-looking weights; numbers checked by stride_ref.py.
func.func @conv(%x: tensor<1x8x8x2xf32>) -> tensor<1x4x4x3xf32> {
  %w = "tosa.const"() {value = dense<[[[[1.0, -1.0], [0.5, 2.0], [1.0, 0.0]], [[0.0, 1.0], [-2.0, 1.0], [1.0, 1.0]], [[3.0, 0.0], [1.0, -1.0], [0.0, 2.0]]], [[[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]], [[0.0, 0.0], [1.0, 0.0], [0.0, 0.0]], [[-1.0, -1.0], [2.0, 2.0], [0.5, 0.5]]], [[[0.0, 2.0], [0.0, 0.0], [1.0, 0.0]], [[1.0, 0.0], [0.0, -3.0], [0.0, 1.0]], [[2.0, 1.0], [1.0, 2.0], [-1.0, 0.0]]]]> : tensor<3x3x3x2xf32>} : () -> tensor<3x3x3x2xf32>
  %b = "tosa.const"() {value = dense<[0.5, -1.0, 2.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %0 = "tosa.conv2d"(%x, %w, %b) {dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 2, 2>} : (tensor<1x8x8x2xf32>, tensor<3x3x3x2xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %0 : tensor<1x4x4x3xf32>
}

func.func @avg(%x: tensor<1x8x8x1xf32>) -> tensor<1x3x3x1xf32> {
  %0 = "tosa.avg_pool2d"(%x) {acc_type = f32, kernel = array<i64: 2, 2>, pad = array<i64: 1, 0, 0, 1>, stride = array<i64: 3, 3>} : (tensor<1x8x8x1xf32>) -> tensor<1x3x3x1xf32>
  return %0 : tensor<1x3x3x1xf32>
}

func.func @maxp(%x: tensor<1x8x8x1xf32>) -> tensor<1x4x3x1xf32> {
  %0 = tosa.max_pool2d %x {kernel = array<i64: 3, 3>, pad = array<i64: 0, 1, 0, 0>, stride = array<i64: 2, 2>} : (tensor<1x8x8x1xf32>) -> tensor<1x4x3x1xf32>
  return %0 : tensor<1x4x3x1xf32>
}
