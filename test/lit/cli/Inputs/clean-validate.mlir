// Input of cli/validate*.test: valid for pro_int, pro_fp, bf16 and
// controlflow at level none.
func.func @f(%x: tensor<?x4xf32>, %y: tensor<2xi32>, %z: tensor<2xbf16>) -> (tensor<?x4xf32>, tensor<2xi32>, tensor<2xbf16>) {
  %0 = tosa.abs %x : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %1 = tosa.abs %y : (tensor<2xi32>) -> tensor<2xi32>
  %2 = tosa.abs %z : (tensor<2xbf16>) -> tensor<2xbf16>
  return %0, %1, %2 : tensor<?x4xf32>, tensor<2xi32>, tensor<2xbf16>
}
