// tosa.fully_connected was removed in TOSA 1.0: MLIR 22 rejects it as an
// unknown op; the diagnostic names the replacement and the
// migration rewrites it as a 1x1 tosa.conv2d between two reshapes.
// RUN: not %tosa-lsp check %s | FileCheck %s --check-prefix=OLD
// RUN: %tosa-lsp fix %s | FileCheck %s --check-prefix=FIX
// RUN: %tosa-lsp fix --migrate %s > %t.mlir
// RUN: %mlir-opt --split-input-file %t.mlir -o /dev/null
// RUN: %tosa-lsp check %t.mlir
// RUN: grep -v "^ *//" %t.mlir | FileCheck %s --check-prefix=NEW
// A dynamic batch: reshapes with a -1 (MLIR 22 infers it from the input).
// RUN: %tosa-lsp fix --migrate %S/Inputs/fully-connected-dynamic.mlir > %t.dyn.mlir
// RUN: %mlir-opt %t.dyn.mlir -o /dev/null
// RUN: FileCheck %s --check-prefix=DYN < %t.dyn.mlir
// Weights of dynamic shape: no reshape to OCx1x1xIC; named with the
// reason, exit 1.
// RUN: not %tosa-lsp fix --migrate %S/Inputs/fully-connected-dynamic-weights.mlir 2>&1 >/dev/null | FileCheck %s --check-prefix=MANUAL

func.func @fc(%x: tensor<2x3xi8>, %w: tensor<4x3xi8>, %b: tensor<4xi32>) -> tensor<2x4xi32> {
  %0 = "tosa.fully_connected"(%x, %w, %b) {input_zp = -128 : i32, weight_zp = 0 : i32} : (tensor<2x3xi8>, tensor<4x3xi8>, tensor<4xi32>) -> tensor<2x4xi32>
  return %0 : tensor<2x4xi32>
}

// OLD: fully-connected.mlir:19:8: error: unregistered operation 'tosa.fully_connected' found in dialect ('tosa') that does not allow unknown operations
// OLD: note: tosa.fully_connected was removed in TOSA 1.0 (MLIR 22): reshape the input to Nx1x1xIC
// FIX: 0: {{.*}}fully-connected.mlir:19:8: Migrate this file to MLIR 22 TOSA (1 ops) [verifier-error]
// FIX: 1: {{.*}}fully-connected.mlir:19:8: Migrate tosa.fully_connected to MLIR 22: tosa.fully_connected (removed) -> tosa.conv2d with a 1x1 kernel between reshapes [verifier-error]
// NEW: %v22{{_}}input_1 = tosa.reshape %x, %v22{{_}}shape_0 : (tensor<2x3xi8>, !tosa.shape<4>) -> tensor<2x1x1x3xi8>
// NEW: %v22{{_}}weight_3 = tosa.reshape %w, %v22{{_}}shape_2 : (tensor<4x3xi8>, !tosa.shape<4>) -> tensor<4x1x1x3xi8>
// NEW: %v22{{_}}input_zp_4 = "tosa.const"() <{values = dense<-128> : tensor<1xi8>}> : () -> tensor<1xi8>
// NEW: %v22{{_}}weight_zp_5 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
// NEW: %v22{{_}}conv_6 = tosa.conv2d %v22{{_}}input_1, %v22{{_}}weight_3, %b, %v22{{_}}input_zp_4, %v22{{_}}weight_zp_5 {acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<2x1x1x3xi8>, tensor<4x1x1x3xi8>, tensor<4xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<2x1x1x4xi32>
// NEW: %0 = "tosa.reshape"(%v22{{_}}conv_6, %v22{{_}}shape_7) : (tensor<2x1x1x4xi32>, !tosa.shape<2>) -> tensor<2x4xi32>
// DYN: %v22{{_}}shape_0 = tosa.const_shape {values = dense<[-1, 1, 1, 3]> : tensor<4xindex>} : () -> !tosa.shape<4>
// DYN: tosa.conv2d {{.*}} -> tensor<?x1x1x4xf32>
// DYN: %v22{{_}}shape_7 = tosa.const_shape {values = dense<[-1, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
// DYN: %0 = "tosa.reshape"(%v22{{_}}conv_6, %v22{{_}}shape_7) : (tensor<?x1x1x4xf32>, !tosa.shape<2>) -> tensor<?x4xf32>
// MANUAL: fully-connected-dynamic-weights.mlir:2:8: error: tosa.fully_connected not migrated: tosa.fully_connected was removed in TOSA 1.0 (MLIR 22) and its weights' shape is not static
// MANUAL: migrated 0 ops; 1 left that do not verify with MLIR 22
