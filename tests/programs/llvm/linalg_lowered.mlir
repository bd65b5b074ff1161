module attributes {llvm.data_layout = "", llvm.target_triple = ""} {
  llvm.func @matmul(%arg0: !llvm.ptr, %arg1: !llvm.ptr, %arg2: i64, %arg3: i64, %arg4: i64, %arg5: i64, %arg6: i64, %arg7: !llvm.ptr, %arg8: !llvm.ptr, %arg9: i64, %arg10: i64, %arg11: i64, %arg12: i64, %arg13: i64, %arg14: !llvm.ptr, %arg15: !llvm.ptr, %arg16: i64, %arg17: i64, %arg18: i64, %arg19: i64, %arg20: i64) {
    %0 = llvm.mlir.constant(5 : i64) : i64
    %1 = llvm.mlir.constant(6 : i64) : i64
    %2 = llvm.mlir.constant(1 : i64) : i64
    %3 = llvm.mlir.constant(4 : i64) : i64
    %4 = llvm.mlir.constant(0 : i64) : i64
    llvm.br ^bb1(%4 : i64)
  ^bb1(%5: i64):  // 2 preds: ^bb0, ^bb8
    %6 = llvm.icmp "slt" %5, %3 : i64
    llvm.cond_br %6, ^bb2, ^bb9
  ^bb2:  // pred: ^bb1
    llvm.br ^bb3(%4 : i64)
  ^bb3(%7: i64):  // 2 preds: ^bb2, ^bb7
    %8 = llvm.icmp "slt" %7, %1 : i64
    llvm.cond_br %8, ^bb4, ^bb8
  ^bb4:  // pred: ^bb3
    llvm.br ^bb5(%4 : i64)
  ^bb5(%9: i64):  // 2 preds: ^bb4, ^bb6
    %10 = llvm.icmp "slt" %9, %0 : i64
    llvm.cond_br %10, ^bb6, ^bb7
  ^bb6:  // pred: ^bb5
    %11 = llvm.mul %5, %0 overflow<nsw, nuw> : i64
    %12 = llvm.add %11, %9 overflow<nsw, nuw> : i64
    %13 = llvm.getelementptr inbounds|nuw %arg1[%12] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    %14 = llvm.load %13 : !llvm.ptr -> f32
    %15 = llvm.mul %9, %1 overflow<nsw, nuw> : i64
    %16 = llvm.add %15, %7 overflow<nsw, nuw> : i64
    %17 = llvm.getelementptr inbounds|nuw %arg8[%16] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    %18 = llvm.load %17 : !llvm.ptr -> f32
    %19 = llvm.mul %5, %1 overflow<nsw, nuw> : i64
    %20 = llvm.add %19, %7 overflow<nsw, nuw> : i64
    %21 = llvm.getelementptr inbounds|nuw %arg15[%20] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    %22 = llvm.load %21 : !llvm.ptr -> f32
    %23 = llvm.fmul %14, %18 : f32
    %24 = llvm.fadd %22, %23 : f32
    %25 = llvm.mul %5, %1 overflow<nsw, nuw> : i64
    %26 = llvm.add %25, %7 overflow<nsw, nuw> : i64
    %27 = llvm.getelementptr inbounds|nuw %arg15[%26] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    llvm.store %24, %27 : f32, !llvm.ptr
    %28 = llvm.add %9, %2 : i64
    llvm.br ^bb5(%28 : i64)
  ^bb7:  // pred: ^bb5
    %29 = llvm.add %7, %2 : i64
    llvm.br ^bb3(%29 : i64)
  ^bb8:  // pred: ^bb3
    %30 = llvm.add %5, %2 : i64
    llvm.br ^bb1(%30 : i64)
  ^bb9:  // pred: ^bb1
    llvm.return
  }
  llvm.func @elementwise(%arg0: !llvm.ptr, %arg1: !llvm.ptr, %arg2: i64, %arg3: i64, %arg4: i64, %arg5: !llvm.ptr, %arg6: !llvm.ptr, %arg7: i64, %arg8: i64, %arg9: i64, %arg10: !llvm.ptr, %arg11: !llvm.ptr, %arg12: i64, %arg13: i64, %arg14: i64, %arg15: !llvm.ptr, %arg16: !llvm.ptr, %arg17: i64, %arg18: i64, %arg19: i64) {
    %0 = llvm.mlir.constant(1 : i64) : i64
    %1 = llvm.mlir.constant(8 : i64) : i64
    %2 = llvm.mlir.constant(0 : i64) : i64
    %3 = llvm.mlir.constant(0.000000e+00 : f32) : f32
    %4 = llvm.mlir.constant(3 : i32) : i32
    llvm.br ^bb1(%2 : i64)
  ^bb1(%5: i64):  // 2 preds: ^bb0, ^bb2
    %6 = llvm.icmp "slt" %5, %1 : i64
    llvm.cond_br %6, ^bb2, ^bb3
  ^bb2:  // pred: ^bb1
    %7 = llvm.getelementptr inbounds|nuw %arg1[%5] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    %8 = llvm.load %7 : !llvm.ptr -> f32
    %9 = llvm.getelementptr inbounds|nuw %arg6[%5] : (!llvm.ptr, i64) -> !llvm.ptr, i32
    %10 = llvm.load %9 : !llvm.ptr -> i32
    %11 = llvm.intr.maximum(%8, %3) : (f32, f32) -> f32
    %12 = llvm.intr.exp(%8) : (f32) -> f32
    %13 = llvm.fadd %11, %12 : f32
    %14 = llvm.sitofp %10 : i32 to f32
    %15 = llvm.fmul %13, %14 : f32
    %16 = llvm.sdiv %10, %4 : i32
    %17 = llvm.srem %10, %4 : i32
    %18 = llvm.ashr %10, %4 : i32
    %19 = llvm.add %16, %17 : i32
    %20 = llvm.add %19, %18 : i32
    %21 = llvm.getelementptr inbounds|nuw %arg11[%5] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    llvm.store %15, %21 : f32, !llvm.ptr
    %22 = llvm.getelementptr inbounds|nuw %arg16[%5] : (!llvm.ptr, i64) -> !llvm.ptr, i32
    llvm.store %20, %22 : i32, !llvm.ptr
    %23 = llvm.add %5, %0 : i64
    llvm.br ^bb1(%23 : i64)
  ^bb3:  // pred: ^bb1
    llvm.return
  }
}

