"""scf, cf, memref semantics and the runner-utils calls (printMemref*, printF32, ...)."""
from __future__ import annotations

import io

import numpy as np
import pytest

from mlirtext.api import parse_and_verify
from mlirtext.interpreter import Interpreter, InterpreterError
from mlirtext.interpreter.runtime_calls import format_memref


def interp_for(src: str) -> Interpreter:
    result = parse_and_verify(src)
    assert result.ok, [d.format() for d in result.diagnostics]
    it = Interpreter(result.module)
    it.stdout = io.StringIO()
    return it


def run(src: str, fn: str, *args):
    return interp_for(src).call(fn, list(args))


# ---- scf ----------------------------------------------------------------------------------------
def test_for_with_iter_args_index_and_integer_ivs():
    src = """
    func.func @f(%n: index) -> (index, i32, i8) {
      %c0 = arith.constant 0 : index
      %c3 = arith.constant 3 : index
      %s = scf.for %i = %c0 to %n step %c3 iter_args(%acc = %c0) -> (index) {
        %t = arith.addi %acc, %i : index
        scf.yield %t : index
      }
      %lo = arith.constant -4 : i32
      %hi = arith.constant 3 : i32
      %one = arith.constant 1 : i32
      %z = arith.constant 0 : i32
      %p = scf.for %j = %lo to %hi step %one iter_args(%a = %z) -> (i32) : i32 {
        %sq = arith.muli %j, %j : i32
        %t = arith.addi %a, %sq : i32
        scf.yield %t : i32
      }
      %ulo = arith.constant 100 : i8
      %uhi = arith.constant -56 : i8
      %ustep = arith.constant 50 : i8
      %cnt0 = arith.constant 0 : i8
      %c1 = arith.constant 1 : i8
      %u = scf.for unsigned %k = %ulo to %uhi step %ustep iter_args(%c = %cnt0) -> (i8) : i8 {
        %t = arith.addi %c, %c1 : i8
        scf.yield %t : i8
      }
      return %s, %p, %u : index, i32, i8
    }"""
    s, p, u = run(src, "f", np.array(10, np.int64))
    assert int(s) == 0 + 3 + 6 + 9
    assert int(p) == sum(j * j for j in range(-4, 3)) and p.dtype == np.int32
    assert int(u) == 2  # unsigned 100 .. 200 step 50 (-56 is 200 unsigned)


def test_zero_trip_loop_returns_inits_and_nonpositive_step_is_an_error():
    src = """
    func.func @f(%a: index, %b: index, %s: index) -> index {
      %c7 = arith.constant 7 : index
      %r = scf.for %i = %a to %b step %s iter_args(%x = %c7) -> (index) {
        scf.yield %i : index
      }
      return %r : index
    }"""
    (r,) = run(src, "f", np.array(5, np.int64), np.array(5, np.int64), np.array(1, np.int64))
    assert int(r) == 7
    with pytest.raises(InterpreterError, match="step"):
        run(src, "f", np.array(0, np.int64), np.array(5, np.int64), np.array(0, np.int64))


