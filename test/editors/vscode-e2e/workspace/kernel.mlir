// A matmul big enough for compile --threads (2^24 FLOP): with
// tosaLsp.compile.threads = 2 (run.sh), its shared library calls libomp.
func.func @mid(%a: tensor<1x256x128xf32>, %b: tensor<1x128x256xf32>) -> tensor<1x256x256xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %r = tosa.matmul %a, %b, %zp, %zp : (tensor<1x256x128xf32>, tensor<1x128x256xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x256x256xf32>
  return %r : tensor<1x256x256xf32>
}
