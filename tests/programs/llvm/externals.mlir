// The C library functions a lowered program calls: aligned_alloc/calloc/free,
// memset/memcpy (and the intrinsics, with an overlapping memmove), printf, libm.
module {
  llvm.func @aligned_alloc(i64, i64) -> !llvm.ptr
  llvm.func @calloc(i64, i64) -> !llvm.ptr
  llvm.func @free(!llvm.ptr)
  llvm.func @memset(!llvm.ptr, i32, i64) -> !llvm.ptr
  llvm.func @memcpy(!llvm.ptr, !llvm.ptr, i64) -> !llvm.ptr
  llvm.func @printf(!llvm.ptr, ...) -> i32
  llvm.func @expf(f32) -> f32
  llvm.mlir.global internal constant @fmt("n=%d s=%s x=%.2f %5.1e%%\0A\00") {addr_space = 0 : i32}
  llvm.mlir.global internal constant @word("abc\00") {addr_space = 0 : i32}

  // Returns (address mod 64, bytes after the memsets/copies as i64 words, calloc'd word).
  llvm.func @buffers() -> !llvm.struct<(i64, i64, i64, i64, i64)> {
    %c64 = llvm.mlir.constant(64 : i64) : i64
    %c32 = llvm.mlir.constant(32 : i64) : i64
    %c16 = llvm.mlir.constant(16 : i64) : i64
    %c8 = llvm.mlir.constant(8 : i64) : i64
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %byte = llvm.mlir.constant(17 : i32) : i32
    %zero8 = llvm.mlir.constant(0 : i8) : i8
    %p = llvm.call @aligned_alloc(%c64, %c32) : (i64, i64) -> !llvm.ptr
    %pi = llvm.ptrtoint %p : !llvm.ptr to i64
    %mod = llvm.urem %pi, %c64 : i64
    %0 = llvm.call @memset(%p, %byte, %c16) : (!llvm.ptr, i32, i64) -> !llvm.ptr
    "llvm.intr.memset"(%p, %zero8, %c8) <{isVolatile = false}> : (!llvm.ptr, i8, i64) -> ()
    %q = llvm.getelementptr %p[16] : (!llvm.ptr) -> !llvm.ptr, i8
    %1 = llvm.call @memcpy(%q, %p, %c16) : (!llvm.ptr, !llvm.ptr, i64) -> !llvm.ptr
    %r = llvm.getelementptr %p[4] : (!llvm.ptr) -> !llvm.ptr, i8
    "llvm.intr.memmove"(%r, %p, %c8) <{isVolatile = false}> : (!llvm.ptr, !llvm.ptr, i64) -> ()
    %w0 = llvm.load %p : !llvm.ptr -> i64
    %p8 = llvm.getelementptr %p[1] : (!llvm.ptr) -> !llvm.ptr, i64
    %w1 = llvm.load %p8 : !llvm.ptr -> i64
    %p24 = llvm.getelementptr %p[3] : (!llvm.ptr) -> !llvm.ptr, i64
    %w3 = llvm.load %p24 : !llvm.ptr -> i64
    llvm.call @free(%p) : (!llvm.ptr) -> ()
    %z = llvm.call @calloc(%c1, %c8) : (i64, i64) -> !llvm.ptr
    %zw = llvm.load %z : !llvm.ptr -> i64
    %s0 = llvm.mlir.undef : !llvm.struct<(i64, i64, i64, i64, i64)>
    %s1 = llvm.insertvalue %mod, %s0[0] : !llvm.struct<(i64, i64, i64, i64, i64)>
    %s2 = llvm.insertvalue %w0, %s1[1] : !llvm.struct<(i64, i64, i64, i64, i64)>
    %s3 = llvm.insertvalue %w1, %s2[2] : !llvm.struct<(i64, i64, i64, i64, i64)>
    %s4 = llvm.insertvalue %w3, %s3[3] : !llvm.struct<(i64, i64, i64, i64, i64)>
    %s5 = llvm.insertvalue %zw, %s4[4] : !llvm.struct<(i64, i64, i64, i64, i64)>
    llvm.return %s5 : !llvm.struct<(i64, i64, i64, i64, i64)>
  }

  llvm.func @print(%x: f32) -> i32 {
    %fmt = llvm.mlir.addressof @fmt : !llvm.ptr
    %word = llvm.mlir.addressof @word : !llvm.ptr
    %n = llvm.mlir.constant(-42 : i32) : i32
    %d = llvm.fpext %x : f32 to f64
    %e = llvm.call @expf(%x) : (f32) -> f32
    %ed = llvm.fpext %e : f32 to f64
    %r = llvm.call @printf(%fmt, %n, %word, %d, %ed) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr, i32, !llvm.ptr, f64, f64) -> i32
    llvm.return %r : i32
  }
}
