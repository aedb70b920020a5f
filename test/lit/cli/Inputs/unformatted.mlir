// A comment stays where it is.   
func.func @f(%input:   tensor<2xf32>,
             %bias: tensor<2xf32>) -> tensor<2xf32> {
    %sum =tosa.add %input ,%bias :(tensor<2xf32>,tensor<2xf32>)->tensor<2xf32>
%w = "tosa.const"() <{values = dense<[1.0,2.0]> : tensor<2xf32>}> : () -> tensor<2xf32>  // weights
      %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>

  %r = tosa.mul %sum,%w,  %shift : (tensor<2xf32>, tensor<2xf32>, tensor<1xi8>) -> tensor<2xf32>
    return %r : tensor<2xf32>
}
