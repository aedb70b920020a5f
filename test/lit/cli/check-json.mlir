// The --format=json schema: diagnostics and every Broadcastable op, also in
// a file with errors.
// RUN: not %tosa-lsp check --format=json %s | FileCheck %s

func.func @f(%a: tensor<1x3xf32>, %b: tensor<?x3xf32>, %c: tensor<*xf32>) -> tensor<?x3xf32> {
  %0 = tosa.add %a, %b : (tensor<1x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  %1 = tosa.add %a, %a : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  %2 = "tfl.add"(%a, %c) : (tensor<1x3xf32>, tensor<*xf32>) -> tensor<1x?xf32>
  return %0 : tensor<?x3xf32>
}

// CHECK:      "files": [
// CHECK:        "path": "{{.*}}check-json.mlir",
// CHECK:        "diagnostics": [
// CHECK:          "line": 7,
// CHECK-NEXT:     "column": 8,
// CHECK:          "severity": "error",
// CHECK-NEXT:     "message": "'tosa.add' op result type '2x3' not broadcast compatible with broadcasted operands's shapes '1x3'",
// CHECK-NEXT:     "source": "verifier",
// CHECK:          "severity": "info",
// CHECK-NEXT:     "message": "result shape 1x? can be refined to 1x3: dimension 1 is statically known from the operands",
// CHECK-NEXT:     "source": "broadcast",
// CHECK-NEXT:     "code": "refinable-result",

// CHECK:        "ops": [
// CHECK:          "line": 6,
// CHECK-NEXT:     "column": 8,
// CHECK-NEXT:     "name": "tosa.add",
// CHECK-NEXT:     "kind": "implicit",
// CHECK-NEXT:     "operands": [
// CHECK-NEXT:      [
// CHECK-NEXT:       1,
// CHECK-NEXT:       3
// CHECK-NEXT:      ],
// CHECK-NEXT:      [
// CHECK-NEXT:       null,
// CHECK-NEXT:       3
// CHECK-NEXT:      ]
// CHECK-NEXT:     ],
// CHECK-NEXT:     "declaredShape": [
// CHECK-NEXT:      null,
// CHECK-NEXT:      3
// CHECK-NEXT:     ],
// CHECK-NEXT:     "inferredShape": [
// CHECK-NEXT:      null,
// CHECK-NEXT:      3
// CHECK-NEXT:     ],
// CHECK-NEXT:     "verdict": "ok",
// CHECK:          "dims": [
// CHECK:            "index": 0,
// CHECK:            "rule": "? | 1 -> ?",
// CHECK-NEXT:       "from": [
// CHECK-NEXT:        1
// CHECK-NEXT:       ],
// CHECK-NEXT:       "stretched": [
// CHECK-NEXT:        0
// CHECK-NEXT:       ],
// CHECK-NEXT:       "flags": [
// CHECK-NEXT:        "static-broadcast"
// CHECK-NEXT:       ]

// CHECK:          "line": 7,
// CHECK:          "name": "tosa.add",
// CHECK:          "verdict": "error",
// CHECK-NEXT:     "message": "result dimension 0 is declared 2 but every operand has size 1 there; broadcasting stretches operands, never the result",
// CHECK:          "verifierFailed": true,

// The unranked operand is discarded; the single ranked one gives the shape.
// CHECK:          "line": 8,
// CHECK:          "name": "tfl.add",
// CHECK:          "operands": [
// CHECK-NEXT:      [
// CHECK-NEXT:       1,
// CHECK-NEXT:       3
// CHECK-NEXT:      ],
// CHECK-NEXT:      null
// CHECK-NEXT:     ],
// CHECK:          "verdict": "ok",
