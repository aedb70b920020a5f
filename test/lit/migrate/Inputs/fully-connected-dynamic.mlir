func.func @fc(%x: tensor<?x3xf32>, %w: tensor<4x3xf32>, %b: tensor<4xf32>) -> tensor<?x4xf32> {
  %0 = "tosa.fully_connected"(%x, %w, %b) : (tensor<?x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}
