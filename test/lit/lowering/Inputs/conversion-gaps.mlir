func.func @sc(%v: tensor<1x4x2xf32>, %i: tensor<1x2xi32>, %u: tensor<1x2x2xf32>) -> tensor<1x4x2xf32> {
  %0 = tosa.scatter %v, %i, %u : (tensor<1x4x2xf32>, tensor<1x2xi32>, tensor<1x2x2xf32>) -> tensor<1x4x2xf32>
  return %0 : tensor<1x4x2xf32>
}

func.func @s(%x: tensor<3x4xf32>) -> tensor<2x2xf32> {
  %st = tosa.const_shape {values = dense<[1, 1]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %sz = tosa.const_shape {values = dense<[2, 2]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %0 = tosa.slice %x, %st, %sz : (tensor<3x4xf32>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

func.func @g(%v: tensor<2x5x3xf32>, %i: tensor<2x40xi32>) -> tensor<2x40x3xf32> {
  %0 = tosa.gather %v, %i : (tensor<2x5x3xf32>, tensor<2x40xi32>) -> tensor<2x40x3xf32>
  return %0 : tensor<2x40x3xf32>
}

func.func @c(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tosa.custom %x {domain_name = "d", operator_name = "op", implementation_attrs = ""} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

func.func @cplx(%a: tensor<2xf32>) -> complex<f32> {
  %c = complex.constant [1.0 : f32, 2.0 : f32] : complex<f32>
  return %c : complex<f32>
}

func.func @i48(%a: tensor<2xi48>) -> tensor<2xi48> {
  %0 = tosa.abs %a : (tensor<2xi48>) -> tensor<2xi48>
  return %0 : tensor<2xi48>
}
