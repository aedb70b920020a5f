// A model-like chain exported with dynamic intermediate shapes: conv2d,
// relu (clamp), reshape, matmul, transpose and a softmax over the last axis.
// Every `?` is refinable from the static arguments. (The reductions keep
// their size-1 axis static: upstream tosa-to-linalg cannot lower a reduction
// whose result is all `?`.)
func.func @model(%x: tensor<1x8x8x4xf32>, %w: tensor<8x3x3x4xf32>, %b: tensor<8xf32>, %w2: tensor<1x8x5xf32>) -> tensor<?x?x?xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  // Convolution and activation.
  %0 = tosa.conv2d %x, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x8x8x4xf32>, tensor<8x3x3x4xf32>, tensor<8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x?x?x8xf32>
  %1 = tosa.clamp %0 {max_val = 3.4028235e+38 : f32, min_val = 0.0 : f32} : (tensor<1x?x?x8xf32>) -> tensor<1x?x?x8xf32>
  %s = tosa.const_shape {values = dense<[1, 64, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %2 = tosa.reshape %1, %s : (tensor<1x?x?x8xf32>, !tosa.shape<3>) -> tensor<1x64x8xf32>
  %3 = tosa.matmul %2, %w2, %zp, %zp : (tensor<1x64x8xf32>, tensor<1x8x5xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<?x?x?xf32>
  %4 = tosa.transpose %3 {perms = array<i32: 0, 2, 1>} : (tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  // Softmax over the last axis.
  %5 = tosa.reduce_max %4 {axis = 2 : i32} : (tensor<?x?x?xf32>) -> tensor<?x?x1xf32>
  %6 = tosa.sub %4, %5 : (tensor<?x?x?xf32>, tensor<?x?x1xf32>) -> tensor<?x?x?xf32>
  %7 = tosa.exp %6 : (tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %8 = tosa.reduce_sum %7 {axis = 2 : i32} : (tensor<?x?x?xf32>) -> tensor<?x?x1xf32>
  %9 = tosa.reciprocal %8 : (tensor<?x?x1xf32>) -> tensor<?x?x1xf32>
  %10 = tosa.mul %7, %9, %shift : (tensor<?x?x?xf32>, tensor<?x?x1xf32>, tensor<1xi8>) -> tensor<?x?x?xf32>
  return %10 : tensor<?x?x?xf32>
}
