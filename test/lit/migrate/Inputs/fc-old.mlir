// tosa.fully_connected as converters wrote it before TOSA 1.0: custom syntax
// with #tosa.conv_quant (i8, input_zp -3), and generic with an old
// quantization_info dictionary (f32). Numbers checked by fc_ref.py.
func.func @fcq(%x: tensor<2x3xi8>) -> tensor<2x4xi32> {
  %w = "tosa.const"() {value = dense<[[1, 2, 3], [-1, 0, 1], [4, -5, 6], [0, 0, 7]]> : tensor<4x3xi8>} : () -> tensor<4x3xi8>
  %b = "tosa.const"() {value = dense<[10, 20, -30, 0]> : tensor<4xi32>} : () -> tensor<4xi32>
  %0 = tosa.fully_connected %x, %w, %b {quantization_info = #tosa.conv_quant<input_zp = -3, weight_zp = 0>} : (tensor<2x3xi8>, tensor<4x3xi8>, tensor<4xi32>) -> tensor<2x4xi32>
  return %0 : tensor<2x4xi32>
}

func.func @fcf(%x: tensor<2x3xf32>) -> tensor<2x4xf32> {
  %w = "tosa.const"() {value = dense<[[1.0, 2.0, 3.0], [-1.0, 0.5, 1.0], [4.0, -5.0, 6.0], [0.0, 0.0, 7.0]]> : tensor<4x3xf32>} : () -> tensor<4x3xf32>
  %b = "tosa.const"() {value = dense<[1.0, 2.0, -3.0, 0.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %0 = "tosa.fully_connected"(%x, %w, %b) {quantization_info = {input_zp = 0 : i32, weight_zp = 0 : i32}} : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// A dynamic batch (as TF/TFLite exports with an unknown batch size): the
// reshapes keep it dynamic with a -1.
func.func @fcd(%x: tensor<?x3xi8>) -> tensor<?x4xi32> {
  %w = "tosa.const"() {value = dense<[[1, 2, 3], [-1, 0, 1], [4, -5, 6], [0, 0, 7]]> : tensor<4x3xi8>} : () -> tensor<4x3xi8>
  %b = "tosa.const"() {value = dense<[10, 20, -30, 0]> : tensor<4xi32>} : () -> tensor<4xi32>
  %0 = tosa.fully_connected %x, %w, %b {quantization_info = #tosa.conv_quant<input_zp = -3, weight_zp = 0>} : (tensor<?x3xi8>, tensor<4x3xi8>, tensor<4xi32>) -> tensor<?x4xi32>
  return %0 : tensor<?x4xi32>
}
