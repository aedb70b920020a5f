// Pre-MLIR-22 TOSA for the VS Code end-to-end test (e2e.js): MLIR 22
// rejects both ops; "Migrate this file to MLIR 22 TOSA" rewrites them.
func.func @relu6(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tosa.clamp %x {min_fp = 0.0 : f32, max_fp = 6.0 : f32, min_int = 0 : i64, max_int = 6 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

func.func @mul_shift(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %0 = tosa.mul %a, %b {shift = 1 : i8} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}
