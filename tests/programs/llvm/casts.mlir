// Casts, including the edges: float-to-int overflow and NaN (poison: the interpreter
// saturates, NaN -> 0), zext/sext of i1, trunc wrapping, unsigned conversions.
module {
  llvm.func @fptosi(%x: vector<6xf32>) -> vector<6xi8> {
    %0 = llvm.fptosi %x : vector<6xf32> to vector<6xi8>
    llvm.return %0 : vector<6xi8>
  }
  llvm.func @fptoui(%x: vector<6xf32>) -> vector<6xi16> {
    %0 = llvm.fptoui %x : vector<6xf32> to vector<6xi16>
    llvm.return %0 : vector<6xi16>
  }
  llvm.func @int_casts(%a: i32, %c: i1) -> !llvm.struct<(i8, i64, i64, i32, i32, f32, f32, i1)> {
    %t = llvm.trunc %a : i32 to i8
    %z = llvm.zext %a : i32 to i64
    %s = llvm.sext %a : i32 to i64
    %zc = llvm.zext %c : i1 to i32
    %sc = llvm.sext %c : i1 to i32
    %u = llvm.uitofp %a : i32 to f32
    %sf = llvm.sitofp %c : i1 to f32
    %tb = llvm.trunc %a : i32 to i1
    %r0 = llvm.mlir.undef : !llvm.struct<(i8, i64, i64, i32, i32, f32, f32, i1)>
    %r1 = llvm.insertvalue %t, %r0[0] : !llvm.struct<(i8, i64, i64, i32, i32, f32, f32, i1)>
    %r2 = llvm.insertvalue %z, %r1[1] : !llvm.struct<(i8, i64, i64, i32, i32, f32, f32, i1)>
    %r3 = llvm.insertvalue %s, %r2[2] : !llvm.struct<(i8, i64, i64, i32, i32, f32, f32, i1)>
    %r4 = llvm.insertvalue %zc, %r3[3] : !llvm.struct<(i8, i64, i64, i32, i32, f32, f32, i1)>
    %r5 = llvm.insertvalue %sc, %r4[4] : !llvm.struct<(i8, i64, i64, i32, i32, f32, f32, i1)>
    %r6 = llvm.insertvalue %u, %r5[5] : !llvm.struct<(i8, i64, i64, i32, i32, f32, f32, i1)>
    %r7 = llvm.insertvalue %sf, %r6[6] : !llvm.struct<(i8, i64, i64, i32, i32, f32, f32, i1)>
    %r8 = llvm.insertvalue %tb, %r7[7] : !llvm.struct<(i8, i64, i64, i32, i32, f32, f32, i1)>
    llvm.return %r8 : !llvm.struct<(i8, i64, i64, i32, i32, f32, f32, i1)>
  }
  llvm.func @float_casts(%x: f64) -> !llvm.struct<(f32, f16, i64, f64)> {
    %0 = llvm.fptrunc %x : f64 to f32
    %1 = llvm.fptrunc %x : f64 to f16
    %2 = llvm.bitcast %x : f64 to i64
    %3 = llvm.fpext %1 : f16 to f64
    %r0 = llvm.mlir.undef : !llvm.struct<(f32, f16, i64, f64)>
    %r1 = llvm.insertvalue %0, %r0[0] : !llvm.struct<(f32, f16, i64, f64)>
    %r2 = llvm.insertvalue %1, %r1[1] : !llvm.struct<(f32, f16, i64, f64)>
    %r3 = llvm.insertvalue %2, %r2[2] : !llvm.struct<(f32, f16, i64, f64)>
    %r4 = llvm.insertvalue %3, %r3[3] : !llvm.struct<(f32, f16, i64, f64)>
    llvm.return %r4 : !llvm.struct<(f32, f16, i64, f64)>
  }
  llvm.func @int_arith(%a: i32, %b: i32) -> !llvm.array<8 x i32> {
    %0 = llvm.sdiv %a, %b : i32
    %1 = llvm.udiv %a, %b : i32
    %2 = llvm.srem %a, %b : i32
    %3 = llvm.urem %a, %b : i32
    %4 = llvm.ashr %a, %b : i32
    %5 = llvm.lshr %a, %b : i32
    %6 = llvm.shl %a, %b : i32
    %7 = llvm.mul %a, %a : i32
    %r = llvm.mlir.undef : !llvm.array<8 x i32>
    %r0 = llvm.insertvalue %0, %r[0] : !llvm.array<8 x i32>
    %r1 = llvm.insertvalue %1, %r0[1] : !llvm.array<8 x i32>
    %r2 = llvm.insertvalue %2, %r1[2] : !llvm.array<8 x i32>
    %r3 = llvm.insertvalue %3, %r2[3] : !llvm.array<8 x i32>
    %r4 = llvm.insertvalue %4, %r3[4] : !llvm.array<8 x i32>
    %r5 = llvm.insertvalue %5, %r4[5] : !llvm.array<8 x i32>
    %r6 = llvm.insertvalue %6, %r5[6] : !llvm.array<8 x i32>
    %r7 = llvm.insertvalue %7, %r6[7] : !llvm.array<8 x i32>
    llvm.return %r7 : !llvm.array<8 x i32>
  }
  llvm.func @i1_arith(%a: i1, %b: i1) -> vector<3xi1> {
    %0 = llvm.add %a, %b : i1
    %1 = llvm.sub %a, %b : i1
    %2 = llvm.mul %a, %b : i1
    %v = llvm.mlir.undef : vector<3xi1>
    %i0 = llvm.mlir.constant(0 : i32) : i32
    %i1 = llvm.mlir.constant(1 : i32) : i32
    %i2 = llvm.mlir.constant(2 : i32) : i32
    %v0 = llvm.insertelement %0, %v[%i0 : i32] : vector<3xi1>
    %v1 = llvm.insertelement %1, %v0[%i1 : i32] : vector<3xi1>
    %v2 = llvm.insertelement %2, %v1[%i2 : i32] : vector<3xi1>
    llvm.return %v2 : vector<3xi1>
  }
  llvm.func @compare(%x: vector<4xf32>, %y: vector<4xf32>, %a: vector<4xi32>, %b: vector<4xi32>) -> !llvm.struct<(vector<4xi1>, vector<4xi1>, vector<4xi1>, vector<4xi1>)> {
    %0 = llvm.fcmp "olt" %x, %y : vector<4xf32>
    %1 = llvm.fcmp "ult" %x, %y : vector<4xf32>
    %2 = llvm.icmp "ult" %a, %b : vector<4xi32>
    %3 = llvm.icmp "sgt" %a, %b : vector<4xi32>
    %r0 = llvm.mlir.undef : !llvm.struct<(vector<4xi1>, vector<4xi1>, vector<4xi1>, vector<4xi1>)>
    %r1 = llvm.insertvalue %0, %r0[0] : !llvm.struct<(vector<4xi1>, vector<4xi1>, vector<4xi1>, vector<4xi1>)>
    %r2 = llvm.insertvalue %1, %r1[1] : !llvm.struct<(vector<4xi1>, vector<4xi1>, vector<4xi1>, vector<4xi1>)>
    %r3 = llvm.insertvalue %2, %r2[2] : !llvm.struct<(vector<4xi1>, vector<4xi1>, vector<4xi1>, vector<4xi1>)>
    %r4 = llvm.insertvalue %3, %r3[3] : !llvm.struct<(vector<4xi1>, vector<4xi1>, vector<4xi1>, vector<4xi1>)>
    llvm.return %r4 : !llvm.struct<(vector<4xi1>, vector<4xi1>, vector<4xi1>, vector<4xi1>)>
  }
}
