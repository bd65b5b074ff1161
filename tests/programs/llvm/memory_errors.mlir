// Each function makes one bad access; the interpreter reports it and names the op.
module {
  llvm.func @malloc(i64) -> !llvm.ptr
  llvm.func @free(!llvm.ptr)

  llvm.func @out_of_bounds() -> i32 {
    %c4 = llvm.mlir.constant(4 : i32) : i32
    %p = llvm.alloca %c4 x i32 : (i32) -> !llvm.ptr
    %q = llvm.getelementptr %p[4] : (!llvm.ptr) -> !llvm.ptr, i32
    %v = llvm.load %q : !llvm.ptr -> i32
    llvm.return %v : i32
  }
  llvm.func @null_deref() -> f32 {
    %p = llvm.mlir.zero : !llvm.ptr
    %v = llvm.load %p : !llvm.ptr -> f32
    llvm.return %v : f32
  }
  llvm.func @use_after_free() {
    %n = llvm.mlir.constant(16 : i64) : i64
    %p = llvm.call @malloc(%n) : (i64) -> !llvm.ptr
    llvm.call @free(%p) : (!llvm.ptr) -> ()
    %v = llvm.mlir.constant(1 : i64) : i64
    llvm.store %v, %p : i64, !llvm.ptr
    llvm.return
  }
  llvm.func @double_free() {
    %n = llvm.mlir.constant(16 : i64) : i64
    %p = llvm.call @malloc(%n) : (i64) -> !llvm.ptr
    llvm.call @free(%p) : (!llvm.ptr) -> ()
    llvm.call @free(%p) : (!llvm.ptr) -> ()
    llvm.return
  }
  llvm.func @escape() -> !llvm.ptr {
    %c1 = llvm.mlir.constant(1 : i32) : i32
    %p = llvm.alloca %c1 x i64 : (i32) -> !llvm.ptr
    llvm.return %p : !llvm.ptr
  }
  llvm.func @use_after_return() -> i64 {
    %p = llvm.call @escape() : () -> !llvm.ptr
    %v = llvm.load %p : !llvm.ptr -> i64
    llvm.return %v : i64
  }
  llvm.func @straddle() -> i64 {
    %c4 = llvm.mlir.constant(4 : i32) : i32
    %p = llvm.alloca %c4 x i8 : (i32) -> !llvm.ptr
    %v = llvm.load %p : !llvm.ptr -> i64
    llvm.return %v : i64
  }
  llvm.func @memcpy_overflow() {
    %c4 = llvm.mlir.constant(4 : i32) : i32
    %n = llvm.mlir.constant(32 : i64) : i64
    %p = llvm.alloca %c4 x i32 : (i32) -> !llvm.ptr
    %q = llvm.alloca %c4 x i64 : (i32) -> !llvm.ptr
    "llvm.intr.memcpy"(%q, %p, %n) <{isVolatile = false}> : (!llvm.ptr, !llvm.ptr, i64) -> ()
    llvm.return
  }
  llvm.func @wild_pointer() -> i8 {
    %a = llvm.mlir.constant(12345 : i64) : i64
    %p = llvm.inttoptr %a : i64 to !llvm.ptr
    %v = llvm.load %p : !llvm.ptr -> i8
    llvm.return %v : i8
  }
}
