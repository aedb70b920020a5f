// Input of c-harness.test: called from C through the generated header.
// Static broadcast: a 1x3 row added to every row of a 2x3 matrix.
func.func @add(%a: tensor<1x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tosa.add %a, %b : (tensor<1x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// Dynamic rows: either operand may have 1 row at runtime (broadcast) or
// both the same number of rows.
func.func @add_dyn(%a: tensor<?x3xf32>, %b: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %0 = tosa.add %a, %b : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}
