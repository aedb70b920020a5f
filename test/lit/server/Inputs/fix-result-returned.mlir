// A wrong static result dim on a value that is returned: the fix updates
// the op, the `return` and the function signature.
func.func @wrong(%a: tensor<1x3xf32>, %b: tensor<1x3xf32>) -> (tensor<4x3xf32>, tensor<1x3xf32>) {
  %0 = tosa.add %a, %b : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<4x3xf32>
  return %0, %a : tensor<4x3xf32>, tensor<1x3xf32>
}
