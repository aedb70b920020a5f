// TOSA needs equal ranks: reshape the lower-rank operand with leading 1s.
func.func @ranks(%a: tensor<3x4xf32>, %b: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = tosa.add %a, %b : (tensor<3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}
