"""StableHLO shape ops, random numbers and collectives in the reference interpreter."""
from __future__ import annotations

import numpy as np
import pytest

from mlirtext.api import parse_and_verify
from mlirtext.interpreter import Interpreter, InterpreterError

from .oracle import iree_compile, iree_run


def run(src: str, *args, fn: str = "main"):
    result = parse_and_verify(src)
    assert result.ok, [str(d) for d in result.diagnostics]
    return Interpreter(result.module).call(fn, list(args))


def test_broadcast_in_dim_with_permuted_dimensions():
    src = """func.func @main(%a: tensor<2x3xi32>) -> tensor<3x4x2xi32> {
  %0 = stablehlo.broadcast_in_dim %a, dims = [2, 0] : (tensor<2x3xi32>) -> tensor<3x4x2xi32>
  return %0 : tensor<3x4x2xi32>
}"""
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    out = run(src, a)[0]
    assert out.shape == (3, 4, 2)
    assert (out[:, 1, :] == a.T).all()


def test_pad_negative_and_interior():
    src = """func.func @main(%a: tensor<2x3xi32>) -> tensor<5x4xi32> {
  %pv = stablehlo.constant dense<-1> : tensor<i32>
  %0 = stablehlo.pad %a, %pv, low = [1, -1], high = [1, -1], interior = [1, 1] : (tensor<2x3xi32>, tensor<i32>) -> tensor<5x3xi32>
  return %0 : tensor<5x3xi32>
}""".replace("-> tensor<5x4xi32> {", "-> tensor<5x3xi32> {")
    a = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
    out = run(src, a)[0]
    assert out.tolist() == [[-1, -1, -1], [-1, 2, -1], [-1, -1, -1], [-1, 5, -1], [-1, -1, -1]]


def test_dynamic_slice_and_update_clamp_their_starts():
    src = """func.func @main(%a: tensor<4x4xi32>, %u: tensor<2x2xi32>, %i: tensor<i64>, %j: tensor<i64>)
    -> (tensor<2x3xi32>, tensor<4x4xi32>) {
  %0 = stablehlo.dynamic_slice %a, %i, %j, sizes = [2, 3] : (tensor<4x4xi32>, tensor<i64>, tensor<i64>) -> tensor<2x3xi32>
  %1 = stablehlo.dynamic_update_slice %a, %u, %i, %j : (tensor<4x4xi32>, tensor<2x2xi32>, tensor<i64>, tensor<i64>) -> tensor<4x4xi32>
  return %0, %1 : tensor<2x3xi32>, tensor<4x4xi32>
}"""
    a = np.arange(16, dtype=np.int32).reshape(4, 4)
    u = np.full((2, 2), -1, np.int32)
    sl, up = run(src, a, u, np.array(10), np.array(-3))
    assert sl.tolist() == [[8, 9, 10], [12, 13, 14]]             # starts clamped to (2, 0)
    assert up[2:, :2].tolist() == [[-1, -1], [-1, -1]] and up[0, 0] == 0
    assert a[2, 0] == 8                                          # the operand is not written


def test_slice_concat_reverse_transpose_reshape_iota():
    src = """func.func @main(%a: tensor<3x4xi32>) -> (tensor<2x2xi32>, tensor<6x4xi32>, tensor<3x4xi32>, tensor<4x3xi32>, tensor<12xi32>, tensor<2x3xi4>) {
  %0 = stablehlo.slice %a [0:3:2, 1:4:2] : (tensor<3x4xi32>) -> tensor<2x2xi32>
  %1 = stablehlo.concatenate %a, %a, dim = 0 : (tensor<3x4xi32>, tensor<3x4xi32>) -> tensor<6x4xi32>
  %2 = stablehlo.reverse %a, dims = [0, 1] : tensor<3x4xi32>
  %3 = stablehlo.transpose %a, dims = [1, 0] : (tensor<3x4xi32>) -> tensor<4x3xi32>
  %4 = stablehlo.reshape %a : (tensor<3x4xi32>) -> tensor<12xi32>
  %5 = stablehlo.iota dim = 1 : tensor<2x3xi4>
  return %0, %1, %2, %3, %4, %5 : tensor<2x2xi32>, tensor<6x4xi32>, tensor<3x4xi32>, tensor<4x3xi32>, tensor<12xi32>, tensor<2x3xi4>
}"""
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    sl, cat, rev, tr, rs, io = run(src, a)
    assert sl.tolist() == [[1, 3], [9, 11]]
    assert cat.shape == (6, 4) and (cat[3:] == a).all()
    assert rev[0, 0] == 11 and (tr == a.T).all() and rs.tolist() == list(range(12))
    assert io.tolist() == [[0, 1, 2], [0, 1, 2]] and io.dtype == np.int8


