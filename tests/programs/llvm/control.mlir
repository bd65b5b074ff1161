// switch with case operands, recursion, calls through a function pointer, select,
// and unreachable.
module {
  llvm.func @classify(%x: i32) -> i32 {
    %ten = llvm.mlir.constant(10 : i32) : i32
    llvm.switch %x : i32, ^default(%ten : i32) [
      0: ^zero,
      1: ^small(%x : i32),
      2: ^small(%x : i32),
      -1: ^neg
    ]
  ^zero:
    %c100 = llvm.mlir.constant(100 : i32) : i32
    llvm.return %c100 : i32
  ^small(%v: i32):
    %c200 = llvm.mlir.constant(200 : i32) : i32
    %r = llvm.add %c200, %v : i32
    llvm.return %r : i32
  ^neg:
    %c300 = llvm.mlir.constant(300 : i32) : i32
    llvm.return %c300 : i32
  ^default(%d: i32):
    %r2 = llvm.mul %d, %x : i32
    llvm.return %r2 : i32
  }

  llvm.func @fact(%n: i64) -> i64 {
    %one = llvm.mlir.constant(1 : i64) : i64
    %le = llvm.icmp "sle" %n, %one : i64
    llvm.cond_br %le, ^base, ^rec
  ^base:
    llvm.return %one : i64
  ^rec:
    %m = llvm.sub %n, %one : i64
    %f = llvm.call @fact(%m) : (i64) -> i64
    %r = llvm.mul %n, %f : i64
    llvm.return %r : i64
  }

  llvm.func @twice(%x: i64) -> i64 {
    %r = llvm.add %x, %x : i64
    llvm.return %r : i64
  }

  llvm.func @indirect(%pick: i1, %x: i64) -> i64 {
    %f = llvm.mlir.addressof @fact : !llvm.ptr
    %t = llvm.mlir.addressof @twice : !llvm.ptr
    %g = llvm.select %pick, %f, %t : i1, !llvm.ptr
    %r = llvm.call %g(%x) : !llvm.ptr, (i64) -> i64
    llvm.return %r : i64
  }

  llvm.func @dead(%x: i32) -> i32 {
    %z = llvm.mlir.constant(0 : i32) : i32
    %ok = llvm.icmp "sge" %x, %z : i32
    llvm.cond_br %ok, ^fine, ^bad
  ^fine:
    llvm.return %x : i32
  ^bad:
    llvm.unreachable
  }
}
