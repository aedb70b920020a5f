func.func @f(%a: tensor<2xi32>) {
  tosa.variable 1 = dense<-1> : tensor<2xi32>
  return
}