def test_tuples_tokens_and_dimension_size():
    src = """func.func @main(%a: tensor<2x5xf32>) -> (tensor<i32>, tensor<2x5xf32>) {
  %t = stablehlo.tuple %a, %a : tuple<tensor<2x5xf32>, tensor<2x5xf32>>
  %e = stablehlo.get_tuple_element %t[1] : (tuple<tensor<2x5xf32>, tensor<2x5xf32>>) -> tensor<2x5xf32>
  %k = stablehlo.after_all : !stablehlo.token
  %d = stablehlo.get_dimension_size %a, dim = 1 : (tensor<2x5xf32>) -> tensor<i32>
  return %d, %e : tensor<i32>, tensor<2x5xf32>
}"""
    d, e = run(src, np.ones((2, 5), np.float32))
    assert int(d) == 5 and d.dtype == np.int32 and e.shape == (2, 5)


def test_rng_uniform_matches_iree():
    src = """func.func @main() -> tensor<4xf32> {
  %lo = stablehlo.constant dense<-10.0> : tensor<f32>
  %hi = stablehlo.constant dense<10.0> : tensor<f32>
  %s = stablehlo.constant dense<[4]> : tensor<1xi64>
  %0 = stablehlo.rng %lo, %hi, %s, distribution = UNIFORM : (tensor<f32>, tensor<f32>, tensor<1xi64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}"""
    np.testing.assert_allclose(run(src)[0], [-9.99994, -4.8613, 0.277344, 5.41599], atol=1e-4)


@pytest.mark.parametrize("algorithm,expected", [
    ("THREE_FRY", [-1997982863, -261361928, -1008514867, 1226850200,
                   1419974734, -277475325, 1033030661, -1926332264]),
])
def test_rng_bit_generator_matches_iree(algorithm, expected):
    src = f"""func.func @main(%s: tensor<4xi32>) -> (tensor<4xi32>, tensor<8xi32>) {{
  %0:2 = stablehlo.rng_bit_generator %s, algorithm = {algorithm} : (tensor<4xi32>) -> (tensor<4xi32>, tensor<8xi32>)
  return %0#0, %0#1 : tensor<4xi32>, tensor<8xi32>
}}"""
    state, bits = run(src, np.array([1, 2, 3, 4], np.int32))
    assert bits.tolist() == expected
    assert state.tolist()[:2] == [1, 2]


def test_rng_bit_generator_u64_state_advances():
    src = """func.func @main(%s: tensor<2xui64>) -> (tensor<2xui64>, tensor<ui64>) {
  %0:2 = stablehlo.rng_bit_generator %s, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<ui64>)
  return %0#0, %0#1 : tensor<2xui64>, tensor<ui64>
}"""
    state, value = run(src, np.array([3, 3], np.uint64))
    assert state.tolist() == [3, 4] and int(value) == 3349939604322698703   # XLA's value (JAX testdata)


PARALLEL = """
module {
  func.func @prog(%x: tensor<2xi64>) -> (tensor<2xi64>, tensor<4xi64>, tensor<2xi64>) {
    %0 = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<i64>, %b: tensor<i64>):
        %s = stablehlo.add %a, %b : tensor<i64>
        stablehlo.return %s : tensor<i64>
    }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xi64>) -> tensor<2xi64>
    %1 = "stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}
        : (tensor<2xi64>) -> tensor<4xi64>
    %2 = "stablehlo.collective_permute"(%x) {source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>}
        : (tensor<2xi64>) -> tensor<2xi64>
    return %0, %1, %2 : tensor<2xi64>, tensor<4xi64>, tensor<2xi64>
  }
  func.func @main() -> (tensor<2xi64>, tensor<4xi64>, tensor<2xi64>, tensor<2xi64>, tensor<4xi64>, tensor<2xi64>) {
    %a = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
    %b = stablehlo.constant dense<[10, 20]> : tensor<2xi64>
    %r:6 = "interpreter.run_parallel"(%a, %b) {programs = [[@prog], [@prog]]}
        : (tensor<2xi64>, tensor<2xi64>) -> (tensor<2xi64>, tensor<4xi64>, tensor<2xi64>, tensor<2xi64>, tensor<4xi64>, tensor<2xi64>)
    return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5 : tensor<2xi64>, tensor<4xi64>, tensor<2xi64>, tensor<2xi64>, tensor<4xi64>, tensor<2xi64>
  }
}
"""


