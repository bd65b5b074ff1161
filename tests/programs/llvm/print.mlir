// Printing as the lowered integration tests do: vector.print's calls (printOpen,
// printF32, printComma, printClose, printNewline, printI64), and printMemrefF32 of an
// unranked memref through the C interface wrapper func-to-llvm generates.
module {
  llvm.func @printF32(f32)
  llvm.func @printI64(i64)
  llvm.func @printOpen()
  llvm.func @printClose()
  llvm.func @printComma()
  llvm.func @printNewline()
  llvm.func @malloc(i64) -> !llvm.ptr
  llvm.func @printMemrefF32(%arg0: i64, %arg1: !llvm.ptr) attributes {sym_visibility = "private"} {
    %0 = llvm.mlir.undef : !llvm.struct<(i64, ptr)>
    %1 = llvm.insertvalue %arg0, %0[0] : !llvm.struct<(i64, ptr)>
    %2 = llvm.insertvalue %arg1, %1[1] : !llvm.struct<(i64, ptr)>
    %3 = llvm.mlir.constant(1 : i64) : i64
    %4 = llvm.alloca %3 x !llvm.struct<(i64, ptr)> : (i64) -> !llvm.ptr
    llvm.store %2, %4 : !llvm.struct<(i64, ptr)>, !llvm.ptr
    llvm.call @_mlir_ciface_printMemrefF32(%4) : (!llvm.ptr) -> ()
    llvm.return
  }
  llvm.func @_mlir_ciface_printMemrefF32(!llvm.ptr) attributes {sym_visibility = "private"}

  llvm.func @main() {
    %a = llvm.mlir.constant(1.5 : f32) : f32
    %b = llvm.mlir.constant(-2.0 : f32) : f32
    %n = llvm.mlir.constant(42 : i64) : i64
    llvm.call @printOpen() : () -> ()
    llvm.call @printF32(%a) : (f32) -> ()
    llvm.call @printComma() : () -> ()
    llvm.call @printF32(%b) : (f32) -> ()
    llvm.call @printClose() : () -> ()
    llvm.call @printNewline() : () -> ()
    llvm.call @printI64(%n) : (i64) -> ()
    llvm.call @printNewline() : () -> ()
    // a 2x3 memref holding 0, 1, ..., 5 as floats
    %c0 = llvm.mlir.constant(0 : i64) : i64
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %c2 = llvm.mlir.constant(2 : i64) : i64
    %c3 = llvm.mlir.constant(3 : i64) : i64
    %c6 = llvm.mlir.constant(6 : i64) : i64
    %null = llvm.mlir.zero : !llvm.ptr
    %end = llvm.getelementptr %null[%c6] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    %bytes = llvm.ptrtoint %end : !llvm.ptr to i64
    %buf = llvm.call @malloc(%bytes) : (i64) -> !llvm.ptr
    llvm.br ^fill(%c0 : i64)
  ^fill(%i: i64):
    %more = llvm.icmp "slt" %i, %c6 : i64
    llvm.cond_br %more, ^body, ^print
  ^body:
    %f = llvm.sitofp %i : i64 to f32
    %p = llvm.getelementptr %buf[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    llvm.store %f, %p : f32, !llvm.ptr
    %i1 = llvm.add %i, %c1 : i64
    llvm.br ^fill(%i1 : i64)
  ^print:
    %d0 = llvm.mlir.undef : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
    %d1 = llvm.insertvalue %buf, %d0[0] : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
    %d2 = llvm.insertvalue %buf, %d1[1] : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
    %d3 = llvm.insertvalue %c0, %d2[2] : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
    %d4 = llvm.insertvalue %c2, %d3[3, 0] : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
    %d5 = llvm.insertvalue %c3, %d4[3, 1] : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
    %d6 = llvm.insertvalue %c3, %d5[4, 0] : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
    %d7 = llvm.insertvalue %c1, %d6[4, 1] : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
    %slot = llvm.alloca %c1 x !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)> : (i64) -> !llvm.ptr
    llvm.store %d7, %slot : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>, !llvm.ptr
    llvm.call @printMemrefF32(%c2, %slot) : (i64, !llvm.ptr) -> ()
    llvm.return
  }
}
