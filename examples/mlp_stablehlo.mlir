// A two-layer perceptron as JAX exports it (stablehlo): relu(x @ w1 + b1) @ w2 + b2.
func.func @mlp(%x: tensor<4x8xf32>, %w1: tensor<8x16xf32>, %b1: tensor<16xf32>,
               %w2: tensor<16x4xf32>, %b2: tensor<4xf32>) -> tensor<4x4xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<4x16xf32>
  %0 = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = stablehlo.broadcast_in_dim %b1, dims = [1] : (tensor<16xf32>) -> tensor<4x16xf32>
  %2 = stablehlo.add %0, %1 : tensor<4x16xf32>
  %h = stablehlo.maximum %2, %zero : tensor<4x16xf32>
  %3 = stablehlo.dot_general %h, %w2, contracting_dims = [1] x [0] : (tensor<4x16xf32>, tensor<16x4xf32>) -> tensor<4x4xf32>
  %4 = stablehlo.broadcast_in_dim %b2, dims = [1] : (tensor<4xf32>) -> tensor<4x4xf32>
  %y = stablehlo.add %3, %4 : tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}
