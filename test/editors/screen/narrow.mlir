// 80 columns (test/editors/screen): hints of ~80-column lines stay visible.
func.func @dyn(%a: tensor<?x3xf32>, %b: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %0 = tosa.add %a, %b : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

func.func @long(%arg0: tensor<5x1xf32>, %arg1: tensor<1x7xf32>) -> tensor<?x7xf32> {
  %prod = tosa.maximum %arg0, %arg1 : (tensor<5x1xf32>, tensor<1x7xf32>) -> tensor<?x7xf32>
  return %prod : tensor<?x7xf32>
}
