"""Element types SPIR-V lacks (i2/i4, bf16, the f8 formats, f6, f4) on vulkan-spirv: kernels hold
them in wider types (targets/gpu/narrow_types.py). The conversions are checked bit for bit
against ml_dtypes (the interpreter's arithmetic) on the interpreter; whole programs run on the
`vulkan` device (lavapipe) and must give the reference device's outputs exactly: same bits
(any NaN for a NaN), every code of each format, rounding ties and the values beside them,
overflow, NaN, infinities, subnormals, negative narrow integers."""
from __future__ import annotations

import numpy as np
import pytest

from mlirtext.api import parse_and_verify
from mlirtext.interpreter import Interpreter
from mlirtext.ir.arrays import dtype_of
from mlirtext.ir import types as T
from mlirtext.targets.gpu.narrow_types import FORMATS, NarrowTypeError, emulate_narrow_types

from .gpu_status import need_tools
from .test_gpu_vulkan import _vulkan_or_skip

ml_dtypes = pytest.importorskip("ml_dtypes")
#: numpy warns when it casts NaN, inf or values past a narrow format's range, which these tests do on purpose.
pytestmark = [pytest.mark.filterwarnings("ignore:invalid value encountered in cast:RuntimeWarning"),
              pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")]

SPECIALS = np.array([0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0x00000000, 0x80000000,
                     0x00000001, 0x007FFFFF, 0x00800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x00400000, 0x00600000],
                    np.uint32).view(np.float32)


def _codes(name: str, count: int = 256) -> np.ndarray:
    """Codes of format `name` as its numpy dtype: every one (bf16, f16: `count` spread over all)."""
    dt = dtype_of(T.FloatType(name))
    if dt.itemsize == 1:   # (f6, f4: the low bits of a byte)
        return np.arange(1 << FORMATS[name].width, dtype=np.uint8).view(dt)
    return np.linspace(0, 0xFFFF, count).astype(np.uint16).view(dt)


def _f32_inputs(name: str, count: int) -> np.ndarray:
    """f32 values to round to format `name`: the midpoints between its neighbouring values
    (ties), the floats just beside them, values past its range, and f32's special values."""
    dt = dtype_of(T.FloatType(name))
    values = np.unique(_codes(name, 4096).astype(np.float32))
    values = values[np.isfinite(values)]
    ties = ((values[1:].astype(np.float64) + values[:-1]) / 2).astype(np.float32)
    beside = np.concatenate([np.nextafter(ties, np.float32(np.inf)), np.nextafter(ties, np.float32(-np.inf))])
    top = float(ml_dtypes.finfo(dt).max)
    past = np.array([top * 1.01, -top * 1.01, top * 4, min(top * 1e6, 3e38)], np.float32)
    rng = np.random.default_rng(len(name))
    pool = np.concatenate([ties, beside])
    picked = rng.choice(pool, min(count, len(pool)), replace=False)
    return np.concatenate([picked, past, SPECIALS])


def _same(got: np.ndarray, want: np.ndarray) -> bool:
    """Same bits, NaN matching any NaN."""
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.dtype.kind in "iub":
        return np.array_equal(got, want)
    g, w = got.astype(np.float64), want.astype(np.float64)
    bits = got.view(f"u{got.dtype.itemsize}") == want.view(f"u{want.dtype.itemsize}")
    return bool(np.all(bits | (np.isnan(g) & np.isnan(w))))


# -- the conversions, interpreted (no GPU needed) ------------------------------------------------
def _conversion_kernel(name: str, n_codes: int, n_values: int) -> str:
    return f"""func.func @k(%codes: memref<{n_codes}x{name}>, %x: memref<{n_values}xf32>,
             %wide: memref<{n_codes}xf32>, %narrow: memref<{n_values}x{name}>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %nc = arith.constant {n_codes} : index
  %nv = arith.constant {n_values} : index
  scf.for %i = %c0 to %nc step %c1 {{
    %c = memref.load %codes[%i] : memref<{n_codes}x{name}>
    %w = arith.extf %c : {name} to f32
    memref.store %w, %wide[%i] : memref<{n_codes}xf32>
  }}
  scf.for %i = %c0 to %nv step %c1 {{
    %v = memref.load %x[%i] : memref<{n_values}xf32>
    %t = arith.truncf %v : f32 to {name}
    memref.store %t, %narrow[%i] : memref<{n_values}x{name}>
  }}
  return
}}"""


@pytest.mark.parametrize("name", FORMATS)
def test_conversions_match_ml_dtypes_bit_for_bit(name):
    """Widening every code and rounding ties, near-ties and specials, through the rewritten
    kernel (storage integers only), gives ml_dtypes' values and codes."""
    dt = dtype_of(T.FloatType(name))
    codes, x = _codes(name, 128), _f32_inputs(name, 150)
    module = parse_and_verify(_conversion_kernel(name, len(codes), len(x))).module
    emulate_narrow_types(module)
    storage = np.int8 if dt.itemsize == 1 else np.int16
    wide, narrow = np.zeros(len(codes), np.float32), np.zeros(len(x), storage)
    Interpreter(module).call("k", [codes.view(storage), x, wide, narrow], reflect=False)
    assert _same(wide, codes.astype(np.float32))
    assert _same(narrow.view(dt), x.astype(dt)), name


def test_f16_conversions_on_opencl_match_numpy_bit_for_bit():
    """opencl-spirv emulates f16 too (OpenCL 1.2 has no half arithmetic), held as bf16 is:
    widening codes spread over all (and the specials: infinities, NaN, subnormals, the largest
    finite) and rounding f32 ties, near-ties, overflow and specials give numpy's values and
    codes. vulkan-spirv keeps its native f16."""
    specials = np.array([0x7C00, 0xFC00, 0x7E00, 0x7C01, 0x0001, 0x03FF, 0x0400, 0x8001, 0x7BFF, 0x8000],
                        np.uint16).view(np.float16)
    codes, x = np.concatenate([_codes("f16", 200), specials]), _f32_inputs("f16", 250)
    text = _conversion_kernel("f16", len(codes), len(x))
    module = parse_and_verify(text).module
    emulate_narrow_types(module, "opencl-spirv")
    wide, narrow = np.zeros(len(codes), np.float32), np.zeros(len(x), np.int16)
    Interpreter(module).call("k", [codes.view(np.int16), x, wide, narrow], reflect=False)
    assert _same(wide, codes.astype(np.float32))
    assert _same(narrow.view(np.float16), x.astype(np.float16))
    module = parse_and_verify(text).module
    emulate_narrow_types(module, "vulkan-spirv")
    assert str(module) == str(parse_and_verify(text).module)


def test_kernel_types_after_the_rewrite():
    """Memory holds the bits as integers; registers hold f32 and i8."""
    text = """func.func @k(%a: memref<4xbf16>, %b: memref<4xi4>, %o: memref<4xf8E4M3FN>) {
  %c0 = arith.constant 0 : index
  %x = memref.load %a[%c0] : memref<4xbf16>
  %i = memref.load %b[%c0] : memref<4xi4>
  %s = arith.addi %i, %i : i4
  %f = arith.sitofp %s : i4 to f8E4M3FN
  %y = arith.truncf %x : bf16 to f8E4M3FN
  %z = arith.addf %f, %y : f8E4M3FN
  memref.store %z, %o[%c0] : memref<4xf8E4M3FN>
  return
}"""
    module = parse_and_verify(text).module
    emulate_narrow_types(module)
    fn = module.regions[0].blocks[0].ops[0]
    assert [str(a.type) for a in fn.regions[0].blocks[0].arguments] == ["memref<4xi16>", "memref<4xi8>", "memref<4xi8>"]
    seen = {str(t) for op in fn.walk() for t in (*op.operand_types, *op.result_types)}
    assert not seen & {"bf16", "i4", "f8E4M3FN"}


def test_an_op_without_emulation_is_reported():
    text = """func.func @k(%a: memref<4xi4>) {
  %c0 = arith.constant 0 : index
  %x = memref.load %a[%c0] : memref<4xi4>
  %y = math.ctpop %x : i4
  memref.store %y, %a[%c0] : memref<4xi4>
  return
}"""
    module = parse_and_verify(text).module
    with pytest.raises(NarrowTypeError, match="kernel @k: vulkan-spirv: 'math.ctpop' on i4 has no emulation"):
        emulate_narrow_types(module)


# -- whole programs on the vulkan device ---------------------------------------------------------
def _run_both(text: str, function: str, args: list, device: str = "reference") -> tuple:
    """Compile for vulkan-spirv (validated by spirv-val); (outputs on `vulkan`, outputs on the
    `reference` device, or with device=None the interpreter's on the source program)."""
    from mlirtext.compiler.driver import compile_module
    from mlirtext.compiler.module_writer import pack
    from mlirtext.vm.vm import LoadedModule
    need_tools("spirv-as", "spirv-val")
    _vulkan_or_skip()
    data = pack(compile_module(parse_and_verify(text).module, "vulkan-spirv", validate=True))
    got = LoadedModule(data, "vulkan").function(function)(*args)
    if device is None:
        return got, Interpreter(parse_and_verify(text).module).call(function, args)
    return got, LoadedModule(data, device).function(function)(*args)


def _float_program(name: str, n: int, m: int) -> str:
    t, x = f"tensor<{n}x{name}>", f"tensor<{m}xf32>"
    return f"""func.func @arith(%a: {t}, %b: {t}) -> ({t}, {t}, {t}, {t}, {t}, {t}, tensor<{n}xf32>, tensor<{n}xi1>) {{
  %add = stablehlo.add %a, %b : {t}
  %sub = stablehlo.subtract %a, %b : {t}
  %mul = stablehlo.multiply %a, %b : {t}
  %div = stablehlo.divide %a, %b : {t}
  %neg = stablehlo.negate %a : {t}
  %max = stablehlo.maximum %a, %b : {t}
  %wide = stablehlo.convert %a : ({t}) -> tensor<{n}xf32>
  %lt = stablehlo.compare LT, %a, %b : ({t}, {t}) -> tensor<{n}xi1>
  return %add, %sub, %mul, %div, %neg, %max, %wide, %lt : {t}, {t}, {t}, {t}, {t}, {t}, tensor<{n}xf32>, tensor<{n}xi1>
}}
func.func @narrow(%x: {x}) -> tensor<{m}x{name}> {{
  %r = stablehlo.convert %x : ({x}) -> tensor<{m}x{name}>
  return %r : tensor<{m}x{name}>
}}"""


@pytest.mark.parametrize("name", FORMATS)
def test_float_arithmetic_and_conversions_on_vulkan(name):
    """Every code against a shuffle of every code (bf16: 512 spread codes): add, subtract,
    multiply, divide, negate, maximum, widening, comparison; and rounding f32 ties, the values
    beside them, overflow, NaN, infinities and denormals to the format."""
    a = _codes(name, 512)
    b = np.random.default_rng(1).permutation(a)
    x = _f32_inputs(name, 400)
    text = _float_program(name, len(a), len(x))
    got, want = _run_both(text, "arith", [a, b])
    for k, (g, w) in enumerate(zip(got, want)):
        assert _same(g, w), f"{name}: result {k}: {np.sum(g != w)} elements differ"
    (g,), (w,) = _run_both(text, "narrow", [x])
    assert _same(g, w) and _same(w, x.astype(w.dtype)), name


@pytest.mark.parametrize("name", ["bf16", "f8E4M3FN", "f8E5M2FNUZ", "f4E2M1FN"])
def test_f64_rounds_once_on_vulkan(name):
    """f64 to a narrow format rounds once, as converting directly does: f64 values just beside
    a tie of the format (which f32 would round onto the tie first) go to the nearer side."""
    ties = _f32_inputs(name, 200).astype(np.float64)
    ties = ties[np.isfinite(ties) & (ties != 0)]
    x = np.concatenate([ties * (1 + 2.0 ** -40), ties * (1 - 2.0 ** -40), ties, [np.nan, np.inf, 1e300, 1e-300]])
    n = len(x)
    text = f"""func.func @f(%x: tensor<{n}xf64>) -> tensor<{n}x{name}> {{
  %r = stablehlo.convert %x : (tensor<{n}xf64>) -> tensor<{n}x{name}>
  return %r : tensor<{n}x{name}>
}}"""
    (got,), (want,) = _run_both(text, "f", [x])
    assert _same(got, want) and _same(want, x.astype(want.dtype))
    assert not _same(want, x.astype(np.float32).astype(want.dtype))   # (the inputs do tell)


def _int_program(t: str, n: int, top: int) -> str:
    """Arithmetic, comparison and conversions of two narrow-integer tensors (`top`: the type's
    largest value, a constant to compare with)."""
    v, f, w, c = f"tensor<{n}x{t}>", f"tensor<{n}xf32>", f"tensor<{n}xi32>", f"tensor<{n}xi1>"
    ops = [("add", f"stablehlo.add %a, %b : {v}", v), ("sub", f"stablehlo.subtract %a, %b : {v}", v),
           ("mul", f"stablehlo.multiply %a, %b : {v}", v), ("div", f"stablehlo.divide %a, %b : {v}", v),
           ("max", f"stablehlo.maximum %a, %b : {v}", v), ("min", f"stablehlo.minimum %a, %b : {v}", v),
           ("xor", f"stablehlo.xor %a, %b : {v}", v),
           ("lt", f"stablehlo.compare LT, %a, %b : ({v}, {v}) -> {c}", c),
           ("top", f"stablehlo.constant dense<{top}> : {v}", v),
           ("eq", f"stablehlo.compare EQ, %a, %top : ({v}, {v}) -> {c}", c),
           ("neg", f"stablehlo.negate %a : {v}", v), ("f", f"stablehlo.convert %a : ({v}) -> {f}", f),
           ("w", f"stablehlo.convert %a : ({v}) -> {w}", w), ("from", f"stablehlo.convert %x : ({f}) -> {v}", v)]
    body = "\n".join(f"  %{name} = {text}" for name, text, _ in ops)
    results = ", ".join(r for _, _, r in ops)
    return f"""func.func @ints(%a: {v}, %b: {v}, %x: {f}) -> ({results}) {{
{body}
  return {", ".join("%" + name for name, _, _ in ops)} : {results}
}}"""


@pytest.mark.parametrize("t", ["i4", "ui4", "i2", "ui2"])
def test_narrow_integers_on_vulkan(t):
    """Every pair of values (negative ones for the signless types; for the unsigned ones the top
    half, whose sign bit is set): results wrap at the width, unsigned ones compare and widen
    unsigned; in-range floats convert (toward zero). (si2/si4 programs do not lower through
    hlo -> tosa yet; signless types are signed for these ops.) Checked against the interpreter
    on the source program, as gpu_status does: the reference device runs the kernels' i4 ops,
    and its `arith.divui` on i4 reads values of 8 and up unmasked (9 / 8 gives 0 there)."""
    width = int(t[-1])
    unsigned = t.startswith("u")
    values = np.arange(1 << width) if unsigned else np.arange(-(1 << (width - 1)), 1 << (width - 1))
    a, b = (g.reshape(-1) for g in np.meshgrid(values, values))
    b = np.where(b == 0, 1, b)   # (division by zero is left to each backend)
    dtype = np.uint8 if unsigned else np.int8
    inside = (a != values[0]) & (a != values[-1])   # (fractions only where truncation stays in range)
    x = a + np.random.default_rng(width).uniform(-0.9, 0.9, a.shape) * inside
    args = [a.astype(dtype), b.astype(dtype), x.astype(np.float32)]
    got, want = _run_both(_int_program(t, len(a), values[-1]), "ints", args, device=None)
    for k, (g, w) in enumerate(zip(got, want)):
        assert _same(g, w), f"{t}: result {k}: got {g[g != w][:8]}, want {w[g != w][:8]}"
    wrapped = (a + b) % (1 << width) if unsigned else (a + b + (1 << (width - 1))) % (1 << width) - (1 << (width - 1))
    assert np.array_equal(want[0], wrapped)


def test_bf16_matmul_sums_and_transcendentals_on_vulkan():
    """A bf16 matmul (accumulating in f32, as dot_general with an f32 accumulator lowers), bf16
    row sums accumulating in bf16 (each partial sum rounded: past 256 these sums of small
    integers need more bits than bf16 has), and bf16 sine, exp and floor (computed in f32,
    rounded to bf16). Checked against the interpreter on the source program: the reference
    device runs linalg on tensors, whose reductions on bf16 the interpreter sums in f32."""
    rng = np.random.default_rng(3)
    text = """func.func @mm(%a: tensor<40x24xbf16>, %b: tensor<24x36xbf16>) -> (tensor<40x36xbf16>, tensor<40xbf16>) {
  %r = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0]
      : (tensor<40x24xbf16>, tensor<24x36xbf16>) -> tensor<40x36xbf16>
  %z = stablehlo.constant dense<0.0> : tensor<bf16>
  %s = stablehlo.reduce(%r init: %z) applies stablehlo.add across dimensions = [1]
      : (tensor<40x36xbf16>, tensor<bf16>) -> tensor<40xbf16>
  return %r, %s : tensor<40x36xbf16>, tensor<40xbf16>
}
func.func @math(%x: tensor<300xbf16>) -> (tensor<300xbf16>, tensor<300xbf16>, tensor<300xbf16>) {
  %s = stablehlo.sine %x : tensor<300xbf16>
  %e = stablehlo.exponential %x : tensor<300xbf16>
  %f = stablehlo.floor %x : tensor<300xbf16>
  return %s, %e, %f : tensor<300xbf16>, tensor<300xbf16>, tensor<300xbf16>
}"""
    bf16 = ml_dtypes.bfloat16
    a, b = (rng.integers(-8, 8, s).astype(np.float32).astype(bf16) for s in ((40, 24), (24, 36)))
    got, want = _run_both(text, "mm", [a, b], device=None)
    assert _same(got[0], want[0]) and _same(got[1], want[1])
    exact = want[0].astype(np.float32).sum(axis=1)
    assert np.any(want[1].astype(np.float32) != exact)   # (the sums were rounded on the way)
    x = rng.uniform(-6, 6, 300).astype(np.float32).astype(bf16)
    got, want = _run_both(text, "math", [x])
    for g, w in zip(got, want):   # within one bf16 step of the reference (f32 polynomials differ)
        g, w = g.astype(np.float32), w.astype(np.float32)
        assert np.all(np.abs(g - w) <= 2.0 ** -7 * np.abs(w) + 1e-6)


def test_compile_refuses_an_op_without_emulation(tmp_path):
    """On the command line: a one-line error naming the kernel and the op, exit 1, nothing written."""
    import subprocess
    import sys
    source = tmp_path / "bad.mlir"
    source.write_text("""func.func @f(%a: tensor<4xi4>, %b: tensor<4xi4>) -> tensor<4xi4> {
  %e = tensor.empty() : tensor<4xi4>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>,
                                        affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<4xi4>, tensor<4xi4>) outs(%e : tensor<4xi4>) {
  ^bb0(%x: i4, %y: i4, %o: i4):
    %lo, %hi = arith.mulsi_extended %x, %y : i4
    linalg.yield %hi : i4
  } -> tensor<4xi4>
  return %r : tensor<4xi4>
}
""")
    out = tmp_path / "bad.vmpack"
    run = subprocess.run([sys.executable, "-m", "mlirtext", "compile", str(source), "--target=vulkan-spirv",
                          "-o", str(out)], capture_output=True, text=True)
    assert run.returncode == 1 and not out.exists()
    assert "kernel @f_dispatch_0" in run.stderr and "'arith.mulsi_extended' on i4 has no emulation" in run.stderr
    assert "Traceback" not in run.stderr
