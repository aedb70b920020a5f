// tosa.slice, tosa.tile and tosa.resize with array attributes (MLIR 22:
// tosa.const_shape operands).
// RUN: not %tosa-lsp check %s | FileCheck %s --check-prefix=OLD
// RUN: %tosa-lsp fix %s | FileCheck %s --check-prefix=FIX
// RUN: %tosa-lsp fix --migrate %s > %t.mlir
// RUN: %mlir-opt --split-input-file %t.mlir -o /dev/null
// RUN: %tosa-lsp check %t.mlir
// RUN: grep -v "^ *//" %t.mlir | FileCheck %s --check-prefix=NEW

func.func @slice(%a: tensor<2x3xi32>) -> tensor<1x2xi32> {
  %0 = tosa.slice %a {start = array<i64: 1, 1>, size = array<i64: 1, 2>} : (tensor<2x3xi32>) -> tensor<1x2xi32>
  return %0 : tensor<1x2xi32>
}

// -----
func.func @tile(%a: tensor<2x3xi32>) -> tensor<2x6xi32> {
  %0 = tosa.tile %a {multiples = array<i64: 1, 2>} : (tensor<2x3xi32>) -> tensor<2x6xi32>
  return %0 : tensor<2x6xi32>
}

// -----
func.func @resize(%a: tensor<1x2x2x1xf32>) -> tensor<1x4x4x1xf32> {
  %0 = tosa.resize %a {mode = "BILINEAR", scale = array<i64: 4, 2, 4, 2>, offset = array<i64: -1, -1>, border = array<i64: 1, 1>} : (tensor<1x2x2x1xf32>) -> tensor<1x4x4x1xf32>
  return %0 : tensor<1x4x4x1xf32>
}

// OLD: {{.*}}slice-tile-resize.mlir:11:8: error: 'tosa.slice' op expected 3 operands, but found 1
// OLD: {{.*}}slice-tile-resize.mlir:17:8: error: 'tosa.tile' op expected 2 operands, but found 1
// OLD: {{.*}}slice-tile-resize.mlir:23:8: error: 'tosa.resize' op expected 4 operands, but found 1
// FIX: 0: {{.*}}slice-tile-resize.mlir:11:8: Migrate this file to MLIR 22 TOSA (3 ops) [verifier-error]
// FIX: 1: {{.*}}slice-tile-resize.mlir:11:8: Migrate tosa.slice to MLIR 22: `start`, `size` -> tosa.const_shape operands [verifier-error]
// FIX: 2: {{.*}}slice-tile-resize.mlir:17:8: Migrate tosa.tile to MLIR 22: `multiples` -> tosa.const_shape operands [verifier-error]
// FIX: 3: {{.*}}slice-tile-resize.mlir:23:8: Migrate tosa.resize to MLIR 22: `scale`, `offset`, `border` -> tosa.const_shape operands [verifier-error]
// NEW: %v22{{_}}start_0 = tosa.const_shape {values = dense<1> : tensor<2xindex>} : () -> !tosa.shape<2>
// NEW: %v22{{_}}size_1 = tosa.const_shape {values = dense<[1, 2]> : tensor<2xindex>} : () -> !tosa.shape<2>
// NEW: %0 = tosa.slice %a, %v22{{_}}start_0, %v22{{_}}size_1 : (tensor<2x3xi32>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<1x2xi32>
// NEW: %v22{{_}}multiples_0 = tosa.const_shape {values = dense<[1, 2]> : tensor<2xindex>} : () -> !tosa.shape<2>
// NEW: %0 = tosa.tile %a, %v22{{_}}multiples_0 : (tensor<2x3xi32>, !tosa.shape<2>) -> tensor<2x6xi32>
// NEW: %v22{{_}}scale_0 = tosa.const_shape {values = dense<[4, 2, 4, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
// NEW: %v22{{_}}offset_1 = tosa.const_shape {values = dense<-1> : tensor<2xindex>} : () -> !tosa.shape<2>
// NEW: %v22{{_}}border_2 = tosa.const_shape {values = dense<1> : tensor<2xindex>} : () -> !tosa.shape<2>
// NEW: %0 = tosa.resize %a, %v22{{_}}scale_0, %v22{{_}}offset_1, %v22{{_}}border_2 {mode = #tosa.resize_mode<BILINEAR>} : (tensor<1x2x2x1xf32>, !tosa.shape<4>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<1x4x4x1xf32>
