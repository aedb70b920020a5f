// Ops fed by an op that failed verification are not verified: upstream
// stops before them, and their verifiers read what the failed producer lacks
// (here the pre-MLIR-22 `value =` spelling leaves tosa.const/const_shape
// without `values`). Each section crashed `check` (SIGSEGV) before; now each
// reports exactly the producers' errors, like mlir-opt-22, and no crash.
// RUN: not %tosa-lsp check %s 2>&1 | FileCheck %s
// RUN: not %mlir-opt --split-input-file %s 2>&1 | FileCheck %s --check-prefix=UPSTREAM
// explain and fix analyse the same way: they must answer, not crash.
// RUN: sh -c '%tosa-lsp explain %s > /dev/null 2>&1; test $? -lt 128'
// RUN: sh -c '%tosa-lsp fix --candidates %s > /dev/null 2>&1; test $? -lt 128'
// CHECK-NOT: crashed
func.func @reshape(%a: tensor<1x4xi8>) -> tensor<2x2xi8> {
  %s = tosa.const_shape {value = dense<[2, 2]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %0 = tosa.reshape %a, %s : (tensor<1x4xi8>, !tosa.shape<2>) -> tensor<2x2xi8>
  return %0 : tensor<2x2xi8>
}
// -----

func.func @tile(%a: tensor<2x2xi8>) -> tensor<4x4xi8> {
  %m = tosa.const_shape {value = dense<[2, 2]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %0 = tosa.tile %a, %m : (tensor<2x2xi8>, !tosa.shape<2>) -> tensor<4x4xi8>
  return %0 : tensor<4x4xi8>
}
// -----

func.func @resize(%a: tensor<1x2x2x1xf32>) -> tensor<1x4x4x1xf32> {
  %scale = tosa.const_shape {value = dense<[4, 2, 4, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %offset = tosa.const_shape {value = dense<0> : tensor<2xindex>} : () -> !tosa.shape<2>
  %border = tosa.const_shape {value = dense<2> : tensor<2xindex>} : () -> !tosa.shape<2>
  %0 = tosa.resize %a, %scale, %offset, %border {mode = NEAREST_NEIGHBOR} : (tensor<1x2x2x1xf32>, !tosa.shape<4>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<1x4x4x1xf32>
  return %0 : tensor<1x4x4x1xf32>
}
// -----

func.func @conv(%in: tensor<1x4x4x1xi8>, %w: tensor<1x1x1x1xi8>, %b: tensor<1xi32>) -> tensor<1x4x4x1xi32> {
  %izp = "tosa.const"() {value = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %wzp = "tosa.const"() {value = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %0 = tosa.conv2d %in, %w, %b, %izp, %wzp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x1xi8>, tensor<1x1x1x1xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x1xi32>
  return %0 : tensor<1x4x4x1xi32>
}
// -----

func.func @dwconv(%in: tensor<1x4x4x2xi8>, %w: tensor<1x1x2x1xi8>, %b: tensor<2xi32>) -> tensor<1x4x4x2xi32> {
  %izp = "tosa.const"() {value = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %wzp = "tosa.const"() {value = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %0 = tosa.depthwise_conv2d %in, %w, %b, %izp, %wzp {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x2xi8>, tensor<1x1x2x1xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x2xi32>
  return %0 : tensor<1x4x4x2xi32>
}
// -----

func.func @negate(%a: tensor<2xi8>) -> tensor<2xi8> {
  %z = "tosa.const"() {value = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %0 = tosa.negate %a, %z, %z : (tensor<2xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<2xi8>
  return %0 : tensor<2xi8>
}
// -----

func.func @matmul(%a: tensor<1x2x3xi8>, %b: tensor<1x3x4xi8>) -> tensor<1x2x4xi32> {
  %z = "tosa.const"() {value = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %0 = tosa.matmul %a, %b, %z, %z : (tensor<1x2x3xi8>, tensor<1x3x4xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x2x4xi32>
  return %0 : tensor<1x2x4xi32>
}
// -----

func.func @rescale(%a: tensor<2xi8>) -> tensor<2xi8> {
  %m = "tosa.const"() {value = dense<1073741824> : tensor<1xi32>} : () -> tensor<1xi32>
  %s = "tosa.const"() {value = dense<30> : tensor<1xi8>} : () -> tensor<1xi8>
  %z = "tosa.const"() {value = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %0 = tosa.rescale %a, %m, %s, %z, %z {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<2xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<2xi8>
  return %0 : tensor<2xi8>
}
// -----

func.func @avgpool(%a: tensor<1x4x4x1xi8>) -> tensor<1x2x2x1xi8> {
  %z = "tosa.const"() {value = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %0 = tosa.avg_pool2d %a, %z, %z {acc_type = i32, kernel = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>} : (tensor<1x4x4x1xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x2x2x1xi8>
  return %0 : tensor<1x2x2x1xi8>
}


// Every failed producer is reported, and nothing else (no consumer, no crash).
// CHECK: failed-producers.mlir:13:8: error: 'tosa.const_shape' op requires attribute 'values'
// CHECK: failed-producers.mlir:20:8: error: 'tosa.const_shape' op requires attribute 'values'
// CHECK: failed-producers.mlir:27:12: error: 'tosa.const_shape' op requires attribute 'values'
// CHECK: failed-producers.mlir:28:13: error: 'tosa.const_shape' op requires attribute 'values'
// CHECK: failed-producers.mlir:29:13: error: 'tosa.const_shape' op requires attribute 'values'
// CHECK: failed-producers.mlir:36:10: error: 'tosa.const' op requires attribute 'values'
// CHECK: failed-producers.mlir:37:10: error: 'tosa.const' op requires attribute 'values'
// CHECK: failed-producers.mlir:44:10: error: 'tosa.const' op requires attribute 'values'
// CHECK: failed-producers.mlir:45:10: error: 'tosa.const' op requires attribute 'values'
// CHECK: failed-producers.mlir:52:8: error: 'tosa.const' op requires attribute 'values'
// CHECK: failed-producers.mlir:59:8: error: 'tosa.const' op requires attribute 'values'
// CHECK: failed-producers.mlir:66:8: error: 'tosa.const' op requires attribute 'values'
// CHECK: failed-producers.mlir:67:8: error: 'tosa.const' op requires attribute 'values'
// CHECK: failed-producers.mlir:68:8: error: 'tosa.const' op requires attribute 'values'
// CHECK: failed-producers.mlir:75:8: error: 'tosa.const' op requires attribute 'values'
// CHECK-NOT: error:

// mlir-opt-22 stops at the first error of each function; we report the same.
// UPSTREAM: failed-producers.mlir:13:8: error: 'tosa.const_shape' op requires attribute 'values'
// UPSTREAM: failed-producers.mlir:20:8: error: 'tosa.const_shape' op requires attribute 'values'
// UPSTREAM: failed-producers.mlir:27:12: error: 'tosa.const_shape' op requires attribute 'values'
// UPSTREAM: failed-producers.mlir:36:10: error: 'tosa.const' op requires attribute 'values'
// UPSTREAM: failed-producers.mlir:44:10: error: 'tosa.const' op requires attribute 'values'
// UPSTREAM: failed-producers.mlir:52:8: error: 'tosa.const' op requires attribute 'values'
// UPSTREAM: failed-producers.mlir:59:8: error: 'tosa.const' op requires attribute 'values'
// UPSTREAM: failed-producers.mlir:66:8: error: 'tosa.const' op requires attribute 'values'
// UPSTREAM: failed-producers.mlir:75:8: error: 'tosa.const' op requires attribute 'values'