def test_while_if_index_switch_execute_region():
    src = """
    func.func @collatz(%n: i32) -> (i32, i32) {
      %c1 = arith.constant 1 : i32
      %c2 = arith.constant 2 : i32
      %c3 = arith.constant 3 : i32
      %z = arith.constant 0 : i32
      %r:2 = scf.while (%x = %n, %steps = %z) : (i32, i32) -> (i32, i32) {
        %more = arith.cmpi ne, %x, %c1 : i32
        scf.condition(%more) %x, %steps : i32, i32
      } do {
      ^bb0(%y: i32, %s: i32):
        %rem = arith.remsi %y, %c2 : i32
        %even = arith.cmpi eq, %rem, %z : i32
        %next = scf.if %even -> i32 {
          %h = arith.divsi %y, %c2 : i32
          scf.yield %h : i32
        } else {
          %m = arith.muli %y, %c3 : i32
          %p = arith.addi %m, %c1 : i32
          scf.yield %p : i32
        }
        %s1 = arith.addi %s, %c1 : i32
        scf.yield %next, %s1 : i32, i32
      }
      return %r#0, %r#1 : i32, i32
    }
    func.func @switch(%i: index) -> i32 {
      %r = scf.index_switch %i -> i32
      case 2 {
        %a = arith.constant 20 : i32
        scf.yield %a : i32
      }
      case 5 {
        %b = scf.execute_region -> i32 {
          %a = arith.constant 50 : i32
          scf.yield %a : i32
        }
        scf.yield %b : i32
      }
      default {
        %d = arith.constant -1 : i32
        scf.yield %d : i32
      }
      return %r : i32
    }"""
    x, steps = run(src, "collatz", np.array(27, np.int32))
    assert int(x) == 1 and int(steps) == 111
    assert [int(run(src, "switch", np.array(i, np.int64))[0]) for i in (2, 5, 7)] == [20, 50, -1]


def test_parallel_with_reduce():
    src = """
    func.func @f(%m: memref<3x4xi32>) -> i32 {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c3 = arith.constant 3 : index
      %c4 = arith.constant 4 : index
      %z = arith.constant 0 : i32
      %r = scf.parallel (%i, %j) = (%c0, %c0) to (%c3, %c4) step (%c1, %c1) init (%z) -> i32 {
        %v = memref.load %m[%i, %j] : memref<3x4xi32>
        scf.reduce(%v : i32) {
        ^bb0(%a: i32, %b: i32):
          %s = arith.addi %a, %b : i32
          scf.reduce.return %s : i32
        }
      }
      return %r : i32
    }"""
    m = np.arange(12, dtype=np.int32).reshape(3, 4)
    (r,) = run(src, "f", m)
    assert int(r) == 66


# ---- cf -------------------------------------------------------------------------------------------
def test_cf_loop_switch_and_assert():
    src = """
    func.func @sum(%n: i32) -> i32 {
      %z = arith.constant 0 : i32
      %one = arith.constant 1 : i32
      cf.br ^loop(%z, %z : i32, i32)
    ^loop(%i: i32, %acc: i32):
      %done = arith.cmpi sge, %i, %n : i32
      cf.cond_br %done, ^exit(%acc : i32), ^body
    ^body:
      %a = arith.addi %acc, %i : i32
      %i1 = arith.addi %i, %one : i32
      cf.br ^loop(%i1, %a : i32, i32)
    ^exit(%r: i32):
      return %r : i32
    }
    func.func @sw(%x: i32) -> i32 {
      cf.switch %x : i32, [
        default: ^d,
        3: ^three(%x : i32),
        7: ^seven
      ]
    ^d:
      %m = arith.constant -1 : i32
      return %m : i32
    ^three(%v: i32):
      return %v : i32
    ^seven:
      %s = arith.constant 70 : i32
      return %s : i32
    }
    func.func @check(%c: i1) {
      cf.assert %c, "the flag must be set"
      return
    }"""
    (r,) = run(src, "sum", np.array(10, np.int32))
    assert int(r) == 45
    assert [int(run(src, "sw", np.array(v, np.int32))[0]) for v in (3, 7, 0)] == [3, 70, -1]
    assert run(src, "check", np.array(True)) == []
    with pytest.raises(InterpreterError, match="the flag must be set"):
        run(src, "check", np.array(False))


