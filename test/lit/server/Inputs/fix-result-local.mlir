// A wrong static result dim whose value feeds another op.
func.func @local(%a: tensor<2x3xf32>, %b: tensor<1x3xf32>) -> tensor<2x3xf32> {
  %0 = "tfl.mul"(%a, %b) : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<5x3xf32>
  %1 = "test.consume"(%0) : (tensor<5x3xf32>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}
