// For the VS Code end-to-end test (e2e.js): TOSA: Show Graph on @model; the
// tosa.sub's result type is wrong (its node is red), %dyn's declared ?x3 is
// 2x3 inferred (amber; the test edits it to 2x3). @clean: the toggle to the
// graph after linalg lowering.

func.func @model(%x: tensor<1x3xf32>, %y: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %sum = tosa.add %x, %y : (tensor<1x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %mag = tosa.abs %sum : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %dyn = tosa.exp %mag : (tensor<2x3xf32>) -> tensor<?x3xf32>
  %bad = tosa.sub %mag, %x : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<4x3xf32>
  return %mag : tensor<2x3xf32>
}

func.func @clean(%p: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %e = tosa.exp %p : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %t = tosa.tanh %e : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %t : tensor<2x3xf32>
}
