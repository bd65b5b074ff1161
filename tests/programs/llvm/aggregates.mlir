// Structs and arrays as values (insertvalue/extractvalue) and in memory (padding,
// GEP field indices), globals: strings, dense arrays, initializer regions, constants.
module {
  llvm.mlir.global internal constant @greeting("hello\0A\00") {addr_space = 0 : i32}
  llvm.mlir.global internal constant @table(dense<[10, 20, 30, 40]> : tensor<4xi32>) {addr_space = 0 : i32} : !llvm.array<4 x i32>
  llvm.mlir.global internal @matrix(dense<[[1.5, 2.5], [3.5, 4.5]]> : tensor<2x2xf64>) {addr_space = 0 : i32} : !llvm.array<2 x array<2 x f64>>
  llvm.mlir.global internal @counter(7 : i64) {addr_space = 0 : i32} : i64
  llvm.mlir.global internal @pair() {addr_space = 0 : i32} : !llvm.struct<(i8, f64, ptr)> {
    %0 = llvm.mlir.undef : !llvm.struct<(i8, f64, ptr)>
    %1 = llvm.mlir.constant(-3 : i8) : i8
    %2 = llvm.insertvalue %1, %0[0] : !llvm.struct<(i8, f64, ptr)>
    %3 = llvm.mlir.constant(2.25 : f64) : f64
    %4 = llvm.insertvalue %3, %2[1] : !llvm.struct<(i8, f64, ptr)>
    %5 = llvm.mlir.addressof @counter : !llvm.ptr
    %6 = llvm.insertvalue %5, %4[2] : !llvm.struct<(i8, f64, ptr)>
    llvm.return %6 : !llvm.struct<(i8, f64, ptr)>
  }
  llvm.func @printString(!llvm.ptr)

  // A struct value built and taken apart.
  llvm.func @struct_value(%a: i32, %b: f32) -> f32 {
    %0 = llvm.mlir.undef : !llvm.struct<(i32, array<2 x f32>)>
    %1 = llvm.insertvalue %a, %0[0] : !llvm.struct<(i32, array<2 x f32>)>
    %2 = llvm.insertvalue %b, %1[1, 0] : !llvm.struct<(i32, array<2 x f32>)>
    %3 = llvm.insertvalue %b, %2[1, 1] : !llvm.struct<(i32, array<2 x f32>)>
    %4 = llvm.extractvalue %3[0] : !llvm.struct<(i32, array<2 x f32>)>
    %5 = llvm.extractvalue %3[1, 1] : !llvm.struct<(i32, array<2 x f32>)>
    %6 = llvm.sitofp %4 : i32 to f32
    %7 = llvm.fadd %6, %5 : f32
    %8 = llvm.extractvalue %2[1, 1] : !llvm.struct<(i32, array<2 x f32>)>
    %9 = llvm.fadd %7, %8 : f32
    llvm.return %9 : f32
  }

  // A struct with padding in memory: stores through field GEPs, loads the whole struct
  // back, and returns the byte offset of field 2 (i8 at 0, i32 at 4, f64 at 8, i16 at 16).
  llvm.func @struct_memory() -> !llvm.struct<(i64, i32, f64, i16)> {
    %c1 = llvm.mlir.constant(1 : i32) : i32
    %p = llvm.alloca %c1 x !llvm.struct<(i8, i32, f64, i16)> : (i32) -> !llvm.ptr
    %v0 = llvm.mlir.constant(5 : i8) : i8
    %v1 = llvm.mlir.constant(-6 : i32) : i32
    %v2 = llvm.mlir.constant(0.125 : f64) : f64
    %v3 = llvm.mlir.constant(300 : i16) : i16
    %f0 = llvm.getelementptr %p[0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(i8, i32, f64, i16)>
    llvm.store %v0, %f0 : i8, !llvm.ptr
    %f1 = llvm.getelementptr %p[0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(i8, i32, f64, i16)>
    llvm.store %v1, %f1 : i32, !llvm.ptr
    %f2 = llvm.getelementptr %p[0, 2] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(i8, i32, f64, i16)>
    llvm.store %v2, %f2 : f64, !llvm.ptr
    %f3 = llvm.getelementptr %p[0, 3] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(i8, i32, f64, i16)>
    llvm.store %v3, %f3 : i16, !llvm.ptr
    %s = llvm.load %p : !llvm.ptr -> !llvm.struct<(i8, i32, f64, i16)>
    %pi = llvm.ptrtoint %p : !llvm.ptr to i64
    %f2i = llvm.ptrtoint %f2 : !llvm.ptr to i64
    %off = llvm.sub %f2i, %pi : i64
    %x1 = llvm.extractvalue %s[1] : !llvm.struct<(i8, i32, f64, i16)>
    %x2 = llvm.extractvalue %s[2] : !llvm.struct<(i8, i32, f64, i16)>
    %x3 = llvm.extractvalue %s[3] : !llvm.struct<(i8, i32, f64, i16)>
    %r0 = llvm.mlir.undef : !llvm.struct<(i64, i32, f64, i16)>
    %r1 = llvm.insertvalue %off, %r0[0] : !llvm.struct<(i64, i32, f64, i16)>
    %r2 = llvm.insertvalue %x1, %r1[1] : !llvm.struct<(i64, i32, f64, i16)>
    %r3 = llvm.insertvalue %x2, %r2[2] : !llvm.struct<(i64, i32, f64, i16)>
    %r4 = llvm.insertvalue %x3, %r3[3] : !llvm.struct<(i64, i32, f64, i16)>
    llvm.return %r4 : !llvm.struct<(i64, i32, f64, i16)>
  }

  // Globals: table[2] + matrix[1][0] + counter (after an increment) + pair.f1 + *pair.ptr, and the string printed.
  llvm.func @globals() -> f64 {
    %s = llvm.mlir.addressof @greeting : !llvm.ptr
    llvm.call @printString(%s) : (!llvm.ptr) -> ()
    %t = llvm.mlir.addressof @table : !llvm.ptr
    %t2 = llvm.getelementptr inbounds %t[0, 2] : (!llvm.ptr) -> !llvm.ptr, !llvm.array<4 x i32>
    %a = llvm.load %t2 : !llvm.ptr -> i32
    %m = llvm.mlir.addressof @matrix : !llvm.ptr
    %m10 = llvm.getelementptr %m[0, 1, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.array<2 x array<2 x f64>>
    %b = llvm.load %m10 : !llvm.ptr -> f64
    %c = llvm.mlir.addressof @counter : !llvm.ptr
    %cv = llvm.load %c : !llvm.ptr -> i64
    %one = llvm.mlir.constant(1 : i64) : i64
    %cv1 = llvm.add %cv, %one : i64
    llvm.store %cv1, %c : i64, !llvm.ptr
    %pr = llvm.mlir.addressof @pair : !llvm.ptr
    %pv = llvm.load %pr : !llvm.ptr -> !llvm.struct<(i8, f64, ptr)>
    %pf = llvm.extractvalue %pv[1] : !llvm.struct<(i8, f64, ptr)>
    %pp = llvm.extractvalue %pv[2] : !llvm.struct<(i8, f64, ptr)>
    %pc = llvm.load %pp : !llvm.ptr -> i64
    %af = llvm.sitofp %a : i32 to f64
    %cf = llvm.sitofp %pc : i64 to f64
    %s1 = llvm.fadd %af, %b : f64
    %s2 = llvm.fadd %s1, %cf : f64
    %s3 = llvm.fadd %s2, %pf : f64
    llvm.return %s3 : f64
  }

  // Writing to a constant global is an error.
  llvm.func @write_constant() {
    %t = llvm.mlir.addressof @table : !llvm.ptr
    %v = llvm.mlir.constant(1 : i32) : i32
    llvm.store %v, %t : i32, !llvm.ptr
    llvm.return
  }
}
