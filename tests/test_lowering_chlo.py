"""Every chlo op that `chlo-legalize-to-stablehlo` decomposes lowers through the compile flow
(hlo -> tosa -> linalg -> loops -> llvm) and, compiled to native code, computes what the
interpreter computes on the same inputs.

The interpreter evaluates the special functions in double (scipy) and rounds once, so it is
the exact answer to within half an ulp; the lowered functions are the upstream approximations
(polynomials, Lanczos, Euler-Maclaurin) evaluated in the operand type (f16 / bf16 in f32).
Each op has a stated bound: |native - interpreter| <= ULPS * ulp(max(|interpreter|, FLOOR)) in
the result type, where FLOOR (default 0: a pure ulp bound) keeps the bound meaningful where the
function crosses zero (lgamma at 1 and 2, digamma at 1.46, erf_inv at 0) and the error there is
absolute, not relative. NaN must match NaN and infinities must match exactly.

Left out: the poles where scipy and the upstream formulas name different non-numbers (digamma
at 0 is -inf in scipy, NaN upstream; zeta at q <= 0, where the upstream series is not accurate
either)."""
from __future__ import annotations

import numpy as np
import pytest

from mlirtext import runtime
from mlirtext.api import parse_and_verify, to_text
from mlirtext.cli import main
from mlirtext.interpreter import Interpreter
from mlirtext.ir import types as T
from mlirtext.ir.arrays import dtype_of
from mlirtext.transforms.conversions.levels import lowering_pipeline
from mlirtext.transforms.pass_manager import PassManager
from mlirtext.transforms.pipeline import parse_pipeline

_TYPES = {"f32": T.f32, "f16": T.f16, "bf16": T.bf16, "f64": T.f64}


def _grid(lo: float, hi: float, n: int = 64, extra=()) -> np.ndarray:
    return np.concatenate([np.linspace(lo, hi, n), np.asarray(extra, dtype=np.float64)])


#: unary op -> (inputs, bound in ulps, floor, element types)
UNARY = {
    "square": (_grid(-30, 30, extra=[0.0, -0.0, np.inf, -np.inf, np.nan]), 0, 0.0, ("f32", "f16", "bf16", "f64")),
    "atan": (_grid(-50, 50, extra=[0.0, 1e-6, np.inf, -np.inf, np.nan]), 2, 0.0, ("f32", "f16", "bf16", "f64")),
    "asin": (_grid(-1, 1, extra=[1e-6, -0.999999, 1.5, np.nan]), 2, 0.0, ("f32", "f16", "bf16", "f64")),
    "acos": (_grid(-1, 1, extra=[1e-6, 0.999999, -0.999999, -1.5, np.nan]), 2, 0.0, ("f32", "f16", "bf16", "f64")),
    "is_inf": (_grid(-3, 3, 8, extra=[np.inf, -np.inf, np.nan, 0.0]), 0, 0.0, ("f32", "f16", "bf16", "f64")),
    "is_pos_inf": (_grid(-3, 3, 8, extra=[np.inf, -np.inf, np.nan, 0.0]), 0, 0.0, ("f32", "f16", "bf16", "f64")),
    "is_neg_inf": (_grid(-3, 3, 8, extra=[np.inf, -np.inf, np.nan, 0.0]), 0, 0.0, ("f32", "f16", "bf16", "f64")),
    "erf": (_grid(-5, 5, extra=[0.0, 1e-4, -1e-4, np.inf, -np.inf, np.nan]), 8, 0.0, ("f32", "f16", "bf16", "f64")),
    "erfc": (_grid(-4, 9, extra=[0.0, 1e-4, np.inf, -np.inf, np.nan]), 32, 0.0, ("f32", "f16", "bf16", "f64")),
    "erf_inv": (_grid(-0.999, 0.999, extra=[0.0, 1e-4, 1.0, -1.0, 1.5, np.nan]), 8, 0.0, ("f32", "f16", "bf16", "f64")),
    "bessel_i1e": (_grid(-40, 40, extra=[0.0, 1e-3, 8.0, np.inf, np.nan]), 16, 0.0, ("f32", "f16", "bf16", "f64")),
    "lgamma": (_grid(-7.7, 30, extra=[0.5, 1e-3, 3.0, 100.0, np.inf, np.nan]), 32, 1.0, ("f32", "f16", "bf16", "f64")),
    "digamma": (_grid(-7.7, 30, extra=[0.5, 1e-3, -2.0, 100.0, np.nan]), 16, 1.0, ("f32", "f16", "bf16", "f64")),
}

