"""What a transformer's elementwise code needs on llvm-cpu: splat-constant inputs of a generic
folded into its body (ONNX's expanded erf passes each coefficient as a tensor as big as the
activation), and `powf` by 2, 3 or 4 as multiplications (GPT-2's GELU cubes x) so the loop
vectorises instead of calling pow per element."""
from __future__ import annotations

import numpy as np

from mlirtext.api import parse_and_verify
from mlirtext.compiler.driver import compile_source
from mlirtext.compiler.module_writer import pack
from mlirtext.interpreter import Interpreter
from mlirtext.runtime import load_module
from mlirtext.syntax.printer import print_module
from mlirtext.transforms.pass_manager import PassManager
from mlirtext.transforms.pipeline import parse_pipeline

MAP = "affine_map<(d0, d1) -> (d0, d1)>"


def _generic(body: str, inputs: list[str], shape: str = "4x32") -> str:
    """A function whose one elementwise generic reads `%x` and the constants `inputs` name."""
    consts = "\n".join(f"  %c{i} = arith.constant {c} : tensor<{shape}xf32>" for i, c in enumerate(inputs))
    names = ", ".join(["%x"] + [f"%c{i}" for i in range(len(inputs))])
    types = ", ".join([f"tensor<{shape}xf32>"] * (len(inputs) + 1))
    args = ", ".join(["%a: f32"] + [f"%k{i}: f32" for i in range(len(inputs))] + ["%o: f32"])
    return f"""func.func @main(%x: tensor<{shape}xf32>) -> tensor<{shape}xf32> {{
{consts}
  %e = tensor.empty() : tensor<{shape}xf32>
  %r = linalg.generic {{indexing_maps = [{", ".join([MAP] * (len(inputs) + 2))}],
                       iterator_types = ["parallel", "parallel"]}} ins({names} : {types}) outs(%e : tensor<{shape}xf32>) {{
  ^bb0({args}):
{body}
  }} -> tensor<{shape}xf32>
  return %r : tensor<{shape}xf32>
}}
"""


def _run_pass(text: str, pipeline: str) -> str:
    module = parse_and_verify(text).module
    assert not PassManager(parse_pipeline(pipeline)).run(module)
    return print_module(module)


def _native_and_reference(text: str, x: np.ndarray):
    compiled = compile_source(text, "t.mlir")
    got = load_module(pack(compiled), "local-sync").main(x)
    want = Interpreter(parse_and_verify(text).module).call("main", [x])[0]
    return compiled, np.asarray(got), np.asarray(want)


def test_splat_constant_inputs_become_scalars_in_the_body():
    text = _generic("    %m = arith.mulf %a, %k0 : f32\n    %s = arith.addf %m, %k1 : f32\n    linalg.yield %s : f32",
                    ["dense<2.5>", "dense<-1.0>"])
    out = _run_pass(text, "linalg-fuse-elementwise-ops,canonicalize")
    assert "tensor<4x32xf32> = dense" not in out and "dense<2.5>" not in out, out
    assert "arith.constant 2.5 : f32" in out and "ins(%x : tensor<4x32xf32>)" in out, out
    x = np.random.default_rng(0).standard_normal((4, 32)).astype(np.float32)
    compiled, got, want = _native_and_reference(text, x)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, x * np.float32(2.5) - np.float32(1.0))
    assert not compiled.constants   # nothing left for the module to store


def test_a_constant_that_is_not_a_splat_stays_an_input():
    values = ", ".join(["[" + ", ".join(str(float(i * 32 + j)) for j in range(32)) + "]" for i in range(4)])
    text = _generic("    %m = arith.mulf %a, %k0 : f32\n    linalg.yield %m : f32", [f"dense<[{values}]>"])
    out = _run_pass(text, "linalg-fuse-elementwise-ops")
    assert "ins(%x, %c0 :" in out, out


def test_powf_by_a_small_integer_is_products_that_vectorise_and_match_pow():
    body = ("    %p = math.powf %a, %k0 : f32\n    %q = math.powf %a, %k1 : f32\n    %r = math.powf %a, %k2 : f32\n"
            "    %s = arith.addf %p, %q : f32\n    %t = arith.addf %s, %r : f32\n    linalg.yield %t : f32")
    text = _generic(body, ["dense<3.0>", "dense<2.0>", "dense<4.0>"], "8x64")
    x = np.random.default_rng(1).standard_normal((8, 64)).astype(np.float32) * 3
    compiled, got, want = _native_and_reference(text, x)
    assert "pow" not in compiled.llvm_ir, "a call to pow is left"
    assert "<8 x float>" in compiled.llvm_ir or "<16 x float>" in compiled.llvm_ir   # the loop vectorised
    exact = x.astype(np.float64)
    np.testing.assert_allclose(got, (exact ** 3 + exact ** 2 + exact ** 4).astype(np.float32), rtol=2e-6, atol=1e-5)
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-5)


