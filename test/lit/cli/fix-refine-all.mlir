// `fix --refine-all`: every `?` the shape inference refines is written into
// the result types and into the operand types of the users that take the
// refined value; users that keep the declared type (func.return) get a
// tensor.cast, as tosa-infer-shapes inserts one. SSA names, attributes,
// comments and layout stay. The output verifies with mlir-opt-22, and is a
// fixed point.
// RUN: %tosa-lsp fix --refine-all %s | FileCheck %s
// RUN: %tosa-lsp fix --refine-all %s | %mlir-opt --split-input-file -o /dev/null
// RUN: %tosa-lsp fix --refine-all %s > %t.mlir && %tosa-lsp fix --refine-all %t.mlir | diff %t.mlir -
// RUN: %tosa-lsp fix --refine-all --function=second %s | FileCheck %s --check-prefix=ONLY
// RUN: not %tosa-lsp fix --refine-all --function=nope %s 2>&1 | FileCheck %s --check-prefix=NOFN

func.func @first(%in: tensor<1x32x32x8xf32>, %w: tensor<16x3x3x8xf32>, %b: tensor<16xf32>) -> tensor<1x?x?x16xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  // The producer.
  %conv = tosa.conv2d %in, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>}
      : (tensor<1x32x32x8xf32>, tensor<16x3x3x8xf32>, tensor<16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x?x?x16xf32>
  %relu = tosa.clamp %conv {max_val = 6.0 : f32, min_val = 0.0 : f32} : (tensor<1x?x?x16xf32>) -> tensor<1x?x?x16xf32>
  return %relu : tensor<1x?x?x16xf32>
}

func.func @second(%a: tensor<2x3xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %z = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %t = tosa.transpose %a {perms = array<i32: 1, 0>} : (tensor<2x3xf32>) -> tensor<?x?xf32>
  %n = tosa.negate %t, %z, %z : (tensor<?x?xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<?x?xf32>
  return %t, %n : tensor<?x?xf32>, tensor<?x?xf32>
}

// CHECK:      // The producer.
// CHECK-NEXT: %conv = tosa.conv2d %in, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>}
// CHECK-NEXT:     : (tensor<1x32x32x8xf32>, tensor<16x3x3x8xf32>, tensor<16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x32x32x16xf32>
// CHECK-NEXT: %relu = tosa.clamp %conv {max_val = 6.0 : f32, min_val = 0.0 : f32} : (tensor<1x32x32x16xf32>) -> tensor<1x32x32x16xf32>
// CHECK-NEXT: %cast_relu = tensor.cast %relu : tensor<1x32x32x16xf32> to tensor<1x?x?x16xf32>
// CHECK-NEXT: return %cast_relu : tensor<1x?x?x16xf32>
// CHECK:      %t = tosa.transpose %a {perms = array<i32: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK-NEXT: %cast_t = tensor.cast %t : tensor<3x2xf32> to tensor<?x?xf32>
// CHECK-NEXT: %n = tosa.negate %t, %z, %z : (tensor<3x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<3x2xf32>
// CHECK-NEXT: %cast_n = tensor.cast %n : tensor<3x2xf32> to tensor<?x?xf32>
// CHECK-NEXT: return %cast_t, %cast_n : tensor<?x?xf32>, tensor<?x?xf32>

// ONLY:      tensor<1xf32>) -> tensor<1x?x?x16xf32>{{$}}
// ONLY-NEXT: %relu = tosa.clamp %conv {max_val = 6.0 : f32, min_val = 0.0 : f32} : (tensor<1x?x?x16xf32>) -> tensor<1x?x?x16xf32>
// ONLY-NEXT: return %relu : tensor<1x?x?x16xf32>
// ONLY:      -> tensor<3x2xf32>
// ONLY-NEXT: %cast_t = tensor.cast

// NOFN: tosa-lsp: error: no function @nope with inferable shapes
