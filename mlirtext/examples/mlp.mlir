// A small two-layer perceptron written with func, arith, math and tensor ops:
// the bundled example `make demo` reads, verifies and prints.
func.func @dense_relu(%x: f32, %w: f32, %b: f32) -> f32 {
  %xw = arith.mulf %x, %w : f32
  %y = arith.addf %xw, %b : f32
  %zero = arith.constant 0.0 : f32
  %relu = arith.maximumf %y, %zero : f32
  return %relu : f32
}

func.func @mlp(%x: f32) -> f32 {
  %w1 = arith.constant 0.5 : f32
  %b1 = arith.constant -0.25 : f32
  %h = func.call @dense_relu(%x, %w1, %b1) : (f32, f32, f32) -> f32
  %w2 = arith.constant 2.0 : f32
  %b2 = arith.constant 1.0 : f32
  %o = func.call @dense_relu(%h, %w2, %b2) : (f32, f32, f32) -> f32
  %s = math.tanh %o : f32
  return %s : f32
}
