// Valid and invalid uses of the geo dialect (geo.irdl.mlir); every chunk verifies, or fails
// where its expected-error says, the same in `mlirtext opt` and in iree-opt (tests/test_irdl.py).
func.func @distance(%a: !geo.point<f32>, %b: !geo.point<f32>) -> f32 {
  %d = "geo.distance"(%a, %b) {unit = #geo.unit<"m">} : (!geo.point<f32>, !geo.point<f32>) -> f32
  return %d : f32
}

// -----

func.func @distance_of_mixed_points(%a: !geo.point<f32>, %b: !geo.point<f64>) -> f32 {
  // expected-error@+1 {{expected '!geo.point<f32>' but got '!geo.point<f64>'}}
  %d = "geo.distance"(%a, %b) {unit = #geo.unit<"m">} : (!geo.point<f32>, !geo.point<f64>) -> f32
  return %d : f32
}

// -----

func.func @distance_of_the_wrong_type(%a: !geo.point<f64>, %b: !geo.point<f64>) -> f32 {
  // expected-error@+1 {{expected 'f64' but got 'f32'}}
  %d = "geo.distance"(%a, %b) {unit = #geo.unit<"ft">} : (!geo.point<f64>, !geo.point<f64>) -> f32
  return %d : f32
}

// -----

func.func @distance_of_tensors(%a: tensor<2xf32>, %b: tensor<2xf32>) -> f32 {
  // expected-error@+1 {{expected base type 'geo.point' but got 'tensor<2xf32>'}}
  %d = "geo.distance"(%a, %b) {unit = #geo.unit<"m">} : (tensor<2xf32>, tensor<2xf32>) -> f32
  return %d : f32
}

// -----

func.func @distance_without_unit(%a: !geo.point<f32>, %b: !geo.point<f32>) -> f32 {
  // expected-error@+1 {{attribute "unit" is expected but not provided}}
  %d = "geo.distance"(%a, %b) : (!geo.point<f32>, !geo.point<f32>) -> f32
  return %d : f32
}

// -----

func.func @distance_in_a_string(%a: !geo.point<f32>, %b: !geo.point<f32>) -> f32 {
  // expected-error@+1 {{expected base attribute 'geo.unit' but got 'builtin.string'}}
  %d = "geo.distance"(%a, %b) {unit = "m"} : (!geo.point<f32>, !geo.point<f32>) -> f32
  return %d : f32
}

// -----

func.func @centroid(%a: !geo.point<f64>, %b: !geo.point<f64>, %c: !geo.point<f64>) -> !geo.point<f64> {
  %0 = "geo.centroid"(%a, %b, %c) : (!geo.point<f64>, !geo.point<f64>, !geo.point<f64>) -> !geo.point<f64>
  %1 = "geo.centroid"() : () -> !geo.point<f64>
  return %0 : !geo.point<f64>
}

// -----

func.func @centroid_of_mixed_points(%a: !geo.point<f64>, %b: !geo.point<f32>) -> !geo.point<f64> {
  // expected-error@+1 {{expected '!geo.point<f64>' but got '!geo.point<f32>'}}
  %0 = "geo.centroid"(%a, %b) : (!geo.point<f64>, !geo.point<f32>) -> !geo.point<f64>
  return %0 : !geo.point<f64>
}

// -----

func.func @counts() -> (i64, index) {
  %0 = "geo.count"() {tag = "all"} : () -> i64
  %1 = "geo.count"() {tag = "some"} : () -> index
  return %0, %1 : i64, index
}

// -----

func.func @count_as_a_float() -> f32 {
  // expected-error@+1 {{'f32' does not satisfy the constraint}}
  %0 = "geo.count"() {tag = "all"} : () -> f32
  return %0 : f32
}

// -----

func.func @count_with_a_number_tag() -> i64 {
  // expected-error@+1 {{expected base attribute 'builtin.string' but got 'builtin.integer'}}
  %0 = "geo.count"() {tag = 3 : i64} : () -> i64
  return %0 : i64
}

// -----

func.func @flags() -> i32 {
  %0 = "geo.flag"() : () -> i32
  return %0 : i32
}

// -----

func.func @flag_of_64_bits() -> i64 {
  // expected-error@+1 {{expected 'i32' but got 'i64'}}
  %0 = "geo.flag"() : () -> i64
  return %0 : i64
}

// -----

func.func @flag_of_a_float() -> f32 {
  // expected-error@+1 {{expected base type 'builtin.integer' but got 'builtin.f32'}}
  %0 = "geo.flag"() : () -> f32
  return %0 : f32
}

// -----

func.func @for_each(%p: !geo.point<f32>) {
  "geo.for_each"(%p) ({
  ^bb0(%q: !geo.point<f32>):
    %c = "geo.centroid"(%q) : (!geo.point<f32>) -> !geo.point<f32>
    llvm.unreachable
  }) : (!geo.point<f32>) -> ()
  return
}

// -----

func.func @for_each_of_another_type(%p: !geo.point<f32>) {
  // expected-note@+1 {{see the operation}}
  "geo.for_each"(%p) ({
  // expected-error@+1 {{expected '!geo.point<f32>' but got '!geo.point<f64>'}}
  ^bb0(%q: !geo.point<f64>):
    llvm.unreachable
  }) : (!geo.point<f32>) -> ()
  return
}

// -----

func.func @for_each_with_two_blocks(%p: !geo.point<f32>) {
  // expected-error@+1 {{expected region 0 to have 1 block(s) but got 2}}
  "geo.for_each"(%p) ({
  ^bb0(%q: !geo.point<f32>):
    cf.br ^bb1
  ^bb1:
    llvm.unreachable
  }) : (!geo.point<f32>) -> ()
  return
}

// -----

func.func @for_each_without_body(%p: !geo.point<f32>) {
  // expected-error@+1 {{unexpected number of regions: expected 1 but got 0}}
  "geo.for_each"(%p) : (!geo.point<f32>) -> ()
  return
}

// -----

// expected-error@+1 {{'i32' does not satisfy the constraint}}
func.func @integer_points(%a: !geo.point<i32>) {
  return
}

// -----

// expected-error@+1 {{expected 1 type arguments, but had 2}}
func.func @points_of_two_types(%a: !geo.point<f32, f64>) {
  return
}

// -----

// expected-error@+1 {{expected dynamic type}}
func.func @no_such_type(%a: !geo.line<f32>) {
  return
}

// -----

func.func @distance_in_km(%a: !geo.point<f32>, %b: !geo.point<f32>) -> f32 {
  // expected-error@+1 {{'"km"' does not satisfy the constraint}}
  %d = "geo.distance"(%a, %b) {unit = #geo.unit<"km">} : (!geo.point<f32>, !geo.point<f32>) -> f32
  return %d : f32
}

// -----

func.func @distance_in_a_scale(%a: !geo.point<f32>, %b: !geo.point<f32>) -> f32 {
  // expected-error@+1 {{expected dynamic attribute}}
  %d = "geo.distance"(%a, %b) {unit = #geo.scale<"m">} : (!geo.point<f32>, !geo.point<f32>) -> f32
  return %d : f32
}
