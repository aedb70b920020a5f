// A model-like function with control flow whose region arguments and
// results tosa-infer-shapes refines (refine-control-flow.test).
func.func @model(%x: tensor<2x3xf32>, %y: tensor<1x3xf32>, %pick: tensor<i1>) -> tensor<?x?xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %a = tosa.abs %x : (tensor<2x3xf32>) -> tensor<?x?xf32>
  %b = tosa.add %a, %y : (tensor<?x?xf32>, tensor<1x3xf32>) -> tensor<?x3xf32>
  %c = tosa.cond_if %pick (%p = %b, %q = %a) : tensor<i1> (tensor<?x3xf32>, tensor<?x?xf32>) -> tensor<?x?xf32> {
  ^bb0(%p: tensor<?x3xf32>, %q: tensor<?x?xf32>):
    %s = tosa.sub %p, %q : (tensor<?x3xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
    tosa.yield %s : tensor<?x?xf32>
  } else {
  ^bb0(%p: tensor<?x3xf32>, %q: tensor<?x?xf32>):
    %n = tosa.negate %q, %zp, %zp : (tensor<?x?xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<?x?xf32>
    tosa.yield %n : tensor<?x?xf32>
  }
  %i0 = "tosa.const"() <{values = dense<0> : tensor<i32>}> : () -> tensor<i32>
  %limit = "tosa.const"() <{values = dense<3> : tensor<i32>}> : () -> tensor<i32>
  %r:2 = tosa.while_loop (%i = %i0, %v = %c) : (tensor<i32>, tensor<?x?xf32>) -> (tensor<i32>, tensor<?x?xf32>) {
    %more = tosa.greater %limit, %i : (tensor<i32>, tensor<i32>) -> tensor<i1>
    tosa.yield %more : tensor<i1>
  } do {
  ^bb0(%i: tensor<i32>, %v: tensor<?x?xf32>):
    %one = "tosa.const"() <{values = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %i1 = tosa.add %i, %one : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %v1 = tosa.add %v, %y : (tensor<?x?xf32>, tensor<1x3xf32>) -> tensor<?x?xf32>
    tosa.yield %i1, %v1 : tensor<i32>, tensor<?x?xf32>
  }
  return %r#1 : tensor<?x?xf32>
}
