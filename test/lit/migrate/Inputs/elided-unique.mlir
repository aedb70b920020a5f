func.func @t(%arg0: tensor<4x2x3xf32>) -> tensor<2x3x4xf32> {
  %0 = "tosa.const"() {value = dense_resource<__elided__> : tensor<3xi32>} : () -> tensor<3xi32>
  %1 = "tosa.transpose"(%arg0, %0) : (tensor<4x2x3xf32>, tensor<3xi32>) -> tensor<2x3x4xf32>
  return %1 : tensor<2x3x4xf32>
}
