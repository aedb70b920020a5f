// Constants whose data is elided (dense_resource<__elided__>, how models are
// shared without their weights): a transpose's perms are recovered from the
// shapes when they allow one permutation; otherwise (and a pad's padding,
// always) the op is listed with its line and reason, and the exit code is 1.
// RUN: %tosa-lsp fix --migrate %S/Inputs/elided-unique.mlir > %t.mlir
// RUN: %mlir-opt %t.mlir -o /dev/null
// RUN: FileCheck %s --check-prefix=NEW < %t.mlir
// RUN: not %tosa-lsp fix --migrate %s 2>&1 >/dev/null | FileCheck %s --check-prefix=LEFT
// RUN: not %tosa-lsp fix --migrate --format=json %s 2>/dev/null | FileCheck %s --check-prefix=JSON
// RUN: %tosa-lsp fix %s | FileCheck %s --check-prefix=ACTION

func.func @t(%x: tensor<2x2x3xf32>, %y: tensor<1x3x4xf32>) -> (tensor<2x2x3xf32>, tensor<3x6x4xf32>) {
  %p = "tosa.const"() {value = dense_resource<__elided__> : tensor<3xi32>} : () -> tensor<3xi32>
  %0 = "tosa.transpose"(%x, %p) : (tensor<2x2x3xf32>, tensor<3xi32>) -> tensor<2x2x3xf32>
  %pad = "tosa.const"() {value = dense_resource<__elided__> : tensor<3x2xi32>} : () -> tensor<3x2xi32>
  %1 = "tosa.pad"(%y, %pad) : (tensor<1x3x4xf32>, tensor<3x2xi32>) -> tensor<3x6x4xf32>
  return %0, %1 : tensor<2x2x3xf32>, tensor<3x6x4xf32>
}

// NEW: "tosa.transpose"(%arg0) {perms = array<i32: 1, 2, 0>} : (tensor<4x2x3xf32>) -> tensor<2x3x4xf32>
// LEFT: elided.mlir:14:8: error: tosa.transpose not migrated: the perms constant's data is elided (dense_resource<__elided__>) and the input and result shapes allow several permutations: write the `perms` attribute by hand
// LEFT: elided.mlir:16:8: error: tosa.pad not migrated: the padding constant's data is elided (dense_resource<__elided__>): the padding cannot be recovered; write it as a tosa.const_shape
// LEFT: elided.mlir: migrated 2 ops; 2 left that do not verify with MLIR 22 (listed above)
// ACTION: Migrate this file to MLIR 22 TOSA (2 ops) - 2 ops left to edit by hand, first at line 14: the perms constant's data is elided
// JSON: "verifies": false,
// JSON: "line": 14,
// JSON: "line": 16,