def test_powf_by_another_exponent_keeps_pow():
    text = _generic("    %p = math.powf %a, %k0 : f32\n    linalg.yield %p : f32", ["dense<2.5>"], "8x64")
    x = np.abs(np.random.default_rng(2).standard_normal((8, 64)).astype(np.float32))
    compiled, got, want = _native_and_reference(text, x)
    np.testing.assert_allclose(got, want, rtol=2e-6)
    np.testing.assert_allclose(got, x.astype(np.float64) ** 2.5, rtol=2e-6)


def _const(array: np.ndarray) -> str:
    shape = "x".join(map(str, array.shape))
    return f'stablehlo.constant dense<"0x{array.astype("<f4").tobytes().hex().upper()}"> : tensor<{shape}xf32>'


def transformer_block(seed: int = 0, S: int = 32, D: int = 128, H: int = 2, F: int = 256) -> str:
    """A pre-norm GPT-2 block on S tokens of width D: layer norm, causal attention over H heads
    (QK^T, scale, mask of -3.4e38, softmax, xV), output projection and residual, layer norm, an MLP
    with the tanh GELU (x cubed by `power`), residual. Constant weights, as the importers give them
    (biases wider than dispatch formation's SMALL_CONSTANT, so they are kernel inputs as a real
    model's are)."""
    rng = np.random.default_rng(seed)
    w = lambda *shape: (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)  # noqa: E731
    dh, t, th = D // H, f"tensor<{S}x{D}xf32>", f"tensor<{H}x{S}x{D // H}xf32>"
    ts, tf = f"tensor<{H}x{S}x{S}xf32>", f"tensor<{S}x{F}xf32>"
    mask = np.triu(np.full((S, S), -3.4e38, np.float32), 1)
    L = [f"func.func @main(%x: {t}) -> {t} {{",
         "  %zero = stablehlo.constant dense<0.0> : tensor<f32>",
         "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>",
         f"  %mask = {_const(mask)}"]

    def layer_norm(name: str, x: str) -> None:
        L.extend([
            f"  %{name}.g = {_const(1 + w(D) / 4)}", f"  %{name}.b = {_const(w(D) / 4)}",
            f"  %{name}.s = stablehlo.reduce({x} init: %zero) applies stablehlo.add across dimensions = [1] : "
            f"({t}, tensor<f32>) -> tensor<{S}xf32>",
            f"  %{name}.n = stablehlo.constant dense<{float(D)}> : tensor<{S}xf32>",
            f"  %{name}.m = stablehlo.divide %{name}.s, %{name}.n : tensor<{S}xf32>",
            f"  %{name}.mb = stablehlo.broadcast_in_dim %{name}.m, dims = [0] : (tensor<{S}xf32>) -> {t}",
            f"  %{name}.c = stablehlo.subtract {x}, %{name}.mb : {t}",
            f"  %{name}.sq = stablehlo.multiply %{name}.c, %{name}.c : {t}",
            f"  %{name}.vs = stablehlo.reduce(%{name}.sq init: %zero) applies stablehlo.add across dimensions = [1] : "
            f"({t}, tensor<f32>) -> tensor<{S}xf32>",
            f"  %{name}.v = stablehlo.divide %{name}.vs, %{name}.n : tensor<{S}xf32>",
            f"  %{name}.eps = stablehlo.constant dense<1.0e-5> : tensor<{S}xf32>",
            f"  %{name}.ve = stablehlo.add %{name}.v, %{name}.eps : tensor<{S}xf32>",
            f"  %{name}.r = stablehlo.rsqrt %{name}.ve : tensor<{S}xf32>",
            f"  %{name}.rb = stablehlo.broadcast_in_dim %{name}.r, dims = [0] : (tensor<{S}xf32>) -> {t}",
            f"  %{name}.x = stablehlo.multiply %{name}.c, %{name}.rb : {t}",
            f"  %{name}.gb = stablehlo.broadcast_in_dim %{name}.g, dims = [1] : (tensor<{D}xf32>) -> {t}",
            f"  %{name}.bb = stablehlo.broadcast_in_dim %{name}.b, dims = [1] : (tensor<{D}xf32>) -> {t}",
            f"  %{name}.y0 = stablehlo.multiply %{name}.x, %{name}.gb : {t}",
            f"  %{name} = stablehlo.add %{name}.y0, %{name}.bb : {t}"])

    def linear(name: str, x: str, n_in: int, n_out: int) -> None:
        to = f"tensor<{S}x{n_out}xf32>"
        L.extend([f"  %{name}.w = {_const(w(n_in, n_out))}", f"  %{name}.b = {_const(w(n_out) / 4)}",
                  f"  %{name}.mm = stablehlo.dot_general {x}, %{name}.w, contracting_dims = [1] x [0] : "
                  f"(tensor<{S}x{n_in}xf32>, tensor<{n_in}x{n_out}xf32>) -> {to}",
                  f"  %{name}.bb = stablehlo.broadcast_in_dim %{name}.b, dims = [1] : (tensor<{n_out}xf32>) -> {to}",
                  f"  %{name} = stablehlo.add %{name}.mm, %{name}.bb : {to}"])

    layer_norm("ln1", "%x")
    for p in "qkv":
        linear(p, "%ln1", D, D)
        L.extend([f"  %{p}.r = stablehlo.reshape %{p} : ({t}) -> tensor<{S}x{H}x{dh}xf32>",
                  f"  %{p}.h = stablehlo.transpose %{p}.r, dims = [1, 0, 2] : (tensor<{S}x{H}x{dh}xf32>) -> {th}"])
    L.extend([
        f"  %qk = stablehlo.dot_general %q.h, %k.h, batching_dims = [0] x [0], contracting_dims = [2] x [2] : "
        f"({th}, {th}) -> {ts}",
        f"  %scale = stablehlo.constant dense<{1 / np.sqrt(dh):.8f}> : {ts}",
        f"  %qks = stablehlo.multiply %qk, %scale : {ts}",
        f"  %mb = stablehlo.broadcast_in_dim %mask, dims = [1, 2] : (tensor<{S}x{S}xf32>) -> {ts}",
        f"  %sc = stablehlo.add %qks, %mb : {ts}",
        f"  %mx = stablehlo.reduce(%sc init: %ninf) applies stablehlo.maximum across dimensions = [2] : "
        f"({ts}, tensor<f32>) -> tensor<{H}x{S}xf32>",
        f"  %mxb = stablehlo.broadcast_in_dim %mx, dims = [0, 1] : (tensor<{H}x{S}xf32>) -> {ts}",
        f"  %sh = stablehlo.subtract %sc, %mxb : {ts}",
        f"  %ex = stablehlo.exponential %sh : {ts}",
        f"  %sm = stablehlo.reduce(%ex init: %zero) applies stablehlo.add across dimensions = [2] : "
        f"({ts}, tensor<f32>) -> tensor<{H}x{S}xf32>",
        f"  %smb = stablehlo.broadcast_in_dim %sm, dims = [0, 1] : (tensor<{H}x{S}xf32>) -> {ts}",
        f"  %pr = stablehlo.divide %ex, %smb : {ts}",
        f"  %ctx = stablehlo.dot_general %pr, %v.h, batching_dims = [0] x [0], contracting_dims = [2] x [1] : "
        f"({ts}, {th}) -> {th}",
        f"  %ctt = stablehlo.transpose %ctx, dims = [1, 0, 2] : ({th}) -> tensor<{S}x{H}x{dh}xf32>",
        f"  %ctr = stablehlo.reshape %ctt : (tensor<{S}x{H}x{dh}xf32>) -> {t}"])
    linear("o", "%ctr", D, D)
    L.append(f"  %h1 = stablehlo.add %x, %o : {t}")
    layer_norm("ln2", "%h1")
    linear("fc", "%ln2", D, F)
    L.extend([   # GELU, tanh form: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        f"  %three = stablehlo.constant dense<3.0> : {tf}", f"  %x3 = stablehlo.power %fc, %three : {tf}",
        f"  %c1 = stablehlo.constant dense<0.044715> : {tf}", f"  %c2 = stablehlo.constant dense<0.7978845608> : {tf}",
        f"  %half = stablehlo.constant dense<0.5> : {tf}", f"  %one = stablehlo.constant dense<1.0> : {tf}",
        f"  %g1 = stablehlo.multiply %x3, %c1 : {tf}", f"  %g2 = stablehlo.add %fc, %g1 : {tf}",
        f"  %g3 = stablehlo.multiply %g2, %c2 : {tf}", f"  %g4 = stablehlo.tanh %g3 : {tf}",
        f"  %g5 = stablehlo.add %g4, %one : {tf}", f"  %g6 = stablehlo.multiply %fc, %half : {tf}",
        f"  %gelu = stablehlo.multiply %g6, %g5 : {tf}"])
    linear("proj", "%gelu", F, D)
    L.extend([f"  %y = stablehlo.add %h1, %proj : {t}", f"  return %y : {t}", "}"])
    return "\n".join(L) + "\n"


