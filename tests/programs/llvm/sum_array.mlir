// Fill a heap array with i*3 (malloc), sum it with a loop carrying the sum as a block
// argument, free it; the same on a stack array (alloca) of f32 with a dynamic GEP.
module {
  llvm.func @malloc(i64) -> !llvm.ptr
  llvm.func @free(!llvm.ptr)

  llvm.func @sum_heap(%n: i64) -> i64 {
    %c0 = llvm.mlir.constant(0 : i64) : i64
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %c3 = llvm.mlir.constant(3 : i64) : i64
    %c8 = llvm.mlir.constant(8 : i64) : i64
    %bytes = llvm.mul %n, %c8 : i64
    %p = llvm.call @malloc(%bytes) : (i64) -> !llvm.ptr
    llvm.br ^fill(%c0 : i64)
  ^fill(%i: i64):
    %more = llvm.icmp "slt" %i, %n : i64
    llvm.cond_br %more, ^fill_body, ^sum(%c0, %c0 : i64, i64)
  ^fill_body:
    %v = llvm.mul %i, %c3 : i64
    %q = llvm.getelementptr inbounds %p[%i] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    llvm.store %v, %q : i64, !llvm.ptr
    %i1 = llvm.add %i, %c1 : i64
    llvm.br ^fill(%i1 : i64)
  ^sum(%j: i64, %acc: i64):
    %go = llvm.icmp "ult" %j, %n : i64
    llvm.cond_br %go, ^sum_body, ^done
  ^sum_body:
    %r = llvm.getelementptr %p[%j] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %x = llvm.load %r : !llvm.ptr -> i64
    %acc1 = llvm.add %acc, %x : i64
    %j1 = llvm.add %j, %c1 : i64
    llvm.br ^sum(%j1, %acc1 : i64, i64)
  ^done:
    llvm.call @free(%p) : (!llvm.ptr) -> ()
    llvm.return %acc : i64
  }

  llvm.func @sum_stack() -> f32 {
    %c0 = llvm.mlir.constant(0 : i32) : i32
    %c1 = llvm.mlir.constant(1 : i32) : i32
    %c5 = llvm.mlir.constant(5 : i32) : i32
    %zero = llvm.mlir.constant(0.0 : f32) : f32
    %half = llvm.mlir.constant(0.5 : f32) : f32
    %buf = llvm.alloca %c5 x f32 {alignment = 16 : i64} : (i32) -> !llvm.ptr
    llvm.br ^fill(%c0 : i32)
  ^fill(%i: i32):
    %more = llvm.icmp "slt" %i, %c5 : i32
    llvm.cond_br %more, ^fill_body, ^sum(%c0, %zero : i32, f32)
  ^fill_body:
    %f = llvm.sitofp %i : i32 to f32
    %v = llvm.fadd %f, %half : f32
    %q = llvm.getelementptr %buf[%i] : (!llvm.ptr, i32) -> !llvm.ptr, f32
    llvm.store %v, %q : f32, !llvm.ptr
    %i1 = llvm.add %i, %c1 overflow<nsw> : i32
    llvm.br ^fill(%i1 : i32)
  ^sum(%j: i32, %acc: f32):
    %go = llvm.icmp "slt" %j, %c5 : i32
    llvm.cond_br %go, ^sum_body, ^done
  ^sum_body:
    %r = llvm.getelementptr %buf[%j] : (!llvm.ptr, i32) -> !llvm.ptr, f32
    %x = llvm.load %r : !llvm.ptr -> f32
    %acc1 = llvm.fadd %acc, %x : f32
    %j1 = llvm.add %j, %c1 : i32
    llvm.br ^sum(%j1, %acc1 : i32, f32)
  ^done:
    llvm.return %acc : f32
  }
}