#: binary op -> (first operand, second operand, bound in ulps, floor, element types)
BINARY = {
    "zeta": (np.repeat([1.0, 1.5, 2.0, 3.0, 4.5, 7.0, 12.0, 0.5], 8),
             np.tile([0.3, 1.0, 2.5, 7.0, 40.0, 1e-3, 0.5, 1e3], 8), 8, 0.0, ("f32", "f16", "bf16", "f64")),
    "polygamma": (np.repeat([0.0, 1.0, 2.0, 3.0, 4.0, 1.5, -1.0, 6.0], 8),
                  np.tile([0.3, 1.0, 2.5, 7.0, 40.0, 0.7, 1.6, 9.0], 8), 32, 1.0, ("f32", "f16", "bf16", "f64")),
}


def _ulp(x: np.ndarray, dtype) -> np.ndarray:
    """The spacing of `dtype` at |x| (as float64; bf16's from its 7 mantissa bits)."""
    ax = np.abs(x.astype(np.float64))
    if dtype in (np.float16, np.float32, np.float64):
        return np.spacing(ax.astype(dtype)).astype(np.float64)
    return 2.0 ** (np.floor(np.log2(np.maximum(ax, 2.0 ** -126))) - 7)


def _compile_and_run(text: str, args):
    """`text` lowered to the llvm dialect (every step must legalize), then compiled for llvm-cpu
    (which lowers it the same way to linalg before its own code generation) and run natively."""
    result = parse_and_verify(text)
    assert result.ok, [d.message for d in result.diagnostics]
    problems = PassManager(parse_pipeline(lowering_pipeline(result.module, "llvm"))).run(result.module)
    assert not problems, [d.format() for d in problems]
    assert "chlo." not in to_text(result)
    module = runtime.load_module(runtime.compile_text(text), device="local-sync")
    out = module.main(*args)
    return out if isinstance(out, tuple) else (out,)


def _interpret(text: str, args):
    result = parse_and_verify(text)
    assert result.ok, [d.message for d in result.diagnostics]
    return Interpreter(result.module).call("main", [np.array(a, copy=True) for a in args])


def _assert_within(name: str, want, got, ulps: int, floor: float):
    want, got = np.asarray(want), np.asarray(got)
    assert want.dtype == got.dtype and want.shape == got.shape, (name, want.dtype, got.dtype)
    if want.dtype == np.bool_ or want.dtype.kind in "iu":
        np.testing.assert_array_equal(got, want, err_msg=name)
        return
    w, g = want.astype(np.float64), got.astype(np.float64)
    assert np.array_equal(np.isnan(w), np.isnan(g)), (name, w[np.isnan(w) != np.isnan(g)], g[np.isnan(w) != np.isnan(g)])
    inf = np.isinf(w) | np.isinf(g)
    assert np.array_equal(w[inf], g[inf]), (name, w[inf], g[inf])
    finite = np.isfinite(w) & np.isfinite(g)
    w, g = w[finite], g[finite]
    in_ulps = np.abs(w - g) / _ulp(np.maximum(np.abs(w), floor), want.dtype)
    worst = int(np.argmax(in_ulps)) if in_ulps.size else 0
    assert np.all(in_ulps <= ulps), f"{name}: {g[worst]} for {w[worst]}: {in_ulps[worst]:.1f} ulp > {ulps}"


