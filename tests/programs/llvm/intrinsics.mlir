// Math and integer intrinsics, elementwise on vectors.
module {
  llvm.func @float_intrinsics(%x: vector<6xf32>, %y: vector<6xf32>) -> !llvm.array<10 x vector<6xf32>> {
    %0 = llvm.intr.fabs(%x) : (vector<6xf32>) -> vector<6xf32>
    %1 = llvm.intr.sqrt(%0) : (vector<6xf32>) -> vector<6xf32>
    %2 = llvm.intr.minnum(%x, %y) : (vector<6xf32>, vector<6xf32>) -> vector<6xf32>
    %3 = llvm.intr.maximum(%x, %y) : (vector<6xf32>, vector<6xf32>) -> vector<6xf32>
    %4 = llvm.intr.round(%x) : (vector<6xf32>) -> vector<6xf32>
    %5 = llvm.intr.roundeven(%x) : (vector<6xf32>) -> vector<6xf32>
    %6 = llvm.intr.copysign(%y, %x) : (vector<6xf32>, vector<6xf32>) -> vector<6xf32>
    %7 = llvm.intr.fma(%x, %y, %x) : (vector<6xf32>, vector<6xf32>, vector<6xf32>) -> vector<6xf32>
    %8 = llvm.intr.pow(%0, %y) : (vector<6xf32>, vector<6xf32>) -> vector<6xf32>
    %9 = llvm.intr.minimum(%x, %y) : (vector<6xf32>, vector<6xf32>) -> vector<6xf32>
    %a0 = llvm.mlir.undef : !llvm.array<10 x vector<6xf32>>
    %a1 = llvm.insertvalue %0, %a0[0] : !llvm.array<10 x vector<6xf32>>
    %a2 = llvm.insertvalue %1, %a1[1] : !llvm.array<10 x vector<6xf32>>
    %a3 = llvm.insertvalue %2, %a2[2] : !llvm.array<10 x vector<6xf32>>
    %a4 = llvm.insertvalue %3, %a3[3] : !llvm.array<10 x vector<6xf32>>
    %a5 = llvm.insertvalue %4, %a4[4] : !llvm.array<10 x vector<6xf32>>
    %a6 = llvm.insertvalue %5, %a5[5] : !llvm.array<10 x vector<6xf32>>
    %a7 = llvm.insertvalue %6, %a6[6] : !llvm.array<10 x vector<6xf32>>
    %a8 = llvm.insertvalue %7, %a7[7] : !llvm.array<10 x vector<6xf32>>
    %a9 = llvm.insertvalue %8, %a8[8] : !llvm.array<10 x vector<6xf32>>
    %a10 = llvm.insertvalue %9, %a9[9] : !llvm.array<10 x vector<6xf32>>
    llvm.return %a10 : !llvm.array<10 x vector<6xf32>>
  }

  llvm.func @int_intrinsics(%a: vector<4xi8>, %b: vector<4xi8>) -> !llvm.array<10 x vector<4xi8>> {
    %0 = "llvm.intr.ctlz"(%a) <{is_zero_poison = false}> : (vector<4xi8>) -> vector<4xi8>
    %1 = "llvm.intr.cttz"(%a) <{is_zero_poison = false}> : (vector<4xi8>) -> vector<4xi8>
    %2 = llvm.intr.ctpop(%a) : (vector<4xi8>) -> vector<4xi8>
    %3 = llvm.intr.umax(%a, %b) : (vector<4xi8>, vector<4xi8>) -> vector<4xi8>
    %4 = llvm.intr.smin(%a, %b) : (vector<4xi8>, vector<4xi8>) -> vector<4xi8>
    %5 = "llvm.intr.abs"(%a) <{is_int_min_poison = false}> : (vector<4xi8>) -> vector<4xi8>
    %6 = llvm.intr.sadd.sat(%a, %b) : (vector<4xi8>, vector<4xi8>) -> vector<4xi8>
    %7 = llvm.intr.usub.sat(%a, %b) : (vector<4xi8>, vector<4xi8>) -> vector<4xi8>
    %8 = llvm.intr.bitreverse(%a) : (vector<4xi8>) -> vector<4xi8>
    %9 = llvm.intr.fshl(%a, %b, %b) : (vector<4xi8>, vector<4xi8>, vector<4xi8>) -> vector<4xi8>
    %a0 = llvm.mlir.undef : !llvm.array<10 x vector<4xi8>>
    %a1 = llvm.insertvalue %0, %a0[0] : !llvm.array<10 x vector<4xi8>>
    %a2 = llvm.insertvalue %1, %a1[1] : !llvm.array<10 x vector<4xi8>>
    %a3 = llvm.insertvalue %2, %a2[2] : !llvm.array<10 x vector<4xi8>>
    %a4 = llvm.insertvalue %3, %a3[3] : !llvm.array<10 x vector<4xi8>>
    %a5 = llvm.insertvalue %4, %a4[4] : !llvm.array<10 x vector<4xi8>>
    %a6 = llvm.insertvalue %5, %a5[5] : !llvm.array<10 x vector<4xi8>>
    %a7 = llvm.insertvalue %6, %a6[6] : !llvm.array<10 x vector<4xi8>>
    %a8 = llvm.insertvalue %7, %a7[7] : !llvm.array<10 x vector<4xi8>>
    %a9 = llvm.insertvalue %8, %a8[8] : !llvm.array<10 x vector<4xi8>>
    %a10 = llvm.insertvalue %9, %a9[9] : !llvm.array<10 x vector<4xi8>>
    llvm.return %a10 : !llvm.array<10 x vector<4xi8>>
  }

  llvm.func @bswap(%x: i32) -> i32 {
    %0 = llvm.intr.bswap(%x) : (i32) -> i32
    llvm.return %0 : i32
  }
}