def _dispatch_ops(compiled) -> dict:
    """Each dispatch's linalg ops (names), by kernel name."""
    return {op.sym_name: [inner.name for inner in op.regions[0].blocks[0].ops if inner.name.startswith("linalg.")]
            for op in compiled.dispatched.regions[0].blocks[0].ops
            if op.name == "func.func" and op.sym_name in compiled.kernels}


def test_a_transformer_block_matches_the_interpreter_with_every_matmul_on_the_micro_kernel():
    text = transformer_block()
    compiled = compile_source(text, "block.mlir")
    x = np.random.default_rng(1).standard_normal((32, 128)).astype(np.float32)
    want = Interpreter(parse_and_verify(text).module).call("main", [x])[0]
    for device in ("local-sync", "local-task"):
        got = load_module(pack(compiled), device).main(x)
        assert np.max(np.abs(got - want)) <= 1e-4 * np.max(np.abs(want)), device
    ops = _dispatch_ops(compiled)
    matmuls = {name for name, names in ops.items() if {"linalg.matmul", "linalg.batch_matmul"} & set(names)}
    assert len(matmuls) == 8, ops   # q, k, v, QK^T, xV, the output projection, the MLP's two
    for name in matmuls:   # no generated loops for a matmul or a batch matmul
        assert compiled.kernels[name].get("implementation", "").startswith("micro-kernel"), (name, ops[name])
    # The GELU (x^3 included) and the masked softmax's exp are vector loops: no call to pow.
    assert "pow" not in compiled.llvm_ir
    epilogues = [k["implementation"] for k in compiled.kernels.values() if "epilogue" in k.get("implementation", "")]
    # q, k and v's biases run in their matmuls' epilogues, and so do the output projection's and the
    # MLP's second bias with the residual add after each (the epilogue reads the residual at the
    # tile's place). The MLP's first bias and the GELU that reads it (three times) run in its matmul's
    # epilogue too, x^3 and tanh expanded as the generated loops expand them (compiler/vector_body.py).
    plain = [e for e in epilogues if e.endswith(", addf epilogue")]
    residual = [e for e in epilogues if e.endswith(", addf+addf epilogue")]
    gelu = [e for e in epilogues if e.endswith(", addf+powf+mulf+addf+mulf+tanh+addf+mulf+mulf epilogue")]
    assert (len(plain), len(residual), len(gelu), len(epilogues)) == (3, 2, 1, 6), epilogues


