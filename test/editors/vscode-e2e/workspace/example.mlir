// Example for the VS Code end-to-end test (e2e.js): a broadcasting add
// (hover), a result shape that MLIR rejects (Problems panel), and a dynamic
// result dimension that the operands pin down (inlay hint with the shape
// 5x7).

func.func @broadcast_add(%x: tensor<1x3xf32>, %y: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %sum = tosa.add %x, %y : (tensor<1x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %sum : tensor<2x3xf32>
}

func.func @wrong_result(%a: tensor<1x3xf32>) {
  %diff = tosa.sub %a, %a : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<4x3xf32>
  return
}

func.func @refinable(%p: tensor<5x1xf32>, %q: tensor<1x7xf32>) -> tensor<?x7xf32> {
  %prod = tosa.maximum %p, %q : (tensor<5x1xf32>, tensor<1x7xf32>) -> tensor<?x7xf32>
  return %prod : tensor<?x7xf32>
}
