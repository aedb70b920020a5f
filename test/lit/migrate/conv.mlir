// Convolutions without zero-point operands (MLIR 22: input_zp and
// weight_zp operands, acc_type required; transpose_conv2d lost out_shape).
// RUN: not %tosa-lsp check %s | FileCheck %s --check-prefix=OLD
// RUN: %tosa-lsp fix %s | FileCheck %s --check-prefix=FIX
// RUN: %tosa-lsp fix --migrate %s > %t.mlir
// RUN: %mlir-opt --split-input-file %t.mlir -o /dev/null
// RUN: %tosa-lsp check %t.mlir
// RUN: grep -v "^ *//" %t.mlir | FileCheck %s --check-prefix=NEW

func.func @conv2d(%a: tensor<1x4x4x1xi8>, %w: tensor<2x1x1x1xi8>, %b: tensor<2xi32>) -> tensor<1x4x4x2xi32> {
  %0 = tosa.conv2d %a, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = -128 : i32, weight_zp = 0 : i32} : (tensor<1x4x4x1xi8>, tensor<2x1x1x1xi8>, tensor<2xi32>) -> tensor<1x4x4x2xi32>
  return %0 : tensor<1x4x4x2xi32>
}

// -----
func.func @depthwise(%a: tensor<1x4x4x2xf32>, %w: tensor<1x1x2x3xf32>, %b: tensor<6xf32>) -> tensor<1x4x4x6xf32> {
  %0 = "tosa.depthwise_conv2d"(%a, %w, %b) {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>, tensor<6xf32>) -> tensor<1x4x4x6xf32>
  return %0 : tensor<1x4x4x6xf32>
}

// -----
func.func @conv3d(%a: tensor<1x2x4x4x1xf16>, %w: tensor<2x1x1x1x1xf16>, %b: tensor<2xf16>) -> tensor<1x2x4x4x2xf16> {
  %0 = tosa.conv3d %a, %w, %b {pad = array<i64: 0, 0, 0, 0, 0, 0>, stride = array<i64: 1, 1, 1>, dilation = array<i64: 1, 1, 1>} : (tensor<1x2x4x4x1xf16>, tensor<2x1x1x1x1xf16>, tensor<2xf16>) -> tensor<1x2x4x4x2xf16>
  return %0 : tensor<1x2x4x4x2xf16>
}

// -----
func.func @transpose_conv2d(%a: tensor<1x4x4x1xf32>, %w: tensor<2x1x1x1xf32>, %b: tensor<2xf32>) -> tensor<1x4x4x2xf32> {
  %0 = tosa.transpose_conv2d %a, %w, %b {out_pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, out_shape = array<i64: 1, 4, 4, 2>} : (tensor<1x4x4x1xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  return %0 : tensor<1x4x4x2xf32>
}

// OLD: {{.*}}conv.mlir:11:8: error: 'tosa.conv2d' op expected 5 operands, but found 3
// OLD: {{.*}}conv.mlir:17:8: error: 'tosa.depthwise_conv2d' op expected 5 operands, but found 3
// OLD: {{.*}}conv.mlir:23:8: error: 'tosa.conv3d' op expected 5 operands, but found 3
// OLD: {{.*}}conv.mlir:29:8: error: 'tosa.transpose_conv2d' op expected 5 operands, but found 3
// FIX: 0: {{.*}}conv.mlir:11:8: Migrate this file to MLIR 22 TOSA (4 ops) [verifier-error]
// FIX: 1: {{.*}}conv.mlir:11:8: Migrate tosa.conv2d to MLIR 22: zero points as operands [verifier-error]
// FIX: 2: {{.*}}conv.mlir:17:8: Migrate tosa.depthwise_conv2d to MLIR 22: zero points as operands [verifier-error]
// FIX: 3: {{.*}}conv.mlir:23:8: Migrate tosa.conv3d to MLIR 22: zero points as operands [verifier-error]
// FIX: 4: {{.*}}conv.mlir:29:8: Migrate tosa.transpose_conv2d to MLIR 22: zero points as operands [verifier-error]
// NEW: %v22{{_}}input_zp_0 = "tosa.const"() <{values = dense<-128> : tensor<1xi8>}> : () -> tensor<1xi8>
// NEW: %v22{{_}}weight_zp_1 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
// NEW: %0 = tosa.conv2d %a, %w, %b, %v22{{_}}input_zp_0, %v22{{_}}weight_zp_1 {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x1xi8>, tensor<2x1x1x1xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x2xi32>
// NEW: %v22{{_}}input_zp_0 = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}> : () -> tensor<1xf32>
// NEW: %v22{{_}}weight_zp_1 = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}> : () -> tensor<1xf32>
// NEW: %0 = "tosa.depthwise_conv2d"(%a, %w, %b, %v22{{_}}input_zp_0, %v22{{_}}weight_zp_1) {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>, tensor<6xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4x6xf32>
// NEW: %v22{{_}}input_zp_0 = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf16>}> : () -> tensor<1xf16>
// NEW: %v22{{_}}weight_zp_1 = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf16>}> : () -> tensor<1xf16>
// NEW: %0 = tosa.conv3d %a, %w, %b, %v22{{_}}input_zp_0, %v22{{_}}weight_zp_1 {acc_type = f16, dilation = array<i64: 1, 1, 1>, pad = array<i64: 0, 0, 0, 0, 0, 0>, stride = array<i64: 1, 1, 1>} : (tensor<1x2x4x4x1xf16>, tensor<2x1x1x1x1xf16>, tensor<2xf16>, tensor<1xf16>, tensor<1xf16>) -> tensor<1x2x4x4x2xf16>
// NEW: %v22{{_}}input_zp_0 = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}> : () -> tensor<1xf32>
// NEW: %v22{{_}}weight_zp_1 = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}> : () -> tensor<1xf32>
// NEW: %0 = tosa.transpose_conv2d %a, %w, %b, %v22{{_}}input_zp_0, %v22{{_}}weight_zp_1 {acc_type = f32, out_pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x1xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4x2xf32>
