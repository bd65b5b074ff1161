// Vector values: arithmetic, extract/insert element, shufflevector, loads and stores of
// vectors, bitcasts between vectors and scalars, reductions.
module {
  llvm.func @vector_ops(%a: vector<4xf32>, %b: vector<4xf32>) -> !llvm.struct<(vector<4xf32>, f32, vector<4xf32>, f32, f32)> {
    %sum = llvm.fmul %a, %b : vector<4xf32>
    %i2 = llvm.mlir.constant(2 : i64) : i64
    %e = llvm.extractelement %sum[%i2 : i64] : vector<4xf32>
    %i0 = llvm.mlir.constant(0 : i32) : i32
    %ins = llvm.insertelement %e, %a[%i0 : i32] : vector<4xf32>
    %sh = llvm.shufflevector %a, %b [7, 0, 5, 2] : vector<4xf32>
    %fmax = llvm.intr.vector.reduce.fmax(%b) : (vector<4xf32>) -> f32
    %start = llvm.mlir.constant(0.5 : f32) : f32
    %fadd = "llvm.intr.vector.reduce.fadd"(%start, %a) <{fastmathFlags = #llvm.fastmath<none>}> : (f32, vector<4xf32>) -> f32
    %r0 = llvm.mlir.undef : !llvm.struct<(vector<4xf32>, f32, vector<4xf32>, f32, f32)>
    %r1 = llvm.insertvalue %ins, %r0[0] : !llvm.struct<(vector<4xf32>, f32, vector<4xf32>, f32, f32)>
    %r2 = llvm.insertvalue %e, %r1[1] : !llvm.struct<(vector<4xf32>, f32, vector<4xf32>, f32, f32)>
    %r3 = llvm.insertvalue %sh, %r2[2] : !llvm.struct<(vector<4xf32>, f32, vector<4xf32>, f32, f32)>
    %r4 = llvm.insertvalue %fmax, %r3[3] : !llvm.struct<(vector<4xf32>, f32, vector<4xf32>, f32, f32)>
    %r5 = llvm.insertvalue %fadd, %r4[4] : !llvm.struct<(vector<4xf32>, f32, vector<4xf32>, f32, f32)>
    llvm.return %r5 : !llvm.struct<(vector<4xf32>, f32, vector<4xf32>, f32, f32)>
  }

  // Store a vector<4xi8> into an i32 slot, read it back as i32 (little-endian), bitcast
  // an i64 to vector<2xi32>, and reduce an integer vector.
  llvm.func @vector_memory(%v: vector<4xi8>, %w: i64) -> !llvm.struct<(i32, i32, vector<2xi32>, i32, vector<4xi1>)> {
    %c1 = llvm.mlir.constant(1 : i32) : i32
    %p = llvm.alloca %c1 x i32 : (i32) -> !llvm.ptr
    llvm.store %v, %p : vector<4xi8>, !llvm.ptr
    %x = llvm.load %p : !llvm.ptr -> i32
    %y = llvm.bitcast %v : vector<4xi8> to i32
    %z = llvm.bitcast %w : i64 to vector<2xi32>
    %zs = "llvm.intr.vector.reduce.add"(%z) : (vector<2xi32>) -> i32
    %zero = llvm.mlir.zero : vector<4xi8>
    %lt = llvm.icmp "slt" %v, %zero : vector<4xi8>
    %r0 = llvm.mlir.undef : !llvm.struct<(i32, i32, vector<2xi32>, i32, vector<4xi1>)>
    %r1 = llvm.insertvalue %x, %r0[0] : !llvm.struct<(i32, i32, vector<2xi32>, i32, vector<4xi1>)>
    %r2 = llvm.insertvalue %y, %r1[1] : !llvm.struct<(i32, i32, vector<2xi32>, i32, vector<4xi1>)>
    %r3 = llvm.insertvalue %z, %r2[2] : !llvm.struct<(i32, i32, vector<2xi32>, i32, vector<4xi1>)>
    %r4 = llvm.insertvalue %zs, %r3[3] : !llvm.struct<(i32, i32, vector<2xi32>, i32, vector<4xi1>)>
    %r5 = llvm.insertvalue %lt, %r4[4] : !llvm.struct<(i32, i32, vector<2xi32>, i32, vector<4xi1>)>
    llvm.return %r5 : !llvm.struct<(i32, i32, vector<2xi32>, i32, vector<4xi1>)>
  }
}
