"""The bundled examples and the five benchmark programs compiled to module files and run on the
VM: local-sync and local-task give the reference device's results (and iree-run-module's)."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from mlirtext import runtime

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = sorted((ROOT / "examples").glob("*.mlir")) + \
    sorted((ROOT / "benchmarks" / "programs").glob("*.mlir"))
_CACHE: dict = {}


def module_file(path: Path) -> bytes:
    if path not in _CACHE:
        _CACHE[path] = runtime.compile_file(str(path))
    return _CACHE[path]


def inputs_for(fn, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(r["shape"]).astype(r["dtype"]) for r in fn.inputs]


def close(got, want) -> bool:
    """Same values up to summation order: the kernels add in another order than numpy's BLAS."""
    scale = max(1.0, float(np.max(np.abs(want))))
    return got.shape == want.shape and got.dtype == want.dtype and \
        bool(np.all(np.abs(got.astype(np.float64) - want) <= 1e-5 * scale + 1e-5 * np.abs(want)))


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_native_devices_match_reference(path):
    data = module_file(path)
    ref = runtime.load_module(data, device="reference")
    (name,) = ref.exports
    args = inputs_for(ref.vm_module.functions[name])
    want = ref[name](*args)
    sync = runtime.load_module(data, device="local-sync")[name](*args)
    assert close(sync, want), f"{path.name} on local-sync: max |diff| {np.max(np.abs(sync - want))}"
    task = runtime.load_module(data, device="local-task")[name](*args)
    assert np.array_equal(task, sync), "local-task (threads, workgroups) differs from local-sync"


@pytest.mark.parametrize("path", PROGRAMS[:4], ids=lambda p: p.stem)
def test_reference_device_matches_the_interpreter_on_the_source(path):
    from mlirtext.api import parse_and_verify
    from mlirtext.interpreter import Interpreter
    data = module_file(path)
    ref = runtime.load_module(data, device="reference")
    (name,) = ref.exports
    args = inputs_for(ref.vm_module.functions[name], seed=1)
    want = Interpreter(parse_and_verify(path.read_text(), str(path)).module).call(name, args)[0]
    assert close(ref[name](*args), np.asarray(want))


def test_repeated_calls_reuse_the_arena_and_results_stay_owned():
    data = module_file(ROOT / "benchmarks" / "programs" / "mlp.mlir")
    m = runtime.load_module(data, device="local-sync")
    args = inputs_for(m.vm_module.functions["main"])
    first = m.main(*args)
    kept = first.copy()
    second = m.main(*[a * 2 for a in args[:1]] + args[1:])
    assert np.array_equal(first, kept), "a later call overwrote an earlier result"
    assert not np.array_equal(first, second)


def test_callers_see_the_source_signature_unsigned_and_narrow_integers():
    from mlirtext.api import parse_and_verify
    from mlirtext.interpreter import Interpreter
    text = """func.func @f(%a: tensor<4xui8>, %b: tensor<4xi4>) -> (tensor<4xui8>, tensor<4xi4>) {
  %0 = stablehlo.add %a, %a : tensor<4xui8>
  %1 = stablehlo.add %b, %b : tensor<4xi4>
  return %0, %1 : tensor<4xui8>, tensor<4xi4>
}"""
    a = np.array([1, 100, 200, 255], np.uint8)
    b = np.array([-8, -3, 3, 7], np.int8)
    want = Interpreter(parse_and_verify(text).module).call("f", [a, b])
    for device in ("local-sync", "reference"):
        got = runtime.load_module(runtime.compile_text(text), device=device).f(a, b)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and np.array_equal(g, w), (device, g, w)


ZERO_D = """func.func @f(%a: tensor<i64>, %b: tensor<3xi64>) -> tensor<3xi64> {
  %c = arith.constant dense<10> : tensor<i64>
  %e = tensor.empty() : tensor<3xi64>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> ()>, affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>,
                                        affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a, %c, %b : tensor<i64>, tensor<i64>, tensor<3xi64>) outs(%e : tensor<3xi64>) {
  ^bb0(%x: i64, %k: i64, %y: i64, %o: i64):
    %s = arith.addi %x, %y : i64
    %t = arith.muli %s, %k : i64
    linalg.yield %t : i64
  } -> tensor<3xi64>
  return %r : tensor<3xi64>
}"""