def _unary_program(names, type_name: str, n: int) -> str:
    t = f"tensor<{n}x{type_name}>"
    result_types = [f"tensor<{n}xi1>" if name.startswith("is_") else t for name in names]
    args = ", ".join(f"%a{i}: {t}" for i in range(len(names)))
    body = "\n".join(f"  %r{i} = chlo.{name} %a{i} : {t} -> {rt}" for i, (name, rt) in enumerate(zip(names, result_types)))
    rets = ", ".join(f"%r{i}" for i in range(len(names)))
    return f"func.func @main({args}) -> ({', '.join(result_types)}) {{\n{body}\n  return {rets} : {', '.join(result_types)}\n}}\n"


def _binary_program(name: str, type_name: str, n: int) -> str:
    t = f"tensor<{n}x{type_name}>"
    return (f"func.func @main(%a: {t}, %b: {t}) -> {t} {{\n  %r = chlo.{name} %a, %b : {t}, {t} -> {t}\n"
            f"  return %r : {t}\n}}\n")


def _same_length(arrays):
    n = max(len(a) for a in arrays)
    return [np.resize(a, n) for a in arrays]


@pytest.mark.parametrize("type_name", sorted(_TYPES))
def test_unary_chlo_ops_lowered_and_compiled_match_the_interpreter(type_name):
    names = [name for name, spec in UNARY.items() if type_name in spec[3]]
    dtype = dtype_of(_TYPES[type_name])
    inputs = [a.astype(dtype) for a in _same_length([UNARY[name][0] for name in names])]
    text = _unary_program(names, type_name, len(inputs[0]))
    want = _interpret(text, inputs)
    got = _compile_and_run(text, inputs)
    for name, w, g in zip(names, want, got, strict=True):
        _assert_within(f"chlo.{name} on {type_name}", w, g, UNARY[name][1], UNARY[name][2])


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("type_name", sorted(_TYPES))
def test_zeta_and_polygamma_lowered_and_compiled_match_the_interpreter(name, type_name):
    a, b, ulps, floor, types = BINARY[name]
    if type_name not in types:
        pytest.skip(f"{name} on {type_name} is not lowered")
    dtype = dtype_of(_TYPES[type_name])
    inputs = [a.astype(dtype), b.astype(dtype)]
    text = _binary_program(name, type_name, len(a))
    (want,), got = _interpret(text, inputs), _compile_and_run(text, inputs)
    _assert_within(f"chlo.{name} on {type_name}", want, got[0], ulps, floor)


BROADCASTING = """
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %c: tensor<2xf32>, %i: tensor<2x1xi32>, %j: tensor<3xi32>,
                %p: tensor<2x3xi1>, %n: tensor<1x3xf32>)
    -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xi32>, tensor<2x3xi32>,
        tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = chlo.broadcast_add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = chlo.broadcast_multiply %c, %a {broadcast_dimensions = array<i64: 0>} : (tensor<2xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = chlo.broadcast_atan2 %b, %a : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = chlo.broadcast_power %n, %a : (tensor<1x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = chlo.broadcast_shift_left %i, %j : (tensor<2x1xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  %5 = chlo.broadcast_xor %i, %j : (tensor<2x1xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  %6 = chlo.broadcast_compare %a, %b {comparison_direction = #chlo<comparison_direction GE>} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %7 = chlo.broadcast_select %p, %a, %b : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %8 = chlo.broadcast_next_after %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %9 = chlo.broadcast_remainder %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %10 = "chlo.constant_like"(%a) {value = 2.5 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>,
      tensor<2x3xi32>, tensor<2x3xi32>, tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}
"""


def test_broadcasting_ops_and_constant_like_lowered_and_compiled_give_the_interpreter_s_bits():
    a = np.array([[1.5, -2.0, 0.25], [3.0, 0.5, -0.75]], np.float32)
    inputs = [a, np.array([0.5, 1.0, -2.0], np.float32), np.array([10.0, -3.0], np.float32),
              np.array([[1], [-7]], np.int32), np.array([0, 3, 31], np.int32),
              np.array([[True, False, True], [False, True, False]]), np.array([[2.0, 0.5, 3.0]], np.float32)]
    want, got = _interpret(BROADCASTING, inputs), _compile_and_run(BROADCASTING, inputs)
    for i, (w, g) in enumerate(zip(want, got, strict=True)):
        _assert_within(f"result {i}", w, g, 1 if i in (2, 3) else 0, 0.0)