def test_collectives_under_run_parallel():
    r0, g0, p0, r1, g1, p1 = run(PARALLEL)
    assert r0.tolist() == r1.tolist() == [11, 22]
    assert g0.tolist() == g1.tolist() == [1, 2, 10, 20]
    assert p0.tolist() == [0, 0] and p1.tolist() == [1, 2]


def test_collectives_on_a_single_process():
    # Outside run_parallel a program is the one process of a 1x1 grid: replica 1 does not
    # exist, so all_reduce and all_gather see only this process's value.
    src = PARALLEL.replace("tensor<4xi64>", "tensor<2xi64>")
    result = parse_and_verify(src)
    interp = Interpreter(result.module)
    r, g, p = interp.call("prog", [np.array([1, 2], np.int64)])
    assert r.tolist() == [1, 2] and g.tolist() == [1, 2] and p.tolist() == [0, 0]


def test_recv_without_sender_is_an_error():
    src = """func.func @main(%t: !stablehlo.token) -> tensor<2xi32> {
  %0:2 = "stablehlo.recv"(%t) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 3>, is_host_transfer = true}
      : (!stablehlo.token) -> (tensor<2xi32>, !stablehlo.token)
  return %0#0 : tensor<2xi32>
}"""
    module = parse_and_verify(src).module
    from mlirtext.ir.arrays import TOKEN
    fn = module.regions[0].blocks[0].ops[0]
    with pytest.raises(InterpreterError, match="nothing was sent"):
        Interpreter(module).run_region(fn.regions[0], [TOKEN])


def test_calls_pass_tokens_tuples_and_quantized_tensors():
    src = """
func.func @f(%t: !stablehlo.token, %x: tuple<tensor<2xi32>, tensor<i32>>, %q: tensor<2x!quant.uniform<i8:f32, 0.5:-10>>)
    -> (tensor<2xf32>, tensor<i32>) {
  %d = stablehlo.uniform_dequantize %q : (tensor<2x!quant.uniform<i8:f32, 0.5:-10>>) -> tensor<2xf32>
  %e = stablehlo.get_tuple_element %x[1] : (tuple<tensor<2xi32>, tensor<i32>>) -> tensor<i32>
  return %d, %e : tensor<2xf32>, tensor<i32>
}
func.func @main() -> (tensor<2xf32>, tensor<i32>) {
  %t = stablehlo.after_all : !stablehlo.token
  %a = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %b = stablehlo.constant dense<3> : tensor<i32>
  %tu = stablehlo.tuple %a, %b : tuple<tensor<2xi32>, tensor<i32>>
  %c = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %q = stablehlo.uniform_quantize %c : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32, 0.5:-10>>
  %r:2 = func.call @f(%t, %tu, %q) : (!stablehlo.token, tuple<tensor<2xi32>, tensor<i32>>,
      tensor<2x!quant.uniform<i8:f32, 0.5:-10>>) -> (tensor<2xf32>, tensor<i32>)
  return %r#0, %r#1 : tensor<2xf32>, tensor<i32>
}"""
    d, e = run(src)
    assert d.tolist() == [1.0, 2.0] and int(e) == 3


