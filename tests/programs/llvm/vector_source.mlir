// Vector-dialect code lowered by iree-opt to llvm vector ops (fmuladd, shufflevector,
// maximum, ordered reduce.fadd, reduce.fmax, vector fptosi/icmp/select). Stored lowered
// in generic form (vector_lowered.mlir): mlirtext reads no vector dialect, and not yet the
// custom form of llvm.intr.vector.reduce.fadd.
func.func @vectors(%a: memref<8xf32>, %b: memref<8xf32>, %o: memref<8xf32>, %s: memref<1xf32>, %i: memref<8xi32>) {
  %c0 = arith.constant 0 : index
  %va = vector.load %a[%c0] : memref<8xf32>, vector<8xf32>
  %vb = vector.load %b[%c0] : memref<8xf32>, vector<8xf32>
  %f = vector.fma %va, %vb, %va : vector<8xf32>
  %sh = vector.shuffle %f, %vb [7, 6, 5, 4, 11, 10, 9, 8] : vector<8xf32>, vector<8xf32>
  %m = arith.maximumf %sh, %va : vector<8xf32>
  vector.store %m, %o[%c0] : memref<8xf32>, vector<8xf32>
  %r = vector.reduction <add>, %m : vector<8xf32> into f32
  %rm = vector.reduction <maxnumf>, %vb : vector<8xf32> into f32
  %t = arith.addf %r, %rm : f32
  memref.store %t, %s[%c0] : memref<1xf32>
  %ci = arith.fptosi %m : vector<8xf32> to vector<8xi32>
  %x = vector.extract %ci[3] : i32 from vector<8xi32>
  %bc = vector.broadcast %x : i32 to vector<8xi32>
  %sum = arith.addi %ci, %bc : vector<8xi32>
  %mask = arith.cmpi sgt, %sum, %bc : vector<8xi32>
  %zero = arith.constant dense<0> : vector<8xi32>
  %sel = arith.select %mask, %sum, %zero : vector<8xi1>, vector<8xi32>
  vector.store %sel, %i[%c0] : memref<8xi32>, vector<8xi32>
  return
}
