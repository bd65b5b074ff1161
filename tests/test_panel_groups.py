"""Matmuls whose A outgrows L2 (ukernels.panel_group): each workgroup takes a group of panels of C
and walks them inside each block of k. The same numbers as numpy (integer-valued inputs: every order
of summation gives numpy's bits) and as the interpreter, on local-sync and local-task, at the edges:
several blocks of k (K > KC), a narrower last panel under masks, a bias and a residual epilogue read
per panel, batches; both vector widths. The groups are forced on small matrices by lowering the
threshold; the ViT's MLP down-projection (197 x 3072 by 3072 x 768) gets them by default."""
from __future__ import annotations

import numpy as np
import pytest

from mlirtext import runtime
from mlirtext.compiler import ukernels
from mlirtext.compiler.ukernels import KC, MatmulPlan, panel_group
from mlirtext.vm.modfile import read_module_file

from .compiled_checks import compiled_and_checked


def literal(a: np.ndarray) -> str:
    return "dense<" + np.array2string(a, separator=", ", threshold=1 << 30).replace("\n", "") + ">"


def tensor(shape) -> str:
    return f"tensor<{'x'.join(map(str, shape))}xf32>"


def matmul_text(a_shape, weight: np.ndarray, bias=None, residual: bool = False) -> str:
    """@f(a[, r]) = a @ weight (+ bias) (+ r): the weight a constant (packed at compile time)."""
    batched = len(a_shape) == 3
    out = (*a_shape[:-1], weight.shape[-1])
    dims = "batching_dims = [0] x [0], contracting_dims = [2] x [1]" if batched else "contracting_dims = [1] x [0]"
    args = f"%a: {tensor(a_shape)}" + (f", %r: {tensor(out)}" if residual else "")
    lines = [f"func.func @f({args}) -> {tensor(out)} {{",
             f"  %w = stablehlo.constant {literal(weight)} : {tensor(weight.shape)}",
             f"  %0 = stablehlo.dot_general %a, %w, {dims} : ({tensor(a_shape)}, {tensor(weight.shape)}) -> {tensor(out)}"]
    last = "%0"
    if bias is not None:
        lines += [f"  %bc = stablehlo.constant {literal(bias)} : {tensor(bias.shape)}",
                  f"  %bb = stablehlo.broadcast_in_dim %bc, dims = [{len(out) - 1}] : ({tensor(bias.shape)}) -> {tensor(out)}",
                  f"  %1 = stablehlo.add %0, %bb : {tensor(out)}"]
        last = "%1"
    if residual:
        lines.append(f"  %2 = stablehlo.add {last}, %r : {tensor(out)}")
        last = "%2"
    return "\n".join(lines + [f"  return {last} : {tensor(out)}", "}"])


def ints(rng, *shape) -> np.ndarray:
    return rng.integers(-3, 4, shape).astype(np.float32)


CASES = [   # (a's shape, N, bias, residual): 2 or more groups of 2 or more panels each, either width
    ((13, KC + 44), 192, False, False),       # 32-column tiles on AVX-512, two blocks of k
    ((29, 2 * KC + 8), 128, True, False),     # three blocks of k, the last of 8 rows; a bias per column
    ((7, KC + 1), 16 * 7 + 9, True, True),    # a narrower last panel (masks); bias and residual
    ((2, 13, KC + 3), 128, False, True),      # batches (B a constant per batch)
]


@pytest.mark.parametrize("a_shape,n,bias,residual", CASES)
@pytest.mark.parametrize("width", [8, 16])
def test_grouped_panels_give_numpys_numbers(a_shape, n, bias, residual, width, monkeypatch):
    monkeypatch.setattr(ukernels, "host_vector_floats", lambda: width)
    monkeypatch.setattr(ukernels, "A_IN_L2", 0)          # every matmul's A "outgrows L2"
    monkeypatch.setattr(ukernels, "MIN_PANEL_GROUPS", 2)
    rng = np.random.default_rng(len(a_shape) * 100 + n)
    k = a_shape[-1]
    weight = ints(rng, *(a_shape[:1] if len(a_shape) == 3 else ()), k, n)
    b = ints(rng, n) if bias else None
    text = matmul_text(a_shape, weight, b, residual)
    out_shape = (*a_shape[:-1], n)
    data, kernels = compiled_and_checked(text, [a_shape, out_shape] if residual else [a_shape])
    (impl,) = [k.get("implementation", "") for k in kernels.values()]
    plan = MatmulPlan(a_shape[0] if len(a_shape) == 3 else 1, a_shape[-2], n, k, 0, 1, 2, b_packed=True, vec=width)
    group = panel_group(plan)
    assert 1 < group < plan.panels and f"{group} panels a workgroup inside each block of k" in impl, impl
    assert "B packed at compile time" in impl
    a = ints(rng, *a_shape)
    r = ints(rng, *out_shape)
    want = a @ weight + (b if bias else 0) + (r if residual else 0)
    for device in ("local-sync", "local-task"):
        module = runtime.load_module(data, device=device)
        got = module.f(a, r) if residual else module.f(a)
        assert np.array_equal(got, want), device


def test_group_size_divides_the_panels_and_leaves_work_for_the_threads():
    """The ViT's down-projection: 24 panels of 32 columns (16-float vectors) in 4 groups of 6; its
    up-projection (A 197 x 768 stays in L2) and a small GEMM keep one panel a workgroup."""
    down = MatmulPlan(1, 197, 768, 3072, 0, 1, 2, b_packed=True, vec=16)
    assert panel_group(down) == 6 and down.panels == 24
    down.panel_group = 6
    assert down.workgroups == (4, 197 * 32 * 6)
    assert panel_group(MatmulPlan(1, 197, 3072, 768, 0, 1, 2, b_packed=True, vec=16)) == 1
    assert panel_group(MatmulPlan(1, 128, 256, 1024, 0, 1, 2, b_packed=True, vec=16)) == 1
    # 26 panels (a prime half): the largest divisor that still leaves 4 groups
    assert panel_group(MatmulPlan(1, 512, 26 * 32, 1024, 0, 1, 2, b_packed=True, vec=16)) == 2
    # a narrower last panel with several batches takes whole batches: no groups
    assert panel_group(MatmulPlan(2, 512, 16 * 9 + 3, 1024, 0, 1, 2, b_packed=True, vec=16)) == 1
