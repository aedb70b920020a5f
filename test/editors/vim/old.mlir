// Pre-MLIR-22 TOSA for the review tests (test/editors/vim/review.vim,
// nvim-plugin): MLIR 22 rejects the first two functions' ops ("Migrate this
// file to MLIR 22 TOSA" rewrites them); @refinable has result shapes that
// "Refine all shapes in @refinable" makes static.
func.func @relu6(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tosa.clamp %x {min_fp = 0.0 : f32, max_fp = 6.0 : f32, min_int = 0 : i64, max_int = 6 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

func.func @mul_shift(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %0 = tosa.mul %a, %b {shift = 1 : i8} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

func.func @refinable(%p: tensor<5x1xf32>, %q: tensor<1x7xf32>) -> tensor<?x?xf32> {
  %0 = tosa.maximum %p, %q : (tensor<5x1xf32>, tensor<1x7xf32>) -> tensor<?x7xf32>
  %1 = tosa.exp %0 : (tensor<?x7xf32>) -> tensor<?x?xf32>
  return %1 : tensor<?x?xf32>
}
