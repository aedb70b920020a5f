// Pre-MLIR-22 TOSA as converters wrote it: MLIR 22 cannot parse the custom
// tosa.fully_connected (removed in TOSA 1.0), so it reports one error and
// nothing after it is analysed.
func.func @model(%x: tensor<1x2xf32>, %w: tensor<3x2xf32>, %b: tensor<3xf32>, %m: tensor<1x3xf32>) -> tensor<?x3xf32> {
  %0 = tosa.fully_connected %x, %w, %b : (tensor<1x2xf32>, tensor<3x2xf32>, tensor<3xf32>) -> tensor<1x3xf32>
  %1 = tosa.mul %0, %m {shift = 0 : i8} : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<1x3xf32>
  %2 = tosa.reshape %1 {new_shape = array<i64: 3, 1>} : (tensor<1x3xf32>) -> tensor<3x1xf32>
  %3 = tosa.reshape %2 {new_shape = array<i64: 1, 3>} : (tensor<3x1xf32>) -> tensor<?x3xf32>
  %4 = tosa.add %3, %m : (tensor<?x3xf32>, tensor<1x3xf32>) -> tensor<?x3xf32>
  return %4 : tensor<?x3xf32>
}
