// A tour of Broadcastable shape inference. `tosa-lsp explain` on this file
// prints the diagnostics and the inferred-vs-declared table of every op.

// Static broadcast: dimension 0 of %a (size 1) is stretched to 2.
func.func @static_broadcast(%a: tensor<1x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tosa.add %a, %b : (tensor<1x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// Dynamic sizes: the lowering needs a runtime broadcast check, and the
// declared result could be refined from ?x? to ?x3 (dim 1 is known).
func.func @dynamic(%a: tensor<?x3xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = tosa.sub %a, %b : (tensor<?x3xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// Dynamic-to-static: accepted, but the runtime size must be 4.
func.func @dynamic_to_static(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<4xf32> {
  %0 = tosa.maximum %a, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// Errors: every failing op is reported, not only the first per function.
func.func @errors(%a: tensor<3xf32>, %b: tensor<2xf32>, %c: tensor<1xf32>) -> tensor<4xf32> {
  // Static sizes 3 and 2 cannot be broadcast.
  %0 = tosa.add %a, %b : (tensor<3xf32>, tensor<2xf32>) -> tensor<3xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  // Results are never broadcast: 1 and 1 give 1, not 4.
  %1 = tosa.mul %c, %c, %shift : (tensor<1xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// Rank expansion is implicit for TF Lite ops (unregistered, generic form)...
func.func @rank_expansion(%a: tensor<3x4xf32>, %b: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = "tfl.add"(%a, %b) : (tensor<3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // ...but TOSA 1.0 needs equal ranks: reshape %a to 1x3x4 first.
  %1 = tosa.add %a, %b : (tensor<3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}
