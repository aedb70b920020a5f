// Quantized tosa.pad as converters wrote it before TOSA 1.0: without a
// pad_const operand the old op padded with the input zero point of its
// quantization info (the stored value meaning 0); with one, with that value.
// Numbers checked by pad_ref.py.
func.func @padq(%x: tensor<2x3xi8>) -> tensor<3x5xi8> {
  %p = "tosa.const"() {value = dense<[[1, 0], [0, 2]]> : tensor<2x2xi32>} : () -> tensor<2x2xi32>
  %0 = tosa.pad %x, %p {quantization_info = #tosa.pad_quant<input_zp = 42>} : (tensor<2x3xi8>, tensor<2x2xi32>) -> tensor<3x5xi8>
  return %0 : tensor<3x5xi8>
}

func.func @padd(%x: tensor<2x3xi8>) -> tensor<4x4xi8> {
  %p = "tosa.const"() {value = dense<[[0, 2], [1, 0]]> : tensor<2x2xi64>} : () -> tensor<2x2xi64>
  %0 = "tosa.pad"(%x, %p) {quantization_info = {input_zp = -5 : i32}} : (tensor<2x3xi8>, tensor<2x2xi64>) -> tensor<4x4xi8>
  return %0 : tensor<4x4xi8>
}

func.func @padc(%x: tensor<2x3xi8>) -> tensor<2x5xi8> {
  %p = "tosa.const"() {value = dense<[[0, 0], [1, 1]]> : tensor<2x2xi32>} : () -> tensor<2x2xi32>
  %c = "tosa.const"() {value = dense<7> : tensor<i8>} : () -> tensor<i8>
  %0 = "tosa.pad"(%x, %p, %c) {quantization_info = {input_zp = -5 : i32}} : (tensor<2x3xi8>, tensor<2x2xi32>, tensor<i8>) -> tensor<2x5xi8>
  return %0 : tensor<2x5xi8>
}