ALL_MASKED = """func.func @main(%x: tensor<4x37xf32>) -> (tensor<4x37xf32>, tensor<4xi1>) {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<4x37xf32>
  %m = stablehlo.compare EQ, %x, %ninf : (tensor<4x37xf32>, tensor<4x37xf32>) -> tensor<4x37xi1>
  %t = stablehlo.constant dense<true> : tensor<i1>
  %all = stablehlo.reduce(%m init: %t) applies stablehlo.and across dimensions = [1] : (tensor<4x37xi1>, tensor<i1>) -> tensor<4xi1>
  %b = stablehlo.broadcast_in_dim %all, dims = [0] : (tensor<4xi1>) -> tensor<4x37xi1>
  %z = stablehlo.constant dense<0.0> : tensor<4x37xf32>
  %r = stablehlo.select %b, %z, %x : tensor<4x37xi1>, tensor<4x37xf32>
  return %r, %all : tensor<4x37xf32>, tensor<4xi1>
}
"""


def test_a_mask_in_memory_is_read_as_bytes_and_vectorises():
    # (torch's softmax tests whether a row is all -inf: LLVM scalarised each i1 load of the mask)
    x = np.random.default_rng(0).standard_normal((4, 37)).astype(np.float32)
    x[1] = -np.inf
    x[3, 5] = -np.inf
    compiled = compile_source(ALL_MASKED, "t.mlir")
    assert "load i1" not in compiled.llvm_ir and "load <" in compiled.llvm_ir
    got = load_module(pack(compiled), "local-sync").main(x)
    want = Interpreter(parse_and_verify(ALL_MASKED).module).call("main", [x])
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    assert list(np.asarray(got[1])) == [False, True, False, False]
