// The per-dimension table of `explain`, for the whole file and for one op.
// RUN: %tosa-lsp explain %s | FileCheck %s
// RUN: %tosa-lsp explain %s:12:8 | FileCheck %s --check-prefix=ONE
// RUN: %tosa-lsp explain %s:12 | FileCheck %s --check-prefix=ONE
// RUN: %tosa-lsp explain --format=markdown %s:12:10 | FileCheck %s --check-prefix=MD
// RUN: not %tosa-lsp explain %s:2:1 2>&1 | FileCheck %s --check-prefix=NOOP

func.func @f(%a: tensor<1x3xf32>, %b: tensor<2x3xf32>, %c: tensor<?x1xf32>,
             %p: tensor<2x1xi1>) -> tensor<2x3xf32> {
  %0 = tosa.add %a, %b : (tensor<1x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = tosa.select %p, %a, %c : (tensor<2x1xi1>, tensor<1x3xf32>, tensor<?x1xf32>) -> tensor<2x3xf32>
  %2 = tosa.maximum %c, %c : (tensor<?x1xf32>, tensor<?x1xf32>) -> tensor<5x1xf32>
  return %0 : tensor<2x3xf32>
}

// CHECK:      explain.mlir:10:8: tosa.add: ok
// CHECK-NEXT:   operands: #0 tensor<1x3xf32>, #1 tensor<2x3xf32>
// CHECK-NEXT:   declared: 2x3   inferred: 2x3
// CHECK-NEXT:   dim  #0  #1  inferred  declared  rule              notes
// CHECK-NEXT:   0    1   2   2         2         1 | >1 -> >1      #0 stretched from 1; from #1
// CHECK-NEXT:   1    3   3   3         3         >1 | >1 -> equal  from #0, #1

// Three operands: two fold steps per dimension.
// CHECK:      explain.mlir:11:8: tosa.select: ok
// CHECK:        dim  #0  #1  #2  inferred  declared  rule                          notes
// CHECK-NEXT:   0    2   1   ?   2         2         1 | >1 -> >1; ? | >1 -> >1    #1 stretched from 1; runtime check: scf.if (a ? may be 1); from #0
// CHECK-NEXT:   1    1   3   1   3         3         1 | >1 -> >1; 1 | >1 -> >1    #0, #2 stretched from 1; from #1

// ONE:        explain.mlir:12:8: tosa.maximum: ok
// ONE:          0    ?   ?   ?         5         ? | ? -> ?  runtime check: scf.if (a ? may be 1); must equal 5 at runtime
// ONE-NOT:    tosa.add

// MD:         **`tosa.maximum`** — broadcast ok
// MD:         | dim | #0 | #1 | inferred | declared | rule | notes |
// MD-NEXT:    |---|---|---|---|---|---|---|
// MD-NEXT:    | 0 | ? | ? | ? | 5 | ? \| ? -> ? | runtime check: scf.if (a ? may be 1); must equal 5 at runtime |

// NOOP: explain.mlir:2:1: no Broadcastable op and no op with an inferable shape at this position
