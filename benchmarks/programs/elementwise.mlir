// Elementwise chain on 1M floats: sqrt(max(2x + 1, 0)^2 + 1) - x (benchmarks/interpreter_speed.py)
func.func @main(%x: tensor<1048576xf32>) -> tensor<1048576xf32> {
  %c0 = stablehlo.constant dense<0.0> : tensor<f32>
  %c1 = stablehlo.constant dense<1.0> : tensor<f32>
  %c2 = stablehlo.constant dense<2.0> : tensor<f32>
  %zero = stablehlo.broadcast_in_dim %c0, dims = [] : (tensor<f32>) -> tensor<1048576xf32>
  %one = stablehlo.broadcast_in_dim %c1, dims = [] : (tensor<f32>) -> tensor<1048576xf32>
  %two = stablehlo.broadcast_in_dim %c2, dims = [] : (tensor<f32>) -> tensor<1048576xf32>
  %0 = stablehlo.multiply %x, %two : tensor<1048576xf32>
  %1 = stablehlo.add %0, %one : tensor<1048576xf32>
  %2 = stablehlo.maximum %1, %zero : tensor<1048576xf32>
  %3 = stablehlo.multiply %2, %2 : tensor<1048576xf32>
  %4 = stablehlo.add %3, %one : tensor<1048576xf32>
  %5 = stablehlo.sqrt %4 : tensor<1048576xf32>
  %6 = stablehlo.subtract %5, %x : tensor<1048576xf32>
  return %6 : tensor<1048576xf32>
}
