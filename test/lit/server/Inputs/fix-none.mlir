// The wrong result type is returned, and a caller relies on it: changing it
// would break the call, so no quick fix is offered.
func.func @callee(%a: tensor<1x3xf32>) -> tensor<4x3xf32> {
  %0 = tosa.abs %a : (tensor<1x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
func.func @caller(%a: tensor<1x3xf32>) -> tensor<4x3xf32> {
  %0 = func.call @callee(%a) : (tensor<1x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
