// Valid and invalid uses of the sig dialect (sig.irdl.mlir), whose c_preds MLIR's IRDL leaves
// out: every chunk verifies, or fails where its expected-error says, the same in `mlirtext opt`
// and in iree-opt (tests/test_irdl.py).
func.func @samples(%a: !sig.sample<f16>, %b: !sig.sample<f32>) {
  return
}

// -----

// expected-error@+1 {{'f64' does not satisfy the constraint}}
func.func @sample_of_f64(%a: !sig.sample<f64>) {
  return
}

// -----

func.func @buffer(%a: !sig.buffer<f32>) {
  return
}

// -----

// expected-error@+1 {{expected 1 type arguments, but had 2}}
func.func @buffer_with_its_rate(%a: !sig.buffer<44100, f32>) {
  return
}

// -----

func.func @gain(%a: !sig.sample<f32>) -> !sig.sample<f32> {
  %0 = "sig.gain"(%a) {mode = "linear", factor = 2.0 : f32} : (!sig.sample<f32>) -> !sig.sample<f32>
  %1 = "sig.gain"(%0) {mode = "linear", factor = "not a float"} : (!sig.sample<f32>) -> !sig.sample<f32>
  %2 = "sig.gain"(%1) {mode = "db"} : (!sig.sample<f32>) -> !sig.sample<f32>
  return %2 : !sig.sample<f32>
}

// -----

func.func @gain_without_mode(%a: !sig.sample<f32>) -> !sig.sample<f32> {
  // expected-error@+1 {{attribute "mode" is expected but not provided}}
  %0 = "sig.gain"(%a) {factor = 2.0 : f32} : (!sig.sample<f32>) -> !sig.sample<f32>
  return %0 : !sig.sample<f32>
}

// -----

func.func @gain_to_another_type(%a: !sig.sample<f32>) -> !sig.sample<f16> {
  // expected-error@+1 {{expected '!sig.sample<f32>' but got '!sig.sample<f16>'}}
  %0 = "sig.gain"(%a) {mode = "linear"} : (!sig.sample<f32>) -> !sig.sample<f16>
  return %0 : !sig.sample<f16>
}

// -----

func.func @level() -> f32 {
  %0 = "sig.level"() : () -> f32
  return %0 : f32
}

// -----

func.func @level_of_f16() -> f16 {
  // expected-error@+1 {{expected 'f32' but got 'f16'}}
  %0 = "sig.level"() : () -> f16
  return %0 : f16
}

// -----

func.func @peak() -> f32 {
  // expected-error@+1 {{'f32' does not satisfy the constraint}}
  %0 = "sig.peak"() : () -> f32
  return %0 : f32
}

// -----

func.func @resample(%a: !sig.sample<f32>) {
  // expected-error@+1 {{attribute 'sig.sample' expects 1 parameters but got 0}}
  "sig.resample"(%a) : (!sig.sample<f32>) -> ()
  return
}

// -----

func.func @each(%a: !sig.sample<f16>) {
  "sig.each"(%a) ({
  ^bb0(%s: !sig.sample<f16>):
    llvm.unreachable
  }) : (!sig.sample<f16>) -> ()
  return
}

// -----

func.func @each_with_an_index(%a: !sig.sample<f16>) {
  // expected-note@+1 {{see the operation}}
  "sig.each"(%a) ({
  // expected-error@+1 {{expected region 0 to have 1 arguments but got 2}}
  ^bb0(%s: !sig.sample<f16>, %i: index):
    llvm.unreachable
  }) : (!sig.sample<f16>) -> ()
  return
}
