// Result types shape inference can make static, for the VS Code end-to-end
// test (e2e.js): "Refine all shapes in @transpose_negate" writes them.
func.func @transpose_negate(%a: tensor<2x3xf32>) -> tensor<?x?xf32> {
  %z = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %t = tosa.transpose %a {perms = array<i32: 1, 0>} : (tensor<2x3xf32>) -> tensor<?x?xf32>
  %n = tosa.negate %t, %z, %z : (tensor<?x?xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<?x?xf32>
  return %n : tensor<?x?xf32>
}
