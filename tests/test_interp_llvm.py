"""The llvm dialect in the reference interpreter: memory, aggregates, vectors, intrinsics,
casts, calls, and lowered linalg programs checked against numpy and the linalg level.

The programs are in tests/programs/llvm/; each is valid MLIR (the oracle test runs them
through iree-opt). `linalg_lowered.mlir` is `linalg_source.mlir` lowered by iree-opt
(--convert-linalg-to-loops --lower-affine --convert-scf-to-cf --iree-convert-to-llvm
--reconcile-unrealized-casts: iree-opt has no --convert-func-to-llvm/--finalize-memref-to-llvm,
and IREE's conversion lowers func/memref/arith/math the same way for void functions).
"""
from __future__ import annotations

import io
import subprocess
from pathlib import Path

import numpy as np
import pytest

from mlirtext.api import parse_and_verify
from mlirtext.dialects import llvm_types as LT
from mlirtext.interpreter import Interpreter, InterpreterError
from mlirtext.interpreter.llvm import call_with_memrefs, memory_of
from mlirtext.interpreter.llvm_memory import (NULL, Memory, Pointer, descriptor_struct, descriptor_to_array,
                                              descriptor_type, field_offset, layout, memref_to_descriptor,
                                              store_descriptor)
from mlirtext.ir import types as T

PROGRAMS = Path(__file__).parent / "programs" / "llvm"
LOWERING = ["--convert-linalg-to-loops", "--lower-affine", "--convert-scf-to-cf", "--iree-convert-to-llvm",
            "--reconcile-unrealized-casts"]


def _module(text: str):
    result = parse_and_verify(text)
    assert not result.diagnostics, result.diagnostics
    return result.module


def _interp(name: str) -> Interpreter:
    return Interpreter(_module((PROGRAMS / name).read_text()))


def _scalars(values):
    return [v.item() if isinstance(v, np.ndarray) else v for v in values]


