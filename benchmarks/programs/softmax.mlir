// Softmax over the last axis of 256x1024 (benchmarks/interpreter_speed.py)
func.func @main(%x: tensor<256x1024xf32>) -> tensor<256x1024xf32> {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<256x1024xf32>, tensor<f32>) -> tensor<256xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<256xf32>) -> tensor<256x1024xf32>
  %d = stablehlo.subtract %x, %mb : tensor<256x1024xf32>
  %e = stablehlo.exponential %d : tensor<256x1024xf32>
  %s = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<256x1024xf32>, tensor<f32>) -> tensor<256xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<256xf32>) -> tensor<256x1024xf32>
  %r = stablehlo.divide %e, %sb : tensor<256x1024xf32>
  return %r : tensor<256x1024xf32>
}
