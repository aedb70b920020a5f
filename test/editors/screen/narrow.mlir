// 80 columns (test/editors/screen): hints of long lines stay visible.
func.func @dyn(%a: tensor<?x3xf32>, %b: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %0 = tosa.add %a, %b : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

func.func @long(%p: tensor<5x1xf32>, %q: tensor<1x7xf32>) -> tensor<?x7xf32> {
  %sum = tosa.add %p, %q : (tensor<5x1xf32>, tensor<1x7xf32>) -> tensor<?x7xf32>
  return %sum : tensor<?x7xf32>
}

func.func @wrapped(%first: tensor<5x1xf32>, %second: tensor<1x7xf32>) -> tensor<?x7xf32> {
  %wrapped_result = tosa.minimum %first, %second : (tensor<5x1xf32>, tensor<1x7xf32>) -> tensor<?x7xf32>
  return %wrapped_result : tensor<?x7xf32>
}
