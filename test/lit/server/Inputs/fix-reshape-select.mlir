// Two lower-rank operands of one op are reshaped by one fix.
func.func @select(%p: tensor<4xi1>, %a: tensor<3x4xf32>, %b: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = tosa.select %p, %a, %b : (tensor<4xi1>, tensor<3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}
