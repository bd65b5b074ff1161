"""Row chains: a row reduction and the ops after it over the same rows are one dispatch, split
into row ranges, with one loop over rows and one-row intermediate buffers."""
from __future__ import annotations

import numpy as np

from mlirtext import runtime
from mlirtext.compiler.driver import compile_source
from mlirtext.compiler.module_writer import pack
from mlirtext.vm.modfile import read_module_file

from .test_vm_programs import ROOT

SOFTMAX = (ROOT / "benchmarks" / "programs" / "softmax.mlir").read_text()

# A reduction whose result the next op reads along its columns (row j of the output needs all
# of the reduction's rows): not row-local, so no chain.
COLUMN_READ = """func.func @main(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %s = linalg.reduce ins(%x : tensor<64x64xf32>) outs(%f : tensor<64xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  %o = tensor.empty() : tensor<64x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>,
                       affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : tensor<64x64xf32>, tensor<64xf32>) outs(%o : tensor<64x64xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %d = arith.divf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}"""


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_softmax_is_one_dispatch_over_rows():
    compiled = compile_source(SOFTMAX, "softmax.mlir")
    data = pack(compiled)
    kernels = read_module_file(data).manifest["kernels"]
    assert len(kernels) == 1
    (kernel,) = kernels.values()
    assert kernel["workgroups"]["axis"] == 0 and kernel["workgroups"]["count"] == 256
    ir = compiled.llvm_ir
    assert "malloc(i64 1048576)" not in ir      # the exp intermediate is one row, not the whole tensor
    x = np.random.default_rng(0).standard_normal((256, 1024)).astype(np.float32) * 4
    want = softmax(x.astype(np.float64))
    outs = {d: runtime.load_module(data, device=d).main(x) for d in ("local-sync", "local-task", "reference")}
    for got in outs.values():
        assert np.allclose(got, want, rtol=1e-4, atol=1e-9)   # (f32 sums of 1024 terms)
    assert np.array_equal(outs["local-sync"], outs["local-task"])


def test_attention_softmax_joins_but_matmuls_keep_micro_kernels():
    data = runtime.compile_text((ROOT / "benchmarks" / "programs" / "attention.mlir").read_text())
    kernels = read_module_file(data).manifest["kernels"]
    micro = [k for k in kernels.values() if "micro-kernel" in k.get("implementation", "")]
    assert len(micro) == 2 and len(kernels) == 3   # QK^T (K transposed while packed, scaled), softmax, PV
    assert "B transposed while packed" in micro[0]["implementation"]


def test_a_column_read_is_no_chain():
    data = runtime.compile_text(COLUMN_READ)
    assert len(read_module_file(data).manifest["kernels"]) == 2
    x = np.random.default_rng(1).uniform(1, 2, (64, 64)).astype(np.float32)
    got = runtime.load_module(data, device="local-task").main(x)
    assert np.allclose(got, x / x.sum(axis=1)[None, :], rtol=1e-5)


LAYER_NORM_BATCH_OF_ONE = """func.func @main(%x: tensor<1x64x256xf32>) -> tensor<1x64x256xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %n = stablehlo.constant dense<256.0> : tensor<1x64xf32>
  %eps = stablehlo.constant dense<1.0e-5> : tensor<1x64xf32>
  %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [2] : (tensor<1x64x256xf32>, tensor<f32>) -> tensor<1x64xf32>
  %m = stablehlo.divide %s, %n : tensor<1x64xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0, 1] : (tensor<1x64xf32>) -> tensor<1x64x256xf32>
  %c = stablehlo.subtract %x, %mb : tensor<1x64x256xf32>
  %sq = stablehlo.multiply %c, %c : tensor<1x64x256xf32>
  %vs = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [2] : (tensor<1x64x256xf32>, tensor<f32>) -> tensor<1x64xf32>
  %v = stablehlo.divide %vs, %n : tensor<1x64xf32>
  %ve = stablehlo.add %v, %eps : tensor<1x64xf32>
  %r = stablehlo.rsqrt %ve : tensor<1x64xf32>
  %rb = stablehlo.broadcast_in_dim %r, dims = [0, 1] : (tensor<1x64xf32>) -> tensor<1x64x256xf32>
  %y = stablehlo.multiply %c, %rb : tensor<1x64x256xf32>
  return %y : tensor<1x64x256xf32>
}"""


def test_a_layer_norm_over_a_batch_of_one_is_one_dispatch():
    """Rows on axis 1 after a unit batch axis (ONNX's 1x128x256 activations): the two reductions
    and the elementwise passes between and after them are one kernel, split into the 64 rows."""
    data = runtime.compile_text(LAYER_NORM_BATCH_OF_ONE)
    kernels = read_module_file(data).manifest["kernels"]
    assert len(kernels) == 1, list(kernels)
    assert list(kernels.values())[0]["workgroups"]["axis"] == 1 and list(kernels.values())[0]["workgroups"]["count"] == 64
    x = np.random.default_rng(2).standard_normal((1, 64, 256)).astype(np.float32) * 3 + 1
    c = x.astype(np.float64) - x.mean(axis=2, keepdims=True)
    want = c / np.sqrt((c * c).mean(axis=2, keepdims=True) + 1e-5)
    for device in ("local-sync", "local-task", "reference"):
        got = runtime.load_module(data, device=device).main(x)
        assert np.allclose(got, want, rtol=1e-4, atol=1e-5), device


