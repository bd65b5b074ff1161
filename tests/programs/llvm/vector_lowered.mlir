"builtin.module"() ({
  "llvm.func"() <{CConv = #llvm.cconv<ccc>, function_type = !llvm.func<void (ptr, ptr, i64, i64, i64, ptr, ptr, i64, i64, i64, ptr, ptr, i64, i64, i64, ptr, ptr, i64, i64, i64, ptr, ptr, i64, i64, i64)>, linkage = #llvm.linkage<external>, sym_name = "vectors", visibility_ = 0 : i64}> ({
  ^bb0(%arg0: !llvm.ptr, %arg1: !llvm.ptr, %arg2: i64, %arg3: i64, %arg4: i64, %arg5: !llvm.ptr, %arg6: !llvm.ptr, %arg7: i64, %arg8: i64, %arg9: i64, %arg10: !llvm.ptr, %arg11: !llvm.ptr, %arg12: i64, %arg13: i64, %arg14: i64, %arg15: !llvm.ptr, %arg16: !llvm.ptr, %arg17: i64, %arg18: i64, %arg19: i64, %arg20: !llvm.ptr, %arg21: !llvm.ptr, %arg22: i64, %arg23: i64, %arg24: i64):
    %0 = "llvm.mlir.constant"() <{value = 0 : i32}> : () -> i32
    %1 = "llvm.mlir.poison"() : () -> vector<8xi32>
    %2 = "llvm.mlir.constant"() <{value = 3 : i64}> : () -> i64
    %3 = "llvm.mlir.constant"() <{value = 0.000000e+00 : f32}> : () -> f32
    %4 = "llvm.mlir.constant"() <{value = dense<0> : vector<8xi32>}> : () -> vector<8xi32>
    %5 = "llvm.load"(%arg1) <{alignment = 4 : i64, ordering = 0 : i64}> : (!llvm.ptr) -> vector<8xf32>
    %6 = "llvm.load"(%arg6) <{alignment = 4 : i64, ordering = 0 : i64}> : (!llvm.ptr) -> vector<8xf32>
    %7 = "llvm.intr.fmuladd"(%5, %6, %5) <{fastmathFlags = #llvm.fastmath<none>}> : (vector<8xf32>, vector<8xf32>, vector<8xf32>) -> vector<8xf32>
    %8 = "llvm.shufflevector"(%7, %6) <{mask = array<i32: 7, 6, 5, 4, 11, 10, 9, 8>}> : (vector<8xf32>, vector<8xf32>) -> vector<8xf32>
    %9 = "llvm.intr.maximum"(%8, %5) <{fastmathFlags = #llvm.fastmath<none>}> : (vector<8xf32>, vector<8xf32>) -> vector<8xf32>
    "llvm.store"(%9, %arg11) <{alignment = 4 : i64, ordering = 0 : i64}> : (vector<8xf32>, !llvm.ptr) -> ()
    %10 = "llvm.intr.vector.reduce.fadd"(%3, %9) <{fastmathFlags = #llvm.fastmath<none>}> : (f32, vector<8xf32>) -> f32
    %11 = "llvm.intr.vector.reduce.fmax"(%6) <{fastmathFlags = #llvm.fastmath<none>}> : (vector<8xf32>) -> f32
    %12 = "llvm.fadd"(%10, %11) <{fastmathFlags = #llvm.fastmath<none>}> : (f32, f32) -> f32
    "llvm.store"(%12, %arg16) <{ordering = 0 : i64}> : (f32, !llvm.ptr) -> ()
    %13 = "llvm.fptosi"(%9) : (vector<8xf32>) -> vector<8xi32>
    %14 = "llvm.extractelement"(%13, %2) : (vector<8xi32>, i64) -> i32
    %15 = "llvm.insertelement"(%1, %14, %0) : (vector<8xi32>, i32, i32) -> vector<8xi32>
    %16 = "llvm.shufflevector"(%15, %1) <{mask = array<i32: 0, 0, 0, 0, 0, 0, 0, 0>}> : (vector<8xi32>, vector<8xi32>) -> vector<8xi32>
    %17 = "llvm.add"(%13, %16) <{overflowFlags = 0 : i32}> : (vector<8xi32>, vector<8xi32>) -> vector<8xi32>
    %18 = "llvm.icmp"(%17, %16) <{predicate = 4 : i64}> : (vector<8xi32>, vector<8xi32>) -> vector<8xi1>
    %19 = "llvm.select"(%18, %17, %4) <{fastmathFlags = #llvm.fastmath<none>}> : (vector<8xi1>, vector<8xi32>, vector<8xi32>) -> vector<8xi32>
    "llvm.store"(%19, %arg21) <{alignment = 4 : i64, ordering = 0 : i64}> : (vector<8xi32>, !llvm.ptr) -> ()
    "llvm.return"() : () -> ()
  }) : () -> ()
}) {llvm.data_layout = "", llvm.target_triple = ""} : () -> ()