# ---- the programs are real MLIR ---------------------------------------------------------------
@pytest.mark.oracle
def test_programs_are_accepted_by_iree_opt():
    from tests.oracle import iree_opt_path
    paths = sorted(PROGRAMS.glob("*.mlir"))
    joined = "\n// -----\n".join(p.read_text() for p in paths)   # one iree-opt run for all
    proc = subprocess.run([iree_opt_path(), "--split-input-file", "-"], input=joined, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_programs_parse_and_verify():
    for path in sorted(PROGRAMS.glob("*.mlir")):
        if path.name == "vector_source.mlir":   # the vector dialect: only iree-opt reads it
            continue
        result = parse_and_verify(path.read_text(), str(path))
        assert not result.diagnostics, (path.name, result.diagnostics)


# ---- loops over memory ---------------------------------------------------------------------------
def test_sum_of_heap_and_stack_arrays():
    it = _interp("sum_array.mlir")
    assert it.call("sum_heap", [np.int64(10)])[0] == 3 * 45
    assert it.call("sum_heap", [np.int64(0)])[0] == 0
    assert it.call("sum_stack", [])[0] == np.float32(0.5 + 1.5 + 2.5 + 3.5 + 4.5)
    # malloc'd buffers were freed, allocas died with their call
    memory = memory_of(it)
    assert all(a.freed for a in memory.allocs.values() if a.kind in ("heap", "stack"))


def test_matmul_on_strided_descriptors_matches_numpy():
    it = _interp("matmul_descriptors.mlir")
    memory = memory_of(it)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((5, 7)).astype(np.float32)
    bt = rng.standard_normal((9, 7)).astype(np.float32)   # B = bt.T: a column-major 7x9 view
    da = memref_to_descriptor(memory, a)
    dbt = memref_to_descriptor(memory, bt)
    db = [dbt[0], dbt[1], np.int64(0), np.int64(7), np.int64(9), np.int64(1), np.int64(7)]
    (desc,) = it.call("matmul_alloc", da + db)
    assert isinstance(desc, tuple) and len(desc) == 5
    assert _scalars(desc[3]) == [5, 9] and _scalars(desc[4]) == [9, 1]
    c = descriptor_to_array(memory, desc, np.float32)
    np.testing.assert_allclose(c, a @ bt.T, rtol=1e-5, atol=1e-5)


def _run_lowered(module, name, arrays):
    arrays = [x.copy() for x in arrays]
    assert call_with_memrefs(Interpreter(module), name, arrays) == []   # updates the arrays in place
    return arrays


ELEMENTWISE_INPUTS = (np.array([-2, -0.5, 0, 0.5, 1, 2, 3, -7], np.float32),
                      np.array([-7, -3, -1, 0, 1, 5, 100, -100], np.int32))


def _check_lowered(module):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((4, 5)).astype(np.float32)
    b = rng.standard_normal((5, 6)).astype(np.float32)
    c = rng.standard_normal((4, 6)).astype(np.float32)
    out = _run_lowered(module, "matmul", [a, b, c])
    np.testing.assert_allclose(out[2], c + a @ b, rtol=1e-5, atol=1e-5)
    x, y = ELEMENTWISE_INPUTS
    o, p = np.zeros(8, np.float32), np.zeros(8, np.int32)
    out = _run_lowered(module, "elementwise", [x, y, o, p])
    want_o = ((np.maximum(x, 0) + np.exp(x)) * y.astype(np.float32)).astype(np.float32)
    q = np.trunc(y / 3).astype(np.int32)
    want_p = q + (y - 3 * q) + (y >> 3)
    np.testing.assert_allclose(out[2], want_o, rtol=1e-6)
    np.testing.assert_array_equal(out[3], want_p)
    return out


def test_lowered_linalg_matches_numpy_and_the_linalg_level():
    lowered = _check_lowered(_module((PROGRAMS / "linalg_lowered.mlir").read_text()))
    # the same computation one level up: linalg.generic on memrefs (numpy arrays mutated in place)
    source = Interpreter(_module((PROGRAMS / "linalg_source.mlir").read_text()))
    x, y = ELEMENTWISE_INPUTS
    o, p = np.zeros(8, np.float32), np.zeros(8, np.int32)
    source.call("elementwise", [x, y, o, p])
    np.testing.assert_array_equal(lowered[2], o)
    np.testing.assert_array_equal(lowered[3], p)


def _vectors_reference(a, b):
    f = (a.astype(np.float64) * b + a).astype(np.float32)
    sh = np.concatenate([f, b])[[7, 6, 5, 4, 11, 10, 9, 8]]
    m = np.where(np.isnan(sh) | np.isnan(a), np.nan, np.maximum(sh, a)).astype(np.float32)
    total = np.float32(0)
    for v in m:                                  # reduce.fadd without reassoc: in lane order
        total = np.float32(total + v)
    t = np.float32(total + np.fmax.reduce(b))
    ci = np.where(np.isnan(m), 0, m).astype(np.int32)
    s = ci + ci[3]
    return m, np.array([t], np.float32), np.where(s > ci[3], s, 0).astype(np.int32)


def _check_vectors(module):
    a = np.array([1, -2, 3.5, -4, 5, 6, -7, 8], np.float32)
    for b in (np.array([0.5, 2, -1, 0.25, 3, -3, 2, 1], np.float32),
              np.array([0.5, 2, -1, np.nan, 3, -3, 2, 1], np.float32)):   # NaN: maximum propagates it
        arrays = [a, b, np.zeros(8, np.float32), np.zeros(1, np.float32), np.zeros(8, np.int32)]
        got = _run_lowered(module, "vectors", arrays)[2:]
        for g, w in zip(got, _vectors_reference(a, b)):
            np.testing.assert_array_equal(g, w)


def test_lowered_vector_code_matches_numpy():
    _check_vectors(_module((PROGRAMS / "vector_lowered.mlir").read_text()))


@pytest.mark.oracle
def test_fresh_iree_opt_lowering_runs_and_matches():
    from tests.oracle import iree_opt_path
    proc = subprocess.run([iree_opt_path(), *LOWERING, str(PROGRAMS / "linalg_source.mlir")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "llvm.func @matmul" in proc.stdout
    _check_lowered(_module(proc.stdout))
    proc = subprocess.run([iree_opt_path(), *LOWERING, "--mlir-print-op-generic", str(PROGRAMS / "vector_source.mlir")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    _check_vectors(_module(proc.stdout))


# ---- aggregates and globals ----------------------------------------------------------------------
def test_struct_values_and_struct_memory_layout():
    it = _interp("aggregates.mlir")
    assert it.call("struct_value", [np.int32(3), np.float32(1.5)])[0] == np.float32(4.5)  # undef member = 0
    (s,) = it.call("struct_memory", [])
    assert _scalars(s) == [8, -6, 0.125, 300]
    assert [x.dtype for x in s] == [np.int64, np.int32, np.float64, np.int16]


def test_globals_strings_dense_and_initializer_regions():
    it = _interp("aggregates.mlir")
    it.stdout = io.StringIO()
    assert it.call("globals", [])[0] == 30 + 3.5 + 8 + 2.25
    assert it.call("globals", [])[0] == 30 + 3.5 + 9 + 2.25   # @counter is mutable and persists
    assert it.stdout.getvalue() == "hello\n" * 2
    with pytest.raises(InterpreterError, match="'llvm.store': write to constant global @table"):
        it.call("write_constant", [])


def test_layout_follows_the_llvm_data_layout():
    s = LT.LLVMStructType((T.i8, T.i32, T.f64, T.i16))
    assert layout(s) == (24, 8) and [field_offset(s, i) for i in range(4)] == [0, 4, 8, 16]
    packed = LT.LLVMStructType((T.i8, T.i32, T.f64, T.i16), packed=True)
    assert layout(packed) == (15, 1) and field_offset(packed, 2) == 5
    assert layout(LT.LLVMArrayType(3, s)) == (72, 8)
    assert layout(T.VectorType((3,), T.f32)) == (16, 16)
    assert layout(T.VectorType((8,), T.i1)) == (1, 1)
    assert layout(T.IntegerType(17)) == (4, 4)
    assert layout(LT.PTR) == (8, 8)


def test_values_round_trip_through_memory():
    from mlirtext.interpreter.llvm_memory import decode, encode, size_of
    memory = Memory()
    target = memory.allocate(8, "heap")
    t = LT.LLVMStructType((T.i1, LT.LLVMArrayType(2, T.VectorType((3,), T.i1)), T.f16, LT.PTR,
                           T.VectorType((3,), T.f32), LT.LLVMStructType((T.i8, T.i64), packed=True),
                           T.IntegerType(17)))
    value = (np.array(True), [np.array([True, False, True]), np.array([False, False, True])], np.array(1.5, np.float16),
             target + 4, np.array([1, 2, 3], np.float32), (np.array(-1, np.int8), np.array(2 ** 40, np.int64)),
             np.array(-65536, np.int32))
    raw = encode(value, t, memory)
    assert len(raw) == size_of(t) == 48
    back = decode(np.frombuffer(raw, np.uint8), 0, t, memory)
    assert back[3] == target + 4
    assert _scalars([back[0], back[2], back[6]]) == [True, 1.5, -65536]
    assert [v.tolist() for v in back[1]] == [[True, False, True], [False, False, True]]
    assert back[4].tolist() == [1, 2, 3] and _scalars(back[5]) == [-1, 2 ** 40]


# ---- control flow and calls ----------------------------------------------------------------------
def test_switch_recursion_and_indirect_calls():
    it = _interp("control.mlir")
    assert [it.call("classify", [np.int32(x)])[0].item() for x in (0, 1, 2, -1, 7)] == [100, 201, 202, 300, 70]
    assert it.call("fact", [np.int64(20)])[0] == 2432902008176640000
    assert it.call("indirect", [np.bool_(True), np.int64(5)])[0] == 120
    assert it.call("indirect", [np.bool_(False), np.int64(5)])[0] == 10
    assert it.call("dead", [np.int32(4)])[0] == 4
    with pytest.raises(InterpreterError, match="'llvm.unreachable' was reached") as e:
        it.call("dead", [np.int32(-1)])
    assert e.value.span is not None and e.value.span.line_col[0] == 60


def test_entry_arguments_are_checked():
    it = _interp("control.mlir")
    with pytest.raises(InterpreterError, match="takes 2 argument"):
        it.call("indirect", [np.bool_(True)])
    with pytest.raises(InterpreterError, match="expected a pointer"):
        Interpreter(_module("llvm.func @f(%p: !llvm.ptr) {\n  llvm.return\n}")).call("f", [np.int64(1)])


# ---- vectors, intrinsics, casts ----------------------------------------------------------------------
def test_vector_ops_and_reductions():
    it = _interp("vectors.mlir")
    a = np.array([1, 2, 3, 4], np.float32)
    b = np.array([5, np.nan, -7, 8], np.float32)
    (ins, e, sh, fmax, fadd), = it.call("vector_ops", [a, b])
    np.testing.assert_array_equal(ins, [-21, 2, 3, 4])
    assert e == -21 and e.dtype == np.float32
    np.testing.assert_array_equal(sh, [8, 1, np.nan, 3])        # mask 7, 0, 5, 2 over a ++ b
    assert fmax == 8                                           # reduce.fmax ignores NaN
    assert fadd == np.float32(10.5)                            # ordered, from the start value
    (x, y, z, zs, lt), = it.call("vector_memory", [np.array([1, 2, 3, -1], np.int8), np.int64(-4294967294)])
    assert x == y == np.int32(-16580095)                       # 0xFF030201: little-endian
    np.testing.assert_array_equal(z, [2, -1])
    assert zs == 1
    np.testing.assert_array_equal(lt, [False, False, False, True])


def test_float_intrinsics():
    it = _interp("intrinsics.mlir")
    x = np.array([-2.5, -0.5, 0.5, 1.5, np.nan, -0.0], np.float32)
    y = np.array([1, 2, np.nan, -3, 1, 0.0], np.float32)
    (fabs, sqrt, minnum, maximum, rnd, rne, copysign, fma, pw, minimum), = it.call("float_intrinsics", [x, y])
    np.testing.assert_array_equal(fabs, np.abs(x))
    np.testing.assert_array_equal(sqrt, np.sqrt(np.abs(x)))
    np.testing.assert_array_equal(minnum, [-2.5, -0.5, 0.5, -3, 1, minnum[5]])   # NaN operands ignored
    np.testing.assert_array_equal(maximum, [1, 2, np.nan, 1.5, np.nan, 0])       # NaN propagates
    np.testing.assert_array_equal(rnd, [-3, -1, 1, 2, np.nan, -0.0])             # half away from zero
    assert np.signbit(rnd[5]) and not np.signbit(maximum[5]) and np.signbit(minimum[5])
    np.testing.assert_array_equal(rne, [-2, -0.0, 0, 2, np.nan, -0.0])           # half to even
    np.testing.assert_array_equal(copysign, [-1, -2, np.nan, 3, 1, -0.0])
    np.testing.assert_allclose(fma, x * y + x)
    np.testing.assert_allclose(pw, np.abs(x) ** y)
    round_edge = Interpreter(_module(
        "llvm.func @r(%x: f32) -> f32 {\n  %0 = llvm.intr.round(%x) : (f32) -> f32\n  llvm.return %0 : f32\n}"))
    assert round_edge.call("r", [np.float32(0.49999997)])[0] == 0    # no x + 0.5 rounding error


def test_integer_intrinsics():
    it = _interp("intrinsics.mlir")
    a = np.array([0, 1, -128, 100], np.int8)
    b = np.array([3, -1, -1, 100], np.int8)
    got = [r.tolist() for r in it.call("int_intrinsics", [a, b])[0]]
    assert got == [[8, 7, 0, 1],            # ctlz (zero: the width)
                   [8, 0, 7, 2],            # cttz
                   [0, 1, 1, 3],            # ctpop
                   [3, -1, -1, 100],        # umax: -1 is 255
                   [0, -1, -128, 100],      # smin
                   [0, 1, -128, 100],       # abs: INT_MIN stays
                   [3, 0, -128, 127],       # sadd.sat
                   [0, 0, 0, 0],            # usub.sat
                   [0, -128, 1, 38],        # bitreverse
                   [0, -1, 127, 70]]        # fshl by b mod 8
    assert it.call("bswap", [np.int32(0x12345678)])[0] == 0x78563412


def test_call_intrinsic_by_name_runs_the_intrinsic():
    """`llvm.call_intrinsic "llvm.smax.i32"` finds llvm.intr.smax by its `intrin` name (the type suffix
    dropped); the operand bundles are not its arguments."""
    it = Interpreter(_module("""
llvm.func @f(%a: i32, %b: i32) -> i32 {
  %r = llvm.call_intrinsic "llvm.smax.i32"(%a, %b) ["tag"(%a : i32)] : (i32, i32) -> i32
  llvm.return %r : i32
}"""))
    assert it.call("f", [np.int32(-3), np.int32(7)])[0] == 7
    assert it.call("f", [np.int32(9), np.int32(7)])[0] == 9


def test_integer_vector_reductions_in_generic_form():
    ops = ["add", "mul", "and", "or", "xor", "smax", "smin", "umax", "umin"]
    body = "\n".join(f'  %r{i} = "llvm.intr.vector.reduce.{o}"(%v) : (vector<4xi8>) -> i8\n'
                     f"  %s{i + 1} = llvm.insertvalue %r{i}, %s{i}[{i}] : !llvm.array<9 x i8>"
                     for i, o in enumerate(ops))
    it = Interpreter(_module("llvm.func @f(%v: vector<4xi8>) -> !llvm.array<9 x i8> {\n"
                             "  %s0 = llvm.mlir.undef : !llvm.array<9 x i8>\n" + body +
                             "\n  llvm.return %s9 : !llvm.array<9 x i8>\n}"))
    got = _scalars(it.call("f", [np.array([3, -1, 100, 7], np.int8)])[0])
    assert got == [109, -52, 0, -1, -97, 100, -1, -1, 3]   # wrapping add/mul; umax/umin see -1 as 255


def test_cast_edges():
    it = _interp("casts.mlir")
    x = np.array([1e10, -1e10, np.nan, 127.9, -128.9, -0.5], np.float32)
    assert it.call("fptosi", [x])[0].tolist() == [127, -128, 0, 127, -128, 0]     # poison: saturate, NaN -> 0
    u = np.array([70000, -5, np.nan, 65535.5, 3.7, 1e30], np.float32)
    assert it.call("fptoui", [u])[0].view(np.uint16).tolist() == [65535, 0, 0, 65535, 3, 65535]
    (s,) = it.call("int_casts", [np.int32(-200), np.bool_(True)])
    assert _scalars(s) == [56, 4294967096, -200, 1, -1, float(np.float32(4294967096)), -1.0, False]
    (f,) = it.call("float_casts", [np.float64(1 / 3)])
    assert f[0] == np.float32(1 / 3) and f[1] == np.float16(1 / 3)
    assert f[2] == np.array(1 / 3).view(np.int64) and f[3] == np.float64(np.float16(1 / 3))


def test_fptosi_saturates_at_64_bits():
    it = Interpreter(_module("""
llvm.func @f(%x: f64) -> i64 {
  %0 = llvm.fptosi %x : f64 to i64
  llvm.return %0 : i64
}
llvm.func @g(%x: f64) -> i64 {
  %0 = llvm.fptoui %x : f64 to i64
  llvm.return %0 : i64
}"""))
    assert [it.call("f", [np.float64(v)])[0].item() for v in (1e30, -1e30, 2.0 ** 62, np.nan)] == \
        [2 ** 63 - 1, -2 ** 63, 2 ** 62, 0]
    assert [it.call("g", [np.float64(v)])[0].view(np.uint64).item() for v in (1e30, -3.0, 2.0 ** 63)] == \
        [2 ** 64 - 1, 0, 2 ** 63]


def test_mlirtext_run_on_an_llvm_function(capsys):
    from mlirtext.cli import main
    assert main(["run", str(PROGRAMS / "control.mlir"), "--function", "fact", "--input=i64=10"]) == 0
    assert capsys.readouterr().out == "EXEC @fact\nresult[0]: i64=3628800\n"
    assert main(["run", str(PROGRAMS / "memory_errors.mlir"), "--function", "null_deref"]) == 1
    assert "'llvm.load': null pointer dereference" in capsys.readouterr().err
    assert main(["run", str(PROGRAMS / "aggregates.mlir"), "--function", "struct_memory"]) == 1
    assert "only integers, floats and vectors" in capsys.readouterr().err


def test_integer_arithmetic_edges():
    it = _interp("casts.mlir")
    assert _scalars(it.call("int_arith", [np.int32(-7), np.int32(2)])[0]) == \
        [-3, 2147483644, -1, 1, -2, 1073741822, -28, 49]
    # division by zero and shifts by >= the width: the fixed values arith's semantics give
    assert _scalars(it.call("int_arith", [np.int32(-7), np.int32(0)])[0])[:4] == [0, 0, 0, 0]
    assert _scalars(it.call("int_arith", [np.int32(-7), np.int32(40)])[0])[4:7] == [-1, 0, 0]
    assert it.call("i1_arith", [np.bool_(True), np.bool_(True)])[0].tolist() == [False, False, True]
    (c,) = it.call("compare", [np.array([1, np.nan, 3, 0], np.float32), np.array([2, 1, np.nan, 0], np.float32),
                               np.array([-1, 1, 5, 0], np.int32), np.array([1, -1, 5, 0], np.int32)])
    assert [v.tolist() for v in c] == [[True, False, False, False], [True, True, True, False],
                                       [False, True, False, False], [False, True, False, False]]


def test_pointer_integer_round_trip():
    it = Interpreter(_module("""
llvm.func @f() -> !llvm.struct<(i64, i1, i64)> {
  %c = llvm.mlir.constant(4 : i32) : i32
  %p = llvm.alloca %c x i32 : (i32) -> !llvm.ptr
  %q = llvm.getelementptr %p[3] : (!llvm.ptr) -> !llvm.ptr, i32
  %i = llvm.ptrtoint %q : !llvm.ptr to i64
  %r = llvm.inttoptr %i : i64 to !llvm.ptr
  %v = llvm.mlir.constant(77 : i32) : i32
  llvm.store %v, %r : i32, !llvm.ptr
  %w = llvm.load %q : !llvm.ptr -> i32
  %x = llvm.sext %w : i32 to i64
  %same = llvm.icmp "eq" %q, %r : !llvm.ptr
  %null = llvm.mlir.zero : !llvm.ptr
  %one = llvm.getelementptr %null[1] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(i8, f64)>
  %size = llvm.ptrtoint %one : !llvm.ptr to i64
  %s0 = llvm.mlir.undef : !llvm.struct<(i64, i1, i64)>
  %s1 = llvm.insertvalue %x, %s0[0] : !llvm.struct<(i64, i1, i64)>
  %s2 = llvm.insertvalue %same, %s1[1] : !llvm.struct<(i64, i1, i64)>
  %s3 = llvm.insertvalue %size, %s2[2] : !llvm.struct<(i64, i1, i64)>
  llvm.return %s3 : !llvm.struct<(i64, i1, i64)>
}"""))
    assert _scalars(it.call("f", [])[0]) == [77, True, 16]     # sizeof through a GEP on null


# ---- memory errors ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name, parts", [
    ("out_of_bounds", ["'llvm.load': out of bounds: 4 byte(s) at offset 16 of stack allocation (llvm.alloca) "
                       "of 16 byte(s)"]),
    ("null_deref", ["'llvm.load': null pointer dereference"]),
    ("use_after_free", ["'llvm.store': use after free of heap allocation of 16 byte(s)"]),
    ("double_free", ["'llvm.call' @free: double free"]),
    ("use_after_return", ["'llvm.load': use after free of stack allocation", "(its function has returned)"]),
    ("straddle", ["'llvm.load': out of bounds: 8 byte(s) at offset 0 of stack allocation", "of 4 byte(s)"]),
    ("memcpy_overflow", ["'llvm.intr.memcpy': out of bounds: 32 byte(s)"]),
    ("wild_pointer", ["'llvm.load': address 0x3039 is not in any allocation"]),
])
def test_memory_errors_name_the_op(name, parts):
    it = _interp("memory_errors.mlir")
    with pytest.raises(InterpreterError) as e:
        it.call(name, [])
    for part in parts:
        assert part in str(e.value)
    assert e.value.span is not None


def test_external_without_semantics_is_a_clear_error():
    it = Interpreter(_module("llvm.func @mystery(i32)\nllvm.func @f() {\n  %c = llvm.mlir.constant(1 : i32) : i32\n"
                             "  llvm.call @mystery(%c) : (i32) -> ()\n  llvm.return\n}"))
    with pytest.raises(InterpreterError, match="external function '@mystery'"):
        it.call("f", [])


def test_c_library_externals():
    it = _interp("externals.mlir")
    (words,) = it.call("buffers", [])
    assert [int(w) & (2 ** 64 - 1) for w in words] == [0, 0, 0x1111111100000000, 0x1111111111111111, 0]
    it.stdout = io.StringIO()
    assert it.call("print", [np.float32(1.5)])[0] == 28
    assert it.stdout.getvalue() == "n=-42 s=abc x=1.50 4.5e+00%\n"


def test_memref_copy_runtime_function_with_strided_source():
    it = _interp("memref_copy.mlir")
    memory = memory_of(it)
    base = np.arange(12, dtype=np.float32).reshape(3, 4)
    src = memref_to_descriptor(memory, base)
    view = [src[0], src[1], np.int64(1), np.int64(2), np.int64(3), np.int64(1), np.int64(4)]  # base[:, 1:3].T
    dst = memref_to_descriptor(memory, np.zeros((2, 3), np.float32))
    it.call("copy", view + dst)
    np.testing.assert_array_equal(descriptor_to_array(memory, dst, np.float32), base[:, 1:3].T)


# ---- printing -----------------------------------------------------------------------------------
def test_print_functions_and_print_memref():
    it = _interp("print.mlir")
    it.stdout = io.StringIO()
    it.call("main", [])
    lines = it.stdout.getvalue().split("\n")
    assert lines[:2] == ["( 1.5, -2 )", "42"]
    assert lines[2].startswith("Unranked Memref base@ = 0x") and lines[2].endswith(
        "rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data = ")
    from mlirtext.interpreter.runtime_calls import format_memref  # the data part as runtime_calls prints it
    expected = format_memref(np.arange(6, dtype=np.float32).reshape(2, 3)).split("\n", 1)[1]
    assert "\n".join(lines[3:]) == expected


# ---- descriptors ----------------------------------------------------------------------------------
def test_descriptor_round_trip_and_views():
    memory = Memory()
    a = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    pieces = memref_to_descriptor(memory, a)
    assert isinstance(pieces[0], Pointer) and pieces[0] == pieces[1]
    assert _scalars(pieces[2:]) == [0, 2, 3, 4, 12, 4, 1]
    np.testing.assert_array_equal(descriptor_to_array(memory, pieces, np.float64), a)
    np.testing.assert_array_equal(descriptor_to_array(memory, descriptor_struct(pieces), np.float64), a)
    view = descriptor_to_array(memory, pieces, np.float64, copy=False)
    view[1, 2, 3] = -1.0
    assert descriptor_to_array(memory, pieces, np.float64)[1, 2, 3] == -1.0
    # a strided, offset subview: every other column of row 1, reversed
    sub = [NULL, pieces[1], np.int64(12 + 3), np.int64(2), np.int64(-2)]
    np.testing.assert_array_equal(descriptor_to_array(memory, sub, np.float64), [15.0, 13.0])
    # a transposed copy keeps its values
    t = memref_to_descriptor(memory, a.T)
    np.testing.assert_array_equal(descriptor_to_array(memory, t, np.float64), a.T)
    stored = store_descriptor(memory, pieces)      # the C interface's pointer to the struct
    assert memory.load(stored, descriptor_type(3), "test")[3] == pieces[3:6]
    empty = memref_to_descriptor(memory, np.zeros((0, 3), np.int32))
    assert descriptor_to_array(memory, empty, np.int32).shape == (0, 3)