ORACLE_PROGRAM = """
func.func @main(%a: tensor<3x4xf32>, %b: tensor<4xf32>, %i: tensor<i32>) -> (tensor<5x11xf32>, tensor<3x4xf32>, tensor<4x3xf32>,
    tensor<2x2xf32>, tensor<6x4xf32>, tensor<3x4xf32>, tensor<2x4xf32>, tensor<3x4xf32>, tensor<2x3xf32>) {
  %pv = stablehlo.constant dense<-1.0> : tensor<f32>
  %0 = stablehlo.pad %a, %pv, low = [1, -1], high = [1, 2], interior = [0, 2] : (tensor<3x4xf32>, tensor<f32>) -> tensor<5x11xf32>
  %1 = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<4xf32>) -> tensor<3x4xf32>
  %2 = stablehlo.transpose %a, dims = [1, 0] : (tensor<3x4xf32>) -> tensor<4x3xf32>
  %3 = stablehlo.slice %a [0:3:2, 1:4:2] : (tensor<3x4xf32>) -> tensor<2x2xf32>
  %4 = stablehlo.concatenate %a, %a, dim = 0 : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<6x4xf32>
  %5 = stablehlo.reverse %a, dims = [0, 1] : tensor<3x4xf32>
  %6 = stablehlo.dynamic_slice %a, %i, %i, sizes = [2, 4] : (tensor<3x4xf32>, tensor<i32>, tensor<i32>) -> tensor<2x4xf32>
  %u = stablehlo.constant dense<7.0> : tensor<2x2xf32>
  %7 = stablehlo.dynamic_update_slice %a, %u, %i, %i : (tensor<3x4xf32>, tensor<2x2xf32>, tensor<i32>, tensor<i32>) -> tensor<3x4xf32>
  %lo = stablehlo.constant dense<-10.0> : tensor<f32>
  %hi = stablehlo.constant dense<10.0> : tensor<f32>
  %s = stablehlo.constant dense<[2, 3]> : tensor<2xi64>
  %8 = stablehlo.rng %lo, %hi, %s, distribution = UNIFORM : (tensor<f32>, tensor<f32>, tensor<2xi64>) -> tensor<2x3xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : tensor<5x11xf32>, tensor<3x4xf32>, tensor<4x3xf32>, tensor<2x2xf32>,
      tensor<6x4xf32>, tensor<3x4xf32>, tensor<2x4xf32>, tensor<3x4xf32>, tensor<2x3xf32>
}
"""


@pytest.mark.oracle
def test_matches_iree_run_module(tmp_path):
    inputs = [np.arange(12, dtype=np.float32).reshape(3, 4), np.array([1, 2, 3, 4], np.float32),
              np.array(5, np.int32)]
    ours = run(ORACLE_PROGRAM, *inputs)
    vmfb = iree_compile(ORACLE_PROGRAM, tmp_path)
    theirs = iree_run(vmfb, "main", [*inputs[:2], "i32=5"], len(ours), tmp_path)
    for k, value in enumerate(ours):
        np.testing.assert_allclose(value, theirs[k], rtol=1e-6, err_msg=f"result {k}")


RNG_PROGRAM = """
func.func @main(%s: tensor<2xui64>, %t: tensor<4xi32>) -> (tensor<2xui64>, tensor<3x5xui32>, tensor<5xui64>, tensor<4xi32>,
    tensor<3x2x3xi32>, tensor<7xui32>, tensor<3xui64>) {
  %0:2 = stablehlo.rng_bit_generator %s, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<3x5xui32>)
  %1:2 = stablehlo.rng_bit_generator %s, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<5xui64>)
  %2:2 = stablehlo.rng_bit_generator %t, algorithm = THREE_FRY : (tensor<4xi32>) -> (tensor<4xi32>, tensor<3x2x3xi32>)
  %3:2 = stablehlo.rng_bit_generator %s, algorithm = PHILOX : (tensor<2xui64>) -> (tensor<2xui64>, tensor<7xui32>)
  %4:2 = stablehlo.rng_bit_generator %s, algorithm = DEFAULT : (tensor<2xui64>) -> (tensor<2xui64>, tensor<3xui64>)
  return %0#0, %0#1, %1#1, %2#0, %2#1, %3#1, %4#1 : tensor<2xui64>, tensor<3x5xui32>, tensor<5xui64>, tensor<4xi32>,
      tensor<3x2x3xi32>, tensor<7xui32>, tensor<3xui64>
}
"""


@pytest.mark.oracle
def test_rng_bit_generator_matches_iree_run_module(tmp_path):
    inputs = [np.array([12345678901, 77], np.uint64), np.array([5, 6, 7, 8], np.int32)]
    ours = run(RNG_PROGRAM, *inputs)
    theirs = iree_run(iree_compile(RNG_PROGRAM, tmp_path), "main", inputs, len(ours), tmp_path)
    for k, value in enumerate(ours):
        np.testing.assert_array_equal(value, theirs[k], err_msg=f"result {k}")