# flax's LayerNorm over NHWC (a batch of one): the square of x is computed before either mean, the
# mean of x and the mean of squares are siblings (neither reads the other), then the normalisation
# and a relu. All of it is one kernel over the rows of axis 1.
FLAX_LAYER_NORM = """func.func @main(%x: tensor<1x8x8x32xf32>) -> tensor<1x8x8x32xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %n = stablehlo.constant dense<32.0> : tensor<1x8x8xf32>
  %eps = stablehlo.constant dense<1.0e-6> : tensor<1x8x8x32xf32>
  %zeros = stablehlo.constant dense<0.0> : tensor<1x8x8x32xf32>
  %sq = stablehlo.multiply %x, %x : tensor<1x8x8x32xf32>
  %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [3] : (tensor<1x8x8x32xf32>, tensor<f32>) -> tensor<1x8x8xf32>
  %m = stablehlo.divide %s, %n : tensor<1x8x8xf32>
  %s2 = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [3] : (tensor<1x8x8x32xf32>, tensor<f32>) -> tensor<1x8x8xf32>
  %m2 = stablehlo.divide %s2, %n : tensor<1x8x8xf32>
  %mm = stablehlo.multiply %m, %m : tensor<1x8x8xf32>
  %v = stablehlo.subtract %m2, %mm : tensor<1x8x8xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0, 1, 2] : (tensor<1x8x8xf32>) -> tensor<1x8x8x32xf32>
  %vb = stablehlo.broadcast_in_dim %v, dims = [0, 1, 2] : (tensor<1x8x8xf32>) -> tensor<1x8x8x32xf32>
  %ve = stablehlo.add %vb, %eps : tensor<1x8x8x32xf32>
  %r = stablehlo.rsqrt %ve : tensor<1x8x8x32xf32>
  %c = stablehlo.subtract %x, %mb : tensor<1x8x8x32xf32>
  %y = stablehlo.multiply %c, %r : tensor<1x8x8x32xf32>
  %relu = stablehlo.maximum %y, %zeros : tensor<1x8x8x32xf32>
  return %relu : tensor<1x8x8x32xf32>
}"""


def test_a_layer_norm_with_its_square_first_and_sibling_means_is_one_row_kernel():
    """The square joins the chain (no other dispatch takes it as an epilogue), the two means are
    one kernel: split into the 8 rows of axis 1 after the unit batch axis, its passes fused into
    one loop over those rows and, inside it, one loop over that row's 8 pixels (every pass reads
    only its own pixel's values: targets/workgroups.fuse_inner_rows), and the squares held for one
    pixel (32 floats), not the row (8x32) or the image."""
    compiled = compile_source(FLAX_LAYER_NORM, "ln.mlir")
    assert list(compiled.kernels) and len(compiled.kernels) == 1, list(compiled.kernels)
    (kernel,) = compiled.kernels.values()
    assert kernel["workgroups"]["axis"] == 1 and kernel["workgroups"]["count"] == 8
    assert "malloc(i64 128)" in compiled.llvm_ir and "malloc(i64 1024)" not in compiled.llvm_ir
    assert '!"llvm.loop.unroll.disable"' in compiled.llvm_ir   # (the sums vectorise along the channels)
    data = pack(compiled)
    x = np.random.default_rng(3).standard_normal((1, 8, 8, 32)).astype(np.float32) * 2 + 0.5
    m = x.astype(np.float64).mean(axis=3, keepdims=True)
    v = (x.astype(np.float64) ** 2).mean(axis=3, keepdims=True) - m * m
    want = np.maximum((x - m) / np.sqrt(v + 1e-6), 0)
    outs = {d: runtime.load_module(data, device=d).main(x) for d in ("local-sync", "local-task", "reference")}
    for device, got in outs.items():
        assert np.allclose(got, want, rtol=1e-4, atol=1e-5), device
    assert np.array_equal(outs["local-sync"], outs["local-task"])


# A relu on a matmul's result, then a row sum of it: the relu is the matmul's epilogue (run on its
# tiles in registers), so it does not start a row chain with the sum that follows it.
MATMUL_RELU_SUM = """func.func @main(%a: tensor<64x32xf32>, %b: tensor<32x48xf32>) -> tensor<64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x48xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x48xf32>) -> tensor<64x48xf32>
  %m = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x48xf32>) outs(%f : tensor<64x48xf32>) -> tensor<64x48xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]} ins(%m : tensor<64x48xf32>) outs(%e : tensor<64x48xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.maximumf %x, %zero : f32
    linalg.yield %y : f32
  } -> tensor<64x48xf32>
  %s0 = tensor.empty() : tensor<64xf32>
  %sf = linalg.fill ins(%zero : f32) outs(%s0 : tensor<64xf32>) -> tensor<64xf32>
  %s = linalg.reduce ins(%r : tensor<64x48xf32>) outs(%sf : tensor<64xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %t = arith.addf %in, %acc : f32
      linalg.yield %t : f32
    }
  return %s : tensor<64xf32>
}"""


