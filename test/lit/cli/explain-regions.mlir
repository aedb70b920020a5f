// The sizes of a tosa.cond_if's or tosa.while_loop's results come from what
// their regions yield (MLIR's shape functions for them read only the
// yields): `explain` names the yielded values, never the condition, the
// loop counter or an input the size cannot come from.
// RUN: %tosa-lsp explain %s:10:8 | FileCheck %s --check-prefix=IF
// RUN: %tosa-lsp explain %s:27:10 | FileCheck %s --check-prefix=LOOP
// RUN: %mlir-opt --tosa-infer-shapes %s | FileCheck %s --check-prefix=OPT

func.func @ifop(%c: tensor<i1>, %a: tensor<4xf32>, %b: tensor<7xf32>) -> tensor<?xf32> {
  %0 = tosa.cond_if %c (%x = %a, %y = %b) : tensor<i1> (tensor<4xf32>, tensor<7xf32>) -> tensor<?xf32> {
  ^bb0(%x: tensor<4xf32>, %y: tensor<7xf32>):
    tosa.yield %x : tensor<4xf32>
  } else {
  ^bb0(%x: tensor<4xf32>, %y: tensor<7xf32>):
    %1 = tosa.abs %x : (tensor<4xf32>) -> tensor<4xf32>
    tosa.yield %1 : tensor<4xf32>
  }
  return %0 : tensor<?xf32>
}
// IF:      tosa.cond_if in @ifop: refinable (tosa-infer-shapes)
// IF-NEXT:   result #0: declared tensor<?xf32>   inferred tensor<4xf32>
// IF-NEXT:     dim 0: ? -> 4 from %x (yielded by the then branch) and %1 (yielded by the else branch)
// IF-NOT:  operand #
// OPT: tosa.cond_if {{.*}} -> tensor<4xf32>

func.func @loop(%i0: tensor<i32>, %x: tensor<4xf32>, %limit: tensor<i32>) -> tensor<?xf32> {
  %r:2 = tosa.while_loop (%i = %i0, %v = %x) : (tensor<i32>, tensor<4xf32>) -> (tensor<i32>, tensor<?xf32>) {
    %more = tosa.greater %limit, %i : (tensor<i32>, tensor<i32>) -> tensor<i1>
    tosa.yield %more : tensor<i1>
  } do {
  ^bb0(%i: tensor<i32>, %v: tensor<?xf32>):
    %one = "tosa.const"() <{values = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %i1 = tosa.add %i, %one : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %v1 = tosa.abs %v : (tensor<?xf32>) -> tensor<?xf32>
    tosa.yield %i1, %v1 : tensor<i32>, tensor<?xf32>
  }
  return %r#1 : tensor<?xf32>
}
// LOOP:      tosa.while_loop in @loop: refinable (tosa-infer-shapes)
// LOOP-NEXT:   result #0: declared tensor<i32>   inferred tensor<i32>
// LOOP-NEXT:   result #1: declared tensor<?xf32>   inferred tensor<4xf32>
// LOOP-NEXT:     dim 0: ? -> 4 from %v1 (yielded by the loop body), itself refined
// LOOP-NOT:  operand #
// OPT: tosa.while_loop {{.*}} -> (tensor<i32>, tensor<4xf32>)
