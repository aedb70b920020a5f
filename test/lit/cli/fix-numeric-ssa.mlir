// The reshape quick fix on an operand with a numeric name (how MLIR prints
// IR): fresh names must parse (`%0_shape` does not), so the fix is
// validated, listed by `fix` and applied by `--apply=0`; `--candidates`
// and `--apply` number the same list (issue 13, defects 13 and 15).
// RUN: %tosa-lsp fix %s | FileCheck %s --check-prefix=LIST
// RUN: %tosa-lsp fix --candidates %s | FileCheck %s --check-prefix=LIST
// RUN: %tosa-lsp fix --apply=0 %s > %t.mlir
// RUN: FileCheck %s --check-prefix=FIXED < %t.mlir
// RUN: %mlir-opt %t.mlir > /dev/null
// RUN: %tosa-lsp fix --candidates --apply=0 %s | FileCheck %s --check-prefix=FIXED
// RUN: not %tosa-lsp fix --apply=1 %s 2>&1 | FileCheck %s --check-prefix=NOFIX

// LIST: 0: {{.*}}fix-numeric-ssa.mlir:[[@LINE+8]]:8: Reshape operand #0 to tensor<1x1x1xi32> (tosa.reshape) to equalise ranks [verifier-error]{{$}}
// FIXED: %v0_shape = tosa.const_shape {values = dense<[1, 1, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
// FIXED-NEXT: %v0_reshaped = tosa.reshape %0, %v0_shape : (tensor<1x1xi32>, !tosa.shape<3>) -> tensor<1x1x1xi32>
// FIXED-NEXT: %1 = tosa.sub %v0_reshaped, %arg0
// NOFIX: no fix #1 (there are 1 validated fixes; --candidates lists unvalidated ones too)

func.func @f(%arg0: tensor<1x21x1xi32>, %arg1: tensor<1x1xi32>) -> tensor<1x21x1xi32> {
  %0 = tosa.abs %arg1 : (tensor<1x1xi32>) -> tensor<1x1xi32>
  %1 = tosa.sub %0, %arg0 : (tensor<1x1xi32>, tensor<1x21x1xi32>) -> tensor<1x21x1xi32>
  return %1 : tensor<1x21x1xi32>
}