# ---- memref ------------------------------------------------------------------------------------------
def test_memref_alloc_store_load_subview_reinterpret_reshape_copy():
    src = """
    memref.global "private" constant @table : memref<4xi32> = dense<[10, 20, 30, 40]>
    func.func @f(%n: index) -> (memref<?x4xf32>, memref<8xf32>, i32, f32, f32) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %m = memref.alloc(%n) : memref<?x4xf32>
      scf.for %i = %c0 to %n step %c1 {
        scf.for %j = %c0 to %c2 step %c1 {
          %ii = arith.index_cast %i : index to i32
          %f = arith.sitofp %ii : i32 to f32
          memref.store %f, %m[%i, %j] : memref<?x4xf32>
        }
      }
      %sv = memref.subview %m[1, 1] [2, 2] [1, 2] : memref<?x4xf32> to memref<2x2xf32, strided<[4, 2], offset: 5>>
      %nine = arith.constant 9.0 : f32
      memref.store %nine, %sv[%c1, %c1] : memref<2x2xf32, strided<[4, 2], offset: 5>>
      %flat = memref.reinterpret_cast %m to offset: [0], sizes: [8], strides: [1] : memref<?x4xf32> to memref<8xf32>
      %c = memref.collapse_shape %m [[0, 1]] : memref<?x4xf32> into memref<?xf32>
      %e = memref.expand_shape %c [[0, 1]] output_shape [%n, 4] : memref<?xf32> into memref<?x4xf32>
      %v = memref.load %e[%c2, %c1] : memref<?x4xf32>
      %g = memref.get_global @table : memref<4xi32>
      %t = memref.load %g[%c2] : memref<4xi32>
      %dst = memref.alloc() : memref<8xf32>
      memref.copy %flat, %dst : memref<8xf32> to memref<8xf32>
      %w = memref.load %dst[%c1] : memref<8xf32>
      return %m, %flat, %t, %v, %w : memref<?x4xf32>, memref<8xf32>, i32, f32, f32
    }"""
    m, flat, t, v, w = run(src, "f", np.array(3, np.int64))
    want = np.zeros((3, 4), np.float32)
    want[:, :2] = np.arange(3)[:, None]
    want[2, 3] = 9
    np.testing.assert_array_equal(m, want)
    np.testing.assert_array_equal(flat, want.reshape(-1)[:8])
    assert int(t) == 30 and float(v) == 2.0 and float(w) == 0.0


def test_loaded_scalar_does_not_alias_the_buffer():
    src = """
    func.func @f(%m: memref<2xi32>) -> i32 {
      %c0 = arith.constant 0 : index
      %v = memref.load %m[%c0] : memref<2xi32>
      %z = arith.constant 5 : i32
      memref.store %z, %m[%c0] : memref<2xi32>
      return %v : i32
    }"""
    (v,) = run(src, "f", np.array([1, 2], np.int32))
    assert int(v) == 1


def test_atomic_rmw_returns_old_value():
    src = """
    func.func @f(%m: memref<3xf32>) -> f32 {
      %c1 = arith.constant 1 : index
      %x = arith.constant 2.5 : f32
      %old = memref.atomic_rmw addf %x, %m[%c1] : (f32, memref<3xf32>) -> f32
      return %old : f32
    }"""
    m = np.array([1, 2, 3], np.float32)
    (old,) = run(src, "f", m)
    assert float(old) == 2.0 and m[1] == 4.5