def _top_k_program(shape, k: int, element: str) -> str:
    t = f"tensor<{'x'.join(map(str, shape))}x{element}>"
    out = [*shape[:-1], k]
    vt, it = f"tensor<{'x'.join(map(str, out))}x{element}>", f"tensor<{'x'.join(map(str, out))}xi32>"
    return (f"func.func @main(%x: {t}) -> ({vt}, {it}) {{\n"
            f"  %v, %i = chlo.top_k(%x, k = {k}) : {t} -> ({vt}, {it})\n"
            f"  return %v, %i : {vt}, {it}\n}}\n")


@pytest.mark.parametrize("shape, k, element", [((10,), 3, "f32"), ((4, 9), 4, "f32"), ((2, 3, 8), 8, "f16"),
                                               ((5, 7), 2, "i32"), ((3, 6), 6, "bf16")])
def test_top_k_lowered_and_compiled_gives_the_interpreter_s_values_and_indices(shape, k, element):
    rng = np.random.default_rng(7)
    dtype = dtype_of(_TYPES.get(element) or T.i32)
    x = rng.integers(-4, 5, size=shape).astype(dtype)  # small integers: ties, kept in order
    if dtype != np.int32:
        flat = x.reshape(-1)
        flat[:4] = np.array([np.nan, -0.0, 0.0, -np.inf], np.float32).astype(dtype)
    text = _top_k_program(shape, k, element)
    want, got = _interpret(text, [x]), _compile_and_run(text, [x])
    for w, g in zip(want, got, strict=True):
        assert w.dtype == g.dtype and np.asarray(w).tobytes() == np.asarray(g).tobytes(), (w, g)


def test_the_user_report_chlo_square_compiles_and_checks_semantics(tmp_path, capsys):
    """`mlirtext opt --lower-to=llvm --check-semantics` on the op flax's LayerNorm emits."""
    path = tmp_path / "square.mlir"
    path.write_text("func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {\n"
                    "  %0 = chlo.square %x : tensor<2x8xf32> -> tensor<2x8xf32>\n"
                    "  return %0 : tensor<2x8xf32>\n}\n")
    assert main(["opt", str(path), "--lower-to=llvm", "--check-semantics"]) == 0, capsys.readouterr().err
    assert "llvm.fmul" in capsys.readouterr().out


@pytest.mark.parametrize("type_name", sorted(_TYPES))
def test_check_semantics_accepts_every_lowering_step(type_name, tmp_path, capsys):
    """`opt --lower-to=llvm --check-semantics` (the interpreter before and after each pass, on
    seeded random inputs) passes on every op, bf16 and f16 included."""
    names = [name for name, spec in UNARY.items() if type_name in spec[3]]
    path = tmp_path / "chlo.mlir"
    path.write_text(_unary_program(names, type_name, 16))
    assert main(["opt", str(path), "--lower-to=llvm", "--check-semantics", "-o", str(tmp_path / "out.mlir")]) == 0, \
        capsys.readouterr().err


def _ragged_dot_program(lhs, rhs, sizes, out, numbers: str) -> str:
    return (f"func.func @main(%l: {lhs}, %r: {rhs}, %g: {sizes}) -> {out} {{\n"
            f"  %0 = \"chlo.ragged_dot\"(%l, %r, %g) {{ragged_dot_dimension_numbers = #chlo.ragged_dot<{numbers}>,\n"
            f"    precision_config = [#chlo<precision DEFAULT>, #chlo<precision DEFAULT>]}}\n"
            f"    : ({lhs}, {rhs}, {sizes}) -> {out}\n  return %0 : {out}\n}}\n")


