// The RFC's (spec 001) element-wise lowering examples that are valid TOSA in
// MLIR 22, lowered with --mode=upstream at stage linalg. The same CHECK lines
// run on mlir-opt-22's own output, so the preview is exactly upstream's.
// RUN: %tosa-lsp lower --mode=upstream %s | FileCheck %s
// RUN: %mlir-opt --split-input-file --pass-pipeline="builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor))" %s | FileCheck %s

// Static, equal shapes: one linalg.generic with identity maps.
// CHECK-LABEL: func.func @static_equal(
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<10x20xf32>
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : tensor<10x20xf32>, tensor<10x20xf32>) outs(%[[E]] : tensor<10x20xf32>)
// CHECK:           arith.addf
func.func @static_equal(%arg0: tensor<10x20xf32>, %arg1: tensor<10x20xf32>) -> tensor<10x20xf32> {
  %0 = tosa.add %arg0, %arg1 : (tensor<10x20xf32>, tensor<10x20xf32>) -> tensor<10x20xf32>
  return %0 : tensor<10x20xf32>
}

// -----

// Static broadcast: a constant 0 in the operand's map, no copy.
// CHECK-LABEL: func.func @static_broadcast(
// CHECK:         linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<1xf32>, tensor<5xf32>) outs(%{{.*}} : tensor<5xf32>)
func.func @static_broadcast(%arg0: tensor<1xf32>, %arg1: tensor<5xf32>) -> tensor<5xf32> {
  %0 = tosa.add %arg0, %arg1 : (tensor<1xf32>, tensor<5xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// Dynamic-to-static: the runtime size must be 5.
// CHECK-LABEL: func.func @dynamic_to_static(
// CHECK:         arith.cmpi eq
// CHECK:         scf.if
// CHECK:         linalg.generic
// CHECK:         tensor.cast %{{.*}} : tensor<?xf32> to tensor<5xf32>
func.func @dynamic_to_static(%arg0: tensor<?xf32>, %arg1: tensor<?xf32>) -> tensor<5xf32> {
  %0 = tosa.add %arg0, %arg1 : (tensor<?xf32>, tensor<?xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// Static-to-dynamic: the result type is relaxed with a tensor.cast.
// CHECK-LABEL: func.func @static_to_dynamic(
// CHECK:         linalg.generic
// CHECK:         tensor.cast %{{.*}} : tensor<5xf32> to tensor<?xf32>
func.func @static_to_dynamic(%arg0: tensor<1xf32>, %arg1: tensor<5xf32>) -> tensor<?xf32> {
  %0 = tosa.add %arg0, %arg1 : (tensor<1xf32>, tensor<5xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// Fully dynamic 1-D: the maximum runtime size, then an scf.if per operand
// that broadcasts it when its size is 1.
// CHECK-LABEL: func.func @dynamic_1d(
// CHECK:         %[[D0:.*]] = tensor.dim %arg0, %{{.*}} : tensor<?xf32>
// CHECK:         %[[D1:.*]] = tensor.dim %arg1, %{{.*}} : tensor<?xf32>
// CHECK:         %[[MAX:.*]] = arith.maxui %[[D0]], %[[D1]] : index
// CHECK:         scf.if
// CHECK:         scf.if
// CHECK:         tensor.empty(%[[MAX]]) : tensor<?xf32>
func.func @dynamic_1d(%arg0: tensor<?xf32>, %arg1: tensor<?xf32>) -> tensor<?xf32> {
  %0 = tosa.add %arg0, %arg1 : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// Fully dynamic 2-D: a maximum per dimension, a check per operand and
// dimension.
// CHECK-LABEL: func.func @dynamic_2d(
// CHECK-COUNT-2: arith.maxui
// CHECK-COUNT-4: scf.if
// CHECK:         linalg.generic
func.func @dynamic_2d(%arg0: tensor<?x?xf32>, %arg1: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = tosa.add %arg0, %arg1 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// 0-d tensors: a generic over no dimensions.
// CHECK-LABEL: func.func @zero_d(
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = []} ins(%arg0, %arg1 : tensor<f32>, tensor<f32>)
func.func @zero_d(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
  %0 = tosa.add %arg0, %arg1 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Ternary tosa.select with a dynamic dimension shared by three operands.
// CHECK-LABEL: func.func @select(
// CHECK:         arith.maxui
// CHECK:         arith.maxui
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<2x?xi1>, tensor<2x?xf32>, tensor<2x?xf32>)
// CHECK:           arith.select
func.func @select(%arg0: tensor<2x?xi1>, %arg1: tensor<2x?xf32>, %arg2: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %0 = tosa.select %arg0, %arg1, %arg2 : (tensor<2x?xi1>, tensor<2x?xf32>, tensor<2x?xf32>) -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// -----

// Unary op with a result type cast (dynamic input, static result).
// CHECK-LABEL: func.func @unary_cast(
// CHECK:         linalg.generic
// CHECK:           math.absf
// CHECK:         tensor.cast %{{.*}} : tensor<?xf32> to tensor<10xf32>
func.func @unary_cast(%arg0: tensor<?xf32>) -> tensor<10xf32> {
  %0 = tosa.abs %arg0 : (tensor<?xf32>) -> tensor<10xf32>
  return %0 : tensor<10xf32>
}