# ---- runner utils ------------------------------------------------------------------------------------
def test_print_memref_format_of_strided_subview_and_scalars():
    src = """
    func.func private @printMemrefF32(memref<*xf32>)
    func.func private @printMemrefI32(memref<*xi32>)
    func.func private @printF32(f32)
    func.func private @printI64(i64)
    func.func private @printNewline()
    func.func private @printComma()
    func.func @main() {
      %m = memref.alloc() : memref<3x4xf32>
      %c = arith.constant 1.5 : f32
      linalg.fill ins(%c : f32) outs(%m : memref<3x4xf32>)
      %sv = memref.subview %m[1, 1] [2, 2] [1, 2] : memref<3x4xf32> to memref<2x2xf32, strided<[4, 2], offset: 5>>
      %u = memref.cast %sv : memref<2x2xf32, strided<[4, 2], offset: 5>> to memref<*xf32>
      call @printMemrefF32(%u) : (memref<*xf32>) -> ()
      %s = memref.alloc() : memref<i32>
      %u2 = memref.cast %s : memref<i32> to memref<*xi32>
      call @printMemrefI32(%u2) : (memref<*xi32>) -> ()
      %f = arith.constant 0.1 : f32
      call @printF32(%f) : (f32) -> ()
      call @printComma() : () -> ()
      %i = arith.constant -42 : i64
      call @printI64(%i) : (i64) -> ()
      call @printNewline() : () -> ()
      return
    }"""
    it = interp_for(src)
    it.call("main", [])
    lines = it.stdout.getvalue().splitlines()
    assert lines[0].startswith("Unranked Memref base@ = 0x")
    assert lines[0].endswith("rank = 2 offset = 5 sizes = [2, 2] strides = [4, 2] data = ")
    assert lines[1:3] == ["[[1.5,   1.5], ", " [1.5,   1.5]]"]
    assert lines[3].endswith("rank = 0 offset = 0 sizes = [] strides = [] data = ")
    assert lines[4] == "[0]"
    assert lines[5] == "0.1, -42"


def test_format_memref_3d_and_empty():
    text = format_memref(np.arange(8, dtype=np.int32).reshape(2, 2, 2))
    assert text.split("data = \n")[1] == "[[[0,    1], \n  [2,    3]], \n [[4,    5], \n  [6,    7]]]\n"
    assert format_memref(np.zeros((0, 3), np.float32)).endswith("data = \n[[]]\n")


def test_call_to_unknown_declaration_is_an_error():
    src = """
    func.func private @mystery(i32)
    func.func @main() {
      %c = arith.constant 1 : i32
      call @mystery(%c) : (i32) -> ()
      return
    }"""
    with pytest.raises(InterpreterError, match="declaration"):
        run(src, "main")


def test_out_of_bounds_store_is_an_error():
    src = """
    func.func @f(%m: memref<4xf32>, %i: index) {
      %c = arith.constant 1.0 : f32
      memref.store %c, %m[%i] : memref<4xf32>
      return
    }"""
    with pytest.raises(InterpreterError, match="out of bounds"):
        run(src, "f", np.zeros(4, np.float32), np.array(-1, np.int64))
    with pytest.raises(InterpreterError, match="out of bounds"):
        run(src, "f", np.zeros(4, np.float32), np.array(4, np.int64))


def test_strided_metadata_and_reinterpret_cast_share_the_buffer():
    src = """
    func.func @f(%m: memref<4x6xf32>) -> (memref<2x3xf32, strided<[6, 2], offset: 7>>, index, index, index) {
      %base, %off, %s:2, %st:2 = memref.extract_strided_metadata %m : memref<4x6xf32> -> memref<f32>, index, index, index, index, index
      %v = memref.reinterpret_cast %base to offset: [7], sizes: [2, 3], strides: [6, 2] : memref<f32> to memref<2x3xf32, strided<[6, 2], offset: 7>>
      %c = arith.constant -1.0 : f32
      %c0 = arith.constant 0 : index
      memref.store %c, %v[%c0, %c0] : memref<2x3xf32, strided<[6, 2], offset: 7>>
      %b2, %off2, %s2:2, %st2:2 = memref.extract_strided_metadata %v : memref<2x3xf32, strided<[6, 2], offset: 7>> -> memref<f32>, index, index, index, index, index
      return %v, %off2, %st2#0, %st2#1 : memref<2x3xf32, strided<[6, 2], offset: 7>>, index, index, index
    }"""
    m = np.arange(24, dtype=np.float32).reshape(4, 6)
    v, off, s0, s1 = run(src, "f", m)
    np.testing.assert_array_equal(v, [[-1, 9, 11], [13, 15, 17]])
    assert m[1, 1] == -1 and (int(off), int(s0), int(s1)) == (7, 6, 2)
