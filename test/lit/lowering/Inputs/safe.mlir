func.func @add_dyn(%a: tensor<?x3xf32>, %b: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %0 = tosa.add %a, %b : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}
func.func @against_static(%a: tensor<?x3xf32>, %b: tensor<4x3xf32>, %s: tensor<1xi8>) -> tensor<4x3xf32> {
  %0 = tosa.mul %a, %b, %s : (tensor<?x3xf32>, tensor<4x3xf32>, tensor<1xi8>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
func.func @to_static(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<5xf32> {
  %0 = tosa.sub %a, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}
func.func @static_only(%a: tensor<1x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = tosa.add %a, %b : (tensor<1x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
