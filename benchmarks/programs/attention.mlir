// Batched attention: softmax(q k^T / sqrt(64)) v, q/k/v: 8x128x64 (benchmarks/interpreter_speed.py)
func.func @main(%q: tensor<8x128x64xf32>, %k: tensor<8x128x64xf32>, %v: tensor<8x128x64xf32>) -> tensor<8x128x64xf32> {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %c = stablehlo.constant dense<0.125> : tensor<f32>
  %scale = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<8x128x128xf32>
  %s0 = stablehlo.dot_general %q, %k, batching_dims = [0] x [0], contracting_dims = [2] x [2] : (tensor<8x128x64xf32>, tensor<8x128x64xf32>) -> tensor<8x128x128xf32>
  %s = stablehlo.multiply %s0, %scale : tensor<8x128x128xf32>
  %m = stablehlo.reduce(%s init: %ninf) applies stablehlo.maximum across dimensions = [2] : (tensor<8x128x128xf32>, tensor<f32>) -> tensor<8x128xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0, 1] : (tensor<8x128xf32>) -> tensor<8x128x128xf32>
  %d = stablehlo.subtract %s, %mb : tensor<8x128x128xf32>
  %e = stablehlo.exponential %d : tensor<8x128x128xf32>
  %t = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [2] : (tensor<8x128x128xf32>, tensor<f32>) -> tensor<8x128xf32>
  %tb = stablehlo.broadcast_in_dim %t, dims = [0, 1] : (tensor<8x128xf32>) -> tensor<8x128x128xf32>
  %p = stablehlo.divide %e, %tb : tensor<8x128x128xf32>
  %o = stablehlo.dot_general %p, %v, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<8x128x128xf32>, tensor<8x128x64xf32>) -> tensor<8x128x64xf32>
  return %o : tensor<8x128x64xf32>
}
