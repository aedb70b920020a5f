func.func @fc(%x: tensor<?x3xf32>, %w: tensor<?x3xf32>, %b: tensor<?xf32>) -> tensor<?x?xf32> {
  %0 = "tosa.fully_connected"(%x, %w, %b) : (tensor<?x3xf32>, tensor<?x3xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
