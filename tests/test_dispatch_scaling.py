"""Forming the dispatches of a function takes time linear in its ops.

The same work at N and 4N ops in one run, compared per op: a linear path keeps the time per op
about constant, a quadratic one multiplies it by 4. The bound (2x) leaves room for the noise of
a shared machine and still catches a quadratic path. CPU time, best of 2.
`benchmarks/graph_view.py` reports the figures at 2,001 and 20,001 ops.
"""
from __future__ import annotations

import time

from mlirtext import api
from mlirtext.compiler.driver import form_dispatches
from mlirtext.transforms.dispatch import is_dispatch_function

BLOCKS = 80        # N = 5 x 80 = 400 ops, 4N = 1,600
BOUND = 2.0


def residual_chain(blocks: int) -> str:
    """A function of `blocks` residual blocks (a matmul, an activation, a skip connection)."""
    body = "".join(
        f"  %d{i} = stablehlo.dot_general %h{i - 1}, %w, contracting_dims = [1] x [0] : "
        f"(tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>\n"
        f"  %m{i} = stablehlo.maximum %d{i}, %zero : tensor<8x8xf32>\n"
        f"  %t{i} = stablehlo.tanh %m{i} : tensor<8x8xf32>\n"
        f"  %h{i} = stablehlo.add %t{i}, %h{i - 1} : tensor<8x8xf32>\n"
        for i in range(1, blocks + 1))
    return ("func.func @chain(%h0: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> tensor<8x8xf32> {\n"
            "  %zero = stablehlo.constant dense<0.0> : tensor<8x8xf32>\n"
            f"{body}  return %h{blocks} : tensor<8x8xf32>\n}}\n")


def test_dispatch_formation_is_linear():
    modules = {}
    for blocks in (BLOCKS // 4, BLOCKS, 4 * BLOCKS):
        result = api.parse_and_verify(residual_chain(blocks), "<scaling>")
        assert result.ok, result.diagnostics[0].format()
        modules[blocks] = result.module

    per_block = {}

    def seconds(blocks: int) -> float:
        best = float("inf")
        for _ in range(2):
            module = modules[blocks].clone()
            start = time.process_time()
            form_dispatches(module)
            best = min(best, time.process_time() - start)
        formed = [op for op in module.walk() if op.name == "func.func" and is_dispatch_function(op)]
        per_block[blocks] = len(formed) / blocks
        return best

    seconds(BLOCKS // 4)   # warm-up: the passes' modules are imported on first use
    ratio = (seconds(4 * BLOCKS) / (4 * BLOCKS)) / (seconds(BLOCKS) / BLOCKS)
    assert per_block[BLOCKS // 4] >= 1 and len(set(per_block.values())) == 1, per_block   # the same dispatches per block
    assert ratio < BOUND, f"{ratio:.2f}x the time per op at {4 * BLOCKS} blocks as at {BLOCKS}"
