// MLP: relu(relu(x @ w1 + b1) @ w2 + b2), x: 64x512, w: 512x512 (benchmarks/interpreter_speed.py)
func.func @main(%x: tensor<64x512xf32>, %w1: tensor<512x512xf32>, %b1: tensor<512xf32>,
                %w2: tensor<512x512xf32>, %b2: tensor<512xf32>) -> tensor<64x512xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %zeros = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> tensor<64x512xf32>
  %0 = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<64x512xf32>, tensor<512x512xf32>) -> tensor<64x512xf32>
  %1 = stablehlo.broadcast_in_dim %b1, dims = [1] : (tensor<512xf32>) -> tensor<64x512xf32>
  %2 = stablehlo.add %0, %1 : tensor<64x512xf32>
  %3 = stablehlo.maximum %2, %zeros : tensor<64x512xf32>
  %4 = stablehlo.dot_general %3, %w2, contracting_dims = [1] x [0] : (tensor<64x512xf32>, tensor<512x512xf32>) -> tensor<64x512xf32>
  %5 = stablehlo.broadcast_in_dim %b2, dims = [1] : (tensor<512xf32>) -> tensor<64x512xf32>
  %6 = stablehlo.add %4, %5 : tensor<64x512xf32>
  %7 = stablehlo.maximum %6, %zeros : tensor<64x512xf32>
  return %7 : tensor<64x512xf32>
}