RAGGED_DOTS = {
    # ragged rows, a group per rhs matrix; the sizes leave the last row outside every group
    "rows": (_ragged_dot_program("tensor<7x4xf32>", "tensor<3x4x5xf32>", "tensor<3xi64>", "tensor<7x5xf32>",
                                 "lhs_batching_dimensions = [], rhs_batching_dimensions = [], "
                                 "lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1], "
                                 "lhs_ragged_dimensions = [0], rhs_group_dimensions = [0]"),
             [(7, 4), (3, 4, 5)], np.array([2, 0, 4], np.int64)),
    # with a batch dimension, the group dimension in the middle of rhs
    "batched rows": (_ragged_dot_program("tensor<2x6x3xf32>", "tensor<2x2x3x4xf32>", "tensor<2xi32>",
                                         "tensor<2x6x4xf32>",
                                         "lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], "
                                         "lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [2], "
                                         "lhs_ragged_dimensions = [1], rhs_group_dimensions = [1]"),
                     [(2, 6, 3), (2, 2, 3, 4)], np.array([4, 2], np.int32)),
    # ragged contracting dimension: one product per group, stacked
    "contracting": (_ragged_dot_program("tensor<3x8xf32>", "tensor<8x5xf32>", "tensor<3xi64>", "tensor<3x3x5xf32>",
                                        "lhs_batching_dimensions = [], rhs_batching_dimensions = [], "
                                        "lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0], "
                                        "lhs_ragged_dimensions = [1], rhs_group_dimensions = []"),
                    [(3, 8), (8, 5)], np.array([3, 1, 4], np.int64)),
}


@pytest.mark.parametrize("case", sorted(RAGGED_DOTS))
def test_ragged_dot_lowered_and_compiled_matches_the_interpreter(case):
    text, shapes, sizes = RAGGED_DOTS[case]
    rng = np.random.default_rng(11)
    inputs = [rng.standard_normal(s).astype(np.float32) for s in shapes] + [sizes]
    (want,), (got,) = _interpret(text, inputs), _compile_and_run(text, inputs)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_chlo_constant_parses_in_its_custom_form_and_lowers():
    text = ("func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
            "  %0 = chlo.constant dense<[1.5, -2.0]> : tensor<2xf32>\n"
            "  %1 = stablehlo.add %x, %0 : tensor<2xf32>\n"
            "  return %1 : tensor<2xf32>\n}\n")
    x = np.array([1.0, 2.0], np.float32)
    (got,) = _compile_and_run(text, [x])
    np.testing.assert_array_equal(got, np.array([2.5, 0.0], np.float32))


MHLO_ONLY = """
func.func @main(%x: tensor<3x6xf32>) -> (tensor<3x6xf32>, tensor<3x6xf32>, tensor<3x2xf32>, tensor<3x2xi32>) {
  %0 = "mhlo.erf"(%x) : (tensor<3x6xf32>) -> tensor<3x6xf32>
  %1 = "mhlo.sinh"(%x) : (tensor<3x6xf32>) -> tensor<3x6xf32>
  %2:2 = "mhlo.topk"(%x) {k = 2 : i64, largest = true} : (tensor<3x6xf32>) -> (tensor<3x2xf32>, tensor<3x2xi32>)
  return %0, %1, %2#0, %2#1 : tensor<3x6xf32>, tensor<3x6xf32>, tensor<3x2xf32>, tensor<3x2xi32>
}
"""


def test_mhlo_s_own_special_functions_and_topk_lower_through_chlo():
    x = np.random.default_rng(5).standard_normal((3, 6)).astype(np.float32) * 2
    want, got = _interpret(MHLO_ONLY, [x]), _compile_and_run(MHLO_ONLY, [x])
    for name, w, g, ulps in zip(("erf", "sinh", "topk values", "topk indices"), want, got, (UNARY["erf"][1], 4, 0, 0)):
        _assert_within(f"mhlo.{name}", w, g, ulps, 0.0)
