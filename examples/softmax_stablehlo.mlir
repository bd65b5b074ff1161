// Softmax over the last dimension, numerically stable (subtract the row maximum first).
func.func @softmax(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %max = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<2x8xf32>, tensor<f32>) -> tensor<2xf32>
  %maxb = stablehlo.broadcast_in_dim %max, dims = [0] : (tensor<2xf32>) -> tensor<2x8xf32>
  %shifted = stablehlo.subtract %x, %maxb : tensor<2x8xf32>
  %e = stablehlo.exponential %shifted : tensor<2x8xf32>
  %sum = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<2x8xf32>, tensor<f32>) -> tensor<2xf32>
  %sumb = stablehlo.broadcast_in_dim %sum, dims = [0] : (tensor<2xf32>) -> tensor<2x8xf32>
  %y = stablehlo.divide %e, %sumb : tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}
