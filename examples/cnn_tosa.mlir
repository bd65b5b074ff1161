// A CNN block in TOSA: 3x3 convolution with bias, relu (clamp), 2x2 max pooling.
func.func @cnn_block(%x: tensor<1x8x8x3xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %zp = tosa.const values(dense<0.0> : tensor<1xf32>) : () -> tensor<1xf32>
  %conv = tosa.conv2d %x, %w, %b, %zp, %zp pad([1, 1, 1, 1]) stride([1, 1]) dilation([1, 1]) acc_type(f32) : (tensor<1x8x8x3xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x8x4xf32>
  %relu = tosa.clamp %conv min_val(0.0 : f32) max_val(3.40282347E+38 : f32) : (tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
  %pool = tosa.max_pool2d %relu kernel([2, 2]) stride([2, 2]) pad([0, 0, 0, 0]) : (tensor<1x8x8x4xf32>) -> tensor<1x4x4x4xf32>
  return %pool : tensor<1x4x4x4xf32>
}
