"""A residual read in place: a micro-kernel whose epilogue reads a residual once per element,
before it stores that element, and that sums its whole K in one pass
(ukernels.MatmulPlan.in_place_input) writes its result into the residual's buffer where the
residual dies at it (planner.py), as ResNet-50's conv3 + shortcut does; where K takes two blocks
(C holds partial sums first) or the residual is read again later, the result gets a slot of its
own. Compiled for llvm-cpu and run on the VM (local-sync, local-task) against the interpreter;
the slots of the plan asserted."""
from __future__ import annotations

import pytest

import numpy as np

from mlirtext import runtime
from mlirtext.api import parse_and_verify
from mlirtext.compiler.ukernels import KC
from mlirtext.interpreter import Interpreter
from mlirtext.vm.modfile import read_module_file

from .compiled_checks import compiled_and_checked

NHWC = "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]"


def t(shape) -> str:
    return "tensor<" + "x".join(map(str, shape)) + "xf32>"


def _conv(name: str, x: str, w: str, xs, ws, ys) -> str:
    return (f"  {name} = stablehlo.convolution({x}, {w}) dim_numbers = {NHWC}, window = {{stride = [1, 1]}} "
            f"{{batch_group_count = 1 : i64, feature_group_count = 1 : i64}} : ({t(xs)}, {t(ws)}) -> {t(ys)}")


def _block_end(n: int, h: int, ic: int, oc: int, reread: bool) -> tuple[str, list]:
    """@f(x, wd, w, b, w2): s = conv1x1(x, wd) (the shortcut), y = relu(conv1x1(x, w) + b + s), then
    conv1x1(y, w2) so that y lives in the pool; with `reread`, s is added to the result again."""
    xs, ws, ys, w2s = (n, h, h, ic), (1, 1, ic, oc), (n, h, h, oc), (1, 1, oc, oc)
    lines = [f"func.func @f(%x: {t(xs)}, %wd: {t(ws)}, %w: {t(ws)}, %b: {t((oc,))}, %w2: {t(w2s)}) -> {t(ys)} {{",
             _conv("%s", "%x", "%wd", xs, ws, ys), _conv("%c", "%x", "%w", xs, ws, ys),
             f"  %bb = stablehlo.broadcast_in_dim %b, dims = [3] : ({t((oc,))}) -> {t(ys)}",
             f"  %a = stablehlo.add %c, %bb : {t(ys)}", f"  %r = stablehlo.add %a, %s : {t(ys)}",
             "  %zero = stablehlo.constant dense<0.0> : tensor<f32>",
             f"  %z = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> {t(ys)}",
             f"  %y = stablehlo.maximum %r, %z : {t(ys)}", _conv("%o", "%y", "%w2", ys, w2s, ys)]
    lines += [f"  %e = stablehlo.add %o, %s : {t(ys)}", f"  return %e : {t(ys)}"] if reread else \
        [f"  return %o : {t(ys)}"]
    return "\n".join(lines + ["}"]) + "\n", [xs, ws, ws, (oc,), w2s]


def _residual_slots(data: bytes, kernels: dict) -> list[tuple[int, int]]:
    """(slot of the residual, slot of the result) of each dispatch whose kernel has a residual
    epilogue (an input of the result's shape besides its image)."""
    mf = read_module_file(data)
    prog = mf.json(mf.manifest["exports"][0]["program"])
    slot = {ins["dst"]: ins["slot"] for ins in prog["instructions"] if ins["op"] == "alloc"}
    pairs = []
    for ins in prog["instructions"]:
        if ins["op"] != "dispatch" or "epilogue" not in kernels[ins["kernel"]].get("implementation", ""):
            continue
        spec = kernels[ins["kernel"]]
        residual = [r for j, r in enumerate(ins["ins"]) if j > 0 and spec["inputs"][j]["shape"] == spec["outputs"][0]["shape"]]
        if residual:
            pairs.append((slot.get(residual[0], -1), slot.get(ins["outs"][0], -1)))
    return pairs


@pytest.mark.parametrize("n,h,ic,oc,reread,in_place", [
    (1, 10, 16, 48, False, True),        # one image, three 16-column panels
    (2, 6, 24, 20, False, True),         # two images, the last panel masked (20 columns)
    (1, 6, KC + 44, 32, False, False),   # K in two blocks: C holds the first block's sums before the epilogue
    (1, 8, 16, 32, True, False),         # the residual is read again after the kernel: it stays
])
def test_the_result_takes_the_residuals_buffer_where_it_dies(n, h, ic, oc, reread, in_place):
    text, shapes = _block_end(n, h, ic, oc, reread)
    data, kernels = compiled_and_checked(text, shapes)
    pairs = _residual_slots(data, kernels)
    assert pairs, kernels
    residual, result = pairs[0]   # (the block's; with `reread`, the last kernel adds s again as its own residual)
    assert residual >= 0 and result >= 0
    assert (residual == result) == in_place, pairs
    # (calls after the first run as one kept native program: the residual is made again in its slot)
    module, rng = runtime.load_module(data, device="local-task"), np.random.default_rng(1)
    for _ in range(2):
        args = [rng.standard_normal(s, dtype=np.float32) for s in shapes]
        want = Interpreter(parse_and_verify(text).module).call("f", args)[0]
        np.testing.assert_allclose(module.f(*args), want, rtol=1e-5, atol=1e-5 * float(np.max(np.abs(want))))