def test_a_matmul_epilogue_does_not_start_a_row_chain():
    compiled = compile_source(MATMUL_RELU_SUM, "mm.mlir")
    implementations = [k.get("implementation", "generated loops") for k in compiled.kernels.values()]
    assert len(implementations) == 2 and "maximumf epilogue" in implementations[0], implementations
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((64, 32)).astype(np.float32), rng.standard_normal((32, 48)).astype(np.float32)
    got = runtime.load_module(pack(compiled), device="local-sync").main(a, b)
    assert np.allclose(got, np.maximum(a.astype(np.float64) @ b, 0).sum(axis=1), rtol=1e-4, atol=1e-4)


# Attention's softmax, 4 heads of 16 rows of 24: split on the heads (axis 1), and inside each
# head its passes run row by row (targets/workgroups.fuse_inner_rows): exp(x - max) is held for
# one row of 24 floats, not for the head's 16x24.
HEADS_SOFTMAX = """func.func @main(%x: tensor<1x4x16x24xf32>) -> tensor<1x4x16x24xf32> {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [3] : (tensor<1x4x16x24xf32>, tensor<f32>) -> tensor<1x4x16xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0, 1, 2] : (tensor<1x4x16xf32>) -> tensor<1x4x16x24xf32>
  %d = stablehlo.subtract %x, %mb : tensor<1x4x16x24xf32>
  %e = stablehlo.exponential %d : tensor<1x4x16x24xf32>
  %s = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [3] : (tensor<1x4x16x24xf32>, tensor<f32>) -> tensor<1x4x16xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [0, 1, 2] : (tensor<1x4x16xf32>) -> tensor<1x4x16x24xf32>
  %p = stablehlo.divide %e, %sb : tensor<1x4x16x24xf32>
  return %p : tensor<1x4x16x24xf32>
}"""

# Each head's columns normalised by their sums (a reduction over axis 2, the rows): one kernel split
# on the heads, but row r of the result needs every row of exp(x): the passes stay whole-head
# passes, and the intermediate a head. (Square heads: every pass's second loop has 16 steps,
# so only the check of what each pass reads tells them apart.)
HEADS_COLUMN_SUMS = """func.func @main(%x: tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %e = stablehlo.exponential %x : tensor<1x4x16x16xf32>
  %s = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [2] : (tensor<1x4x16x16xf32>, tensor<f32>) -> tensor<1x4x16xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [0, 1, 3] : (tensor<1x4x16xf32>) -> tensor<1x4x16x16xf32>
  %p = stablehlo.divide %e, %sb : tensor<1x4x16x16xf32>
  return %p : tensor<1x4x16x16xf32>
}"""


def _one_kernel_on_heads(text: str):
    compiled = compile_source(text, "heads.mlir")
    assert len(compiled.kernels) == 1, list(compiled.kernels)
    (kernel,) = compiled.kernels.values()
    assert kernel["workgroups"]["axis"] == 1 and kernel["workgroups"]["count"] == 4
    return compiled


def test_a_softmax_over_heads_runs_row_by_row_inside_each_head():
    compiled = _one_kernel_on_heads(HEADS_SOFTMAX)
    assert "malloc(i64 96)" in compiled.llvm_ir and "malloc(i64 1536)" not in compiled.llvm_ir
    data = pack(compiled)
    x = np.random.default_rng(4).standard_normal((1, 4, 16, 24)).astype(np.float32) * 4
    e = np.exp(x.astype(np.float64) - x.max(axis=3, keepdims=True))
    want = e / e.sum(axis=3, keepdims=True)
    outs = {d: runtime.load_module(data, device=d).main(x) for d in ("local-sync", "local-task", "reference")}
    for device, got in outs.items():
        assert np.allclose(got, want, rtol=1e-5, atol=1e-7), device
    assert np.array_equal(outs["local-sync"], outs["local-task"])


def test_a_pass_reading_other_rows_keeps_whole_head_passes():
    compiled = _one_kernel_on_heads(HEADS_COLUMN_SUMS)
    assert "malloc(i64 1024)" in compiled.llvm_ir    # exp(x) held for the whole head (16x16)
    data = pack(compiled)
    x = np.random.default_rng(5).standard_normal((1, 4, 16, 16)).astype(np.float32)
    e = np.exp(x.astype(np.float64))
    want = e / e.sum(axis=2, keepdims=True)
    for device in ("local-sync", "local-task", "reference"):
        assert np.allclose(runtime.load_module(data, device=device).main(x), want, rtol=1e-5, atol=1e-7), device
