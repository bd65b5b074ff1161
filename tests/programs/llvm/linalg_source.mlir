// The linalg-level programs lowered by iree-opt (upstream loops/cf passes, then
// IREE's --iree-convert-to-llvm, which lowers func/memref/arith/math like the
// upstream *-to-llvm passes) for test_interp_llvm.py.
func.func @matmul(%a: memref<4x5xf32>, %b: memref<5x6xf32>, %c: memref<4x6xf32>) {
  linalg.matmul ins(%a, %b : memref<4x5xf32>, memref<5x6xf32>) outs(%c : memref<4x6xf32>)
  return
}
func.func @elementwise(%x: memref<8xf32>, %y: memref<8xi32>, %o: memref<8xf32>, %p: memref<8xi32>) {
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                  iterator_types = ["parallel"]}
      ins(%x, %y : memref<8xf32>, memref<8xi32>) outs(%o, %p : memref<8xf32>, memref<8xi32>) {
  ^bb0(%a: f32, %b: i32, %out: f32, %out2: i32):
    %zero = arith.constant 0.0 : f32
    %r = arith.maximumf %a, %zero : f32
    %e = math.exp %a : f32
    %s = arith.addf %r, %e : f32
    %bf = arith.sitofp %b : i32 to f32
    %t = arith.mulf %s, %bf : f32
    %c3 = arith.constant 3 : i32
    %q = arith.divsi %b, %c3 : i32
    %m = arith.remsi %b, %c3 : i32
    %sh = arith.shrsi %b, %c3 : i32
    %qm = arith.addi %q, %m : i32
    %i = arith.addi %qm, %sh : i32
    linalg.yield %t, %i : f32, i32
  }
  return
}
