// Pre-MLIR-22 TOSA whose values the old semantics define; numeric.test
// migrates it and runs each function.
func.func @mul_shift(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %0 = tosa.mul %a, %b {shift = 1 : i8} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}
func.func @chain(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %c = "tosa.const"() {value = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %p = "tosa.const"() <{value = dense<[1, 0]> : tensor<2xi32>}> : () -> tensor<2xi32>
  %s = tosa.add %x, %c : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %r = tosa.reshape %s {new_shape = array<i64: 3, -1>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %t = tosa.transpose %r, %p : (tensor<3x2xf32>, tensor<2xi32>) -> tensor<2x3xf32>
  return %t : tensor<2x3xf32>
}
func.func @relu6(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tosa.clamp %x {min_fp = 0.0 : f32, max_fp = 6.0 : f32, min_int = 0 : i64, max_int = 6 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @half(%x: tensor<4xi32>) -> tensor<4xi8> {
  %0 = "tosa.rescale"(%x) {double_round = false, input_zp = 0 : i32, multiplier = array<i32: 1073741824>, output_zp = 0 : i32, per_channel = false, scale32 = true, shift = array<i8: 31>} : (tensor<4xi32>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}
func.func @fc(%x: tensor<1x2xf32>, %w: tensor<3x2xf32>, %b: tensor<3xf32>) -> tensor<1x3xf32> {
  %0 = "tosa.fully_connected"(%x, %w, %b) : (tensor<1x2xf32>, tensor<3x2xf32>, tensor<3xf32>) -> tensor<1x3xf32>
  return %0 : tensor<1x3xf32>
}
