// `check --infer-shapes` reports what `mlir-opt-22 --tosa-infer-shapes`
// rejects, and with its severity: an error where MLIR's verifier rejects
// the op on the propagated sizes (also where the op's shape function has
// nothing to compare, because the operands no longer broadcast), a
// warning where it accepts it (tosa.mul checks no result shape).
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import sys; t=open(sys.argv[1]).read().split('// -----\n'); [open('%t/s%%d.mlir' %% i, 'w').write(s) for i, s in enumerate(t[1:])]" %s
// RUN: %tosa-lsp check %t/s0.mlir
// RUN: not %tosa-lsp check --infer-shapes %t/s0.mlir 2>&1 | FileCheck %s --check-prefix=OPERANDS
// RUN: not %tosa-lsp check --infer-shapes --format=json %t/s0.mlir | FileCheck %s --check-prefix=NOTES
// RUN: not %mlir-opt --tosa-infer-shapes %t/s0.mlir -o /dev/null
// RUN: not %tosa-lsp check --infer-shapes %t/s1.mlir 2>&1 | FileCheck %s --check-prefix=RESULT
// RUN: not %mlir-opt --tosa-infer-shapes %t/s1.mlir -o /dev/null
// RUN: %tosa-lsp check --infer-shapes %t/s2.mlir 2>&1 | FileCheck %s --check-prefix=MUL
// RUN: %mlir-opt --tosa-infer-shapes %t/s2.mlir -o /dev/null
// RUN: %tosa-lsp explain --format=json %t/s0.mlir | FileCheck %s --check-prefix=JSON
// RUN: %python %tools/infer_agreement.py --file %t/s0.mlir --file %t/s1.mlir --file %t/s2.mlir --tosa-lsp %tosa-lsp --mlir-opt %mlir-opt | FileCheck %s --check-prefix=AGREE
// AGREE: infer: {{[0-9]+}} ops agree, 0 disagree, {{[0-9]+}} unmatched, {{[0-9]+}} refined, 2 contradictions confirmed by the pass, 0 unconfirmed, 1 warnings, 0 missed and 0 errors on accepted files; 3 files, 0 runs failed

// -----
// 3 and 4 do not broadcast once %0 is known to be 3.
func.func @operands(%a: tensor<3xf32>, %c: tensor<4xf32>) -> tensor<?xf32> {
  %0 = tosa.abs %a : (tensor<3xf32>) -> tensor<?xf32>
  %1 = tosa.add %0, %c : (tensor<?xf32>, tensor<4xf32>) -> tensor<?xf32>
  return %1 : tensor<?xf32>
}
// OPERANDS: s0.mlir:4:8: error: 'tosa.add' does not verify with the sizes shape inference (tosa-infer-shapes) propagates into its operands: 'tosa.add' op operands don't have broadcast-compatible shapes
// OPERANDS-NEXT: %1 = tosa.add
// OPERANDS-NEXT: ^
// The notes are at the op, as the language server shows them; as in
// mlir-opt's output, no source line again for a note at the same place.
// OPERANDS-NEXT: s0.mlir:4:8: note: refined by propagation: %0 (operand #0): tensor<?xf32> -> tensor<3xf32>
// OPERANDS-NOT: ^
// NOTES:      "code": "shape-contradiction",
// NOTES:      "notes": [
// NOTES-NEXT:  {
// NOTES-NEXT:   "line": 4,
// NOTES-NEXT:   "column": 8,
// NOTES-NEXT:   "message": "refined by propagation: %0 (operand #0): tensor<?xf32> -> tensor<3xf32>"
// JSON: "name": "tosa.add",
// JSON: "contradiction": true,
// JSON-NEXT: "rejection": "'tosa.add' op operands don't have broadcast-compatible shapes",

// -----
// The declared 4x3 against the propagated 2x3 (and a ? operand).
func.func @result(%a: tensor<2x3xf32>, %c: tensor<?x?xf32>) -> tensor<4x3xf32> {
  %0 = tosa.abs %a : (tensor<2x3xf32>) -> tensor<?x?xf32>
  %1 = tosa.add %0, %c : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<4x3xf32>
  return %1 : tensor<4x3xf32>
}
// RESULT: s1.mlir:4:8: error: 'tosa.add' does not verify with the sizes shape inference (tosa-infer-shapes) propagates into its operands: 'tosa.add' op result type '4x3' not broadcast compatible with broadcasted operands's shapes '2x3'

// -----
// tosa.mul's verifier checks no result shape: mlir-opt accepts 4 for the
// propagated 3.
func.func @mul(%a: tensor<1xf32>, %b: tensor<3xf32>) -> tensor<4xf32> {
  %s = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v = tosa.abs %b : (tensor<3xf32>) -> tensor<?xf32>
  %1 = tosa.mul %a, %v, %s : (tensor<1xf32>, tensor<?xf32>, tensor<1xi8>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
// MUL: s2.mlir:6:8: warning: 'tosa.mul' result #0 is declared tensor<4xf32> but shape inference (tosa-infer-shapes) gives 3: dimension 0 is 3, not 4 (MLIR's verifier accepts the op)
// MUL-NOT: error
