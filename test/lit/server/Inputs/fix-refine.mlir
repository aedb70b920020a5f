// ? result dims that the operands determine: refine, users keep ?x? through
// a tensor.cast. The attribute before the result type puts multi-byte
// characters (UTF-16 surrogate pairs too) before the edited columns.
func.func @refine(%a: tensor<2x3xf32>, %b: tensor<1x3xf32>) -> tensor<?x?xf32> {
  %0 = "tfl.sub"(%a, %b) {note = "é ✓ 😀"} : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<?x?xf32>
  %1 = tosa.abs %0 : (tensor<?x?xf32>) -> tensor<?x?xf32>
  return %1 : tensor<?x?xf32>
}
