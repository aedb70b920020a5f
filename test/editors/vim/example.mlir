// Example for the headless Vim 9 and Neovim plugin tests (test/editors/vim, nvim-plugin).
// Three functions: a valid broadcast, a result dimension that MLIR
// rejects, and a dynamic result dimension that the operands pin down.

func.func @valid_broadcast(%x: tensor<1x3xf32>, %y: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %sum = tosa.add %x, %y : (tensor<1x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %sum : tensor<2x3xf32>
}

// The result of %diff is not returned, so fixing its type alone verifies.
func.func @wrong_result_dim(%a: tensor<1x3xf32>) {
  %diff = tosa.sub %a, %a : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<4x3xf32>
  return
}

func.func @refinable(%p: tensor<5x1xf32>, %q: tensor<1x7xf32>) -> tensor<?x7xf32> {
  %prod = tosa.maximum %p, %q : (tensor<5x1xf32>, tensor<1x7xf32>) -> tensor<?x7xf32>
  return %prod : tensor<?x7xf32>
}
