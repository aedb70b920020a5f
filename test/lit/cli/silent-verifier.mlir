// Some MLIR 22 verifiers fail without a diagnostic: mlir-opt-22 exits 1 on
// this tosa.pad (its padding is a computed !tosa.shape) and prints nothing.
// `check` must not call it clean: the failure becomes an error at the op,
// in the CLI and (same analysis) in the server.
// RUN: not %mlir-opt -o /dev/null %s 2>&1 | count 0
// RUN: not %tosa-lsp check %s 2>&1 | FileCheck %s
// RUN: not %tosa-lsp check --format=json %s | FileCheck %s --check-prefix=JSON

func.func @f(%x: tensor<2x3xf32>) -> tensor<?x?xf32> {
  %a = tosa.const_shape {values = dense<[1, 1]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %b = tosa.const_shape {values = dense<[0, 0]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %p = tosa.concat_shape %a, %b : (!tosa.shape<2>, !tosa.shape<2>) -> !tosa.shape<4>
  %c = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %0 = tosa.pad %x, %p, %c : (tensor<2x3xf32>, !tosa.shape<4>, tensor<1xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// CHECK: silent-verifier.mlir:14:8: error: 'tosa.pad' op was rejected by MLIR's verifier without a message (mlir-opt-22 exits 1 here and prints nothing)
// JSON:      "line": 14,
// JSON:      "severity": "error",
// JSON-NEXT: "message": "'tosa.pad' op was rejected by MLIR's verifier without a message
// JSON:      "code": "verifier-error",
