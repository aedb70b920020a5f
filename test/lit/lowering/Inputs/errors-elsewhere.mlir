func.func @good(%a: tensor<1x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = call @helper(%a, %b) : (tensor<1x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func private @helper(%a: tensor<1x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tosa.add %a, %b : (tensor<1x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @bad(%a: tensor<1x3xf32>) -> tensor<4x3xf32> {
  %0 = tosa.abs %a : (tensor<1x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