@pytest.mark.parametrize("device", ["reference", "local-sync", "local-task"])
def test_zero_d_tensors_keep_their_shape_on_every_device(device):
    # (a 0-d argument or constant made contiguous must stay 0-d: the reference kernels check shapes)
    module = runtime.load_module(runtime.compile_text(ZERO_D), device=device)
    got = module.f(np.array(5, np.int64), np.array([1, 2, 3], np.int64))
    np.testing.assert_array_equal(got, [60, 70, 80])


def test_zero_d_constants_on_the_host_are_packed_and_shared():
    text = """func.func @g(%x: tensor<i32>) -> (tensor<i32>, tensor<i32>) {
  %a = util.unfoldable_constant dense<3> : tensor<i32>
  %b = util.unfoldable_constant dense<3> : tensor<i32>
  %s = stablehlo.add %x, %a : tensor<i32>
  %t = stablehlo.multiply %s, %b : tensor<i32>
  return %t, %b : tensor<i32>, tensor<i32>
}"""
    for device in ("reference", "local-sync"):
        got = runtime.load_module(runtime.compile_text(text), device=device).g(np.array(4, np.int32))
        assert [int(v) for v in got] == [21, 3], device


@pytest.mark.parametrize("device", ["local-sync", "local-task", "reference"])
def test_results_written_into_the_callers_buffers(device):
    data = module_file(ROOT / "benchmarks" / "programs" / "mlp.mlir")
    m = runtime.load_module(data, device=device)
    args = inputs_for(m.vm_module.functions["main"])
    want = m.main(*args)
    out = np.full_like(want, np.nan)
    assert m.main(*args, out=out) is out
    assert np.array_equal(out, want)
    again = m.main(*[a * 2 for a in args[:1]] + args[1:], out=(out,))
    assert again is out and np.array_equal(out, m.main(*[a * 2 for a in args[:1]] + args[1:]))


def test_out_takes_results_that_are_converted_or_copied():
    # ui8 and i4 results (converted after the kernels), and a returned constant and argument (copied)
    text = """func.func @f(%a: tensor<4xui8>, %b: tensor<4xi4>, %x: tensor<2xf32>) -> (tensor<4xui8>, tensor<4xi4>, tensor<2xf32>, tensor<2xf32>) {
  %0 = stablehlo.add %a, %a : tensor<4xui8>
  %1 = stablehlo.add %b, %b : tensor<4xi4>
  %c = stablehlo.constant dense<[1.5, 2.5]> : tensor<2xf32>
  return %0, %1, %c, %x : tensor<4xui8>, tensor<4xi4>, tensor<2xf32>, tensor<2xf32>
}"""
    args = (np.array([1, 100, 200, 255], np.uint8), np.array([-8, -3, 3, 7], np.int8), np.array([4, 5], np.float32))
    for device in ("local-sync", "reference"):
        m = runtime.load_module(runtime.compile_text(text), device=device)
        want = m.f(*args)
        out = tuple(np.zeros_like(w) for w in want)
        got = m.f(*args, out=out)
        assert all(g is o for g, o in zip(got, out))
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and np.array_equal(g, w), (device, g, w)


def test_bad_out_buffers_are_refused_with_a_message():
    m = runtime.load_module(runtime.compile_text(ZERO_D), device="local-sync")
    a, b = np.array(5, np.int64), np.array([1, 2, 3], np.int64)
    for out, message in ((np.zeros(4, np.int64), "out[0] of @f: expected tensor<3xi64>"),
                         (np.zeros(3, np.int32), "got shape 3 of int32"),
                         (np.zeros(6, np.int64)[::2], "must be C-contiguous and writable"),
                         (b, "out[0] of @f overlaps argument 1"),
                         ([np.zeros(3, np.int64)] * 2, "out= takes 1 array(s)"),
                         ([[0, 0, 0]], "out[0] of @f: expected a numpy array (tensor<3xi64>), got list")):
        with pytest.raises(runtime.VMError, match=re.escape(message)):
            m.f(a, b, out=out)
