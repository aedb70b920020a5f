func.func @a() -> tensor<2xi32> {
  tosa.variable @v = dense<1> : tensor<2xi32>
  %0 = tosa.variable.read @v : tensor<2xi32>
  return %0 : tensor<2xi32>
}

func.func @b() -> tensor<3xi32> {
  tosa.variable @v = dense<1> : tensor<3xi32>
  %0 = tosa.variable.read @v : tensor<3xi32>
  return %0 : tensor<3xi32>
}
