// Inputs of cli/validate-*.test: one rule of MLIR 22's tosa-validate per
// section (written for these tests).

// A dynamic size: rejected at level 8k of TOSA 1.0.
func.func @dynamic(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = tosa.abs %x : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----
// An integer op: profile pro_int (checked with strict).
func.func @int_abs(%x: tensor<2x4xi32>) -> tensor<2x4xi32> {
  %0 = tosa.abs %x : (tensor<2x4xi32>) -> tensor<2x4xi32>
  return %0 : tensor<2x4xi32>
}

// -----
// bf16: extension bf16 (checked with strict).
func.func @bf16_abs(%x: tensor<2x4xbf16>) -> tensor<2x4xbf16> {
  %0 = tosa.abs %x : (tensor<2x4xbf16>) -> tensor<2x4xbf16>
  return %0 : tensor<2x4xbf16>
}

// -----
// i16 abs: no profile or extension has it.
func.func @i16_abs(%x: tensor<2x4xi16>) -> tensor<2x4xi16> {
  %0 = tosa.abs %x : (tensor<2x4xi16>) -> tensor<2x4xi16>
  return %0 : tensor<2x4xi16>
}

// -----
// Rank 7: above level 8k's MAX_RANK.
func.func @rank7(%x: tensor<1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x2xf32> {
  %0 = tosa.abs %x : (tensor<1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x2xf32>
  return %0 : tensor<1x1x1x1x1x1x2xf32>
}

// -----
// A kernel above level 8k's MAX_KERNEL.
func.func @big_kernel(%x: tensor<1x8200x1x1xf32>) -> tensor<1x1x1x1xf32> {
  %0 = tosa.max_pool2d %x {kernel = array<i64: 8200, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x8200x1x1xf32>) -> tensor<1x1x1x1xf32>
  return %0 : tensor<1x1x1x1xf32>
}

// -----
// A pad value that is not a constant.
func.func @pad_value(%x: tensor<2x3xf32>, %v: tensor<1xf32>) -> tensor<4x3xf32> {
  %p = tosa.const_shape {values = dense<[1, 1, 0, 0]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %0 = tosa.pad %x, %p, %v : (tensor<2x3xf32>, !tosa.shape<4>, tensor<1xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----
// Does not verify: no pass runs on it, in mlir-opt-22 or here.
func.func @broken(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = tosa.abs %x : (tensor<?x4xf32>) -> tensor<?x5xf32>
  return %0 : tensor<?x4xf32>
}

// -----
// Valid for every target these tests use.
func.func @clean(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = tosa.abs %x : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----
// The module's own target (level none): kept unless --validate names one.
module attributes {tosa.target_env = #tosa.target_env<specification_version = "1.0", level = none, profiles = [pro_fp], extensions = [int16]>} {
  func.func @own_target(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
    %0 = tosa.abs %x : (tensor<?x4xf32>) -> tensor<?x4xf32>
    return %0 : tensor<?x4xf32>
  }
}

// -----
// Control flow: extension controlflow (checked with strict).
func.func @cond(%c: tensor<i1>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = tosa.cond_if %c (%a = %x) : tensor<i1> (tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%a: tensor<2xf32>):
    tosa.yield %a : tensor<2xf32>
  } else {
  ^bb0(%a: tensor<2xf32>):
    %n = tosa.abs %a : (tensor<2xf32>) -> tensor<2xf32>
    tosa.yield %n : tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}
