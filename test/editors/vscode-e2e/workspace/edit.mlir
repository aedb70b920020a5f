// For the VS Code end-to-end test (e2e.js): fold @flat (its body is not
// indented, so only the server's folding ranges can fold it), Format
// Document, rename the sum (F2), complete `tosa.` to conv2d with signature
// help.

func.func @flat(%a: tensor<2xf32>) -> tensor<2xf32> {
%0 = tosa.abs %a : (tensor<2xf32>) -> tensor<2xf32>
return %0 : tensor<2xf32>
}

func.func @edit(%arg0: tensor<2x3xf32>, %arg1: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %sum = tosa.add %arg0, %arg1 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %mag = tosa.abs %sum : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %twice = tosa.add %mag, %sum : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %twice : tensor<2x3xf32>
}
