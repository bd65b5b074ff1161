"""A ratchet on positional operand reads and spelled-out attribute reads in `mlirtext/`.

Code that knows which op it holds reads its operands and attributes by the names the op's
declaration gives them (MLIR's ODS names): `op.operand("lhs")`, `op.operands_named("indices")`,
`op.result_named("output")`, `op.attr("perms")`, not `op.operands[1]` or
`op.attributes["perms"]` / `op.attributes.get("perms")`. What stays positional is code with no
op kind to name (the printer, the generic form, a pass over any op), the first value of a
variadic group (a terminator's `operands[0]`) and the compiler's and VM's code still to convert.

The counts are read with `ast`: writes (`op.attributes["x"] = ...`, `del ...`) are not reads, and
a list that merely is called `operands` (`n_operands[0]`) is not an op. Each count may only fall:
lower its ceiling when you remove reads.

Run as a script (`python tests/test_named_reads.py`) to print every read that is counted.
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from mlirtext.api import parse_and_verify

PACKAGE = Path(__file__).resolve().parents[1] / "mlirtext"

#: pattern -> the most reads of it that `mlirtext/` may hold (the count when the ratchet was last
#: moved, plus nothing: a new read has to name what it reads instead). operands[N] went 30 -> 34
#: with the fusions of conv-pads: a pad kernel's call argument and a `linalg.yield`'s value, the
#: first of a variadic group that has no name of its own to read it by
CEILINGS = {
    "operands[N]": 34,
    'attributes["..."]': 0,
    'attributes.get("...")': 11,
}

HINT = ("read by name: op.operand(name) / op.operands_named(name) / op.result_named(name) for "
        "operands and results, op.attr(name) for attributes (declare the name in the op's "
        "dialect, as upstream ODS spells it, where the op lacks it)")


def _is_attributes(node: ast.AST) -> bool:
    """`<expr>.attributes`: an op's attribute dictionary."""
    return isinstance(node, ast.Attribute) and node.attr == "attributes"


def reads_in(tree: ast.AST) -> dict:
    """pattern -> [line, ...] of the reads of `tree`."""
    found: dict = {pattern: [] for pattern in CEILINGS}
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and \
                isinstance(node.slice, ast.Constant):
            key = node.slice.value
            if isinstance(node.value, ast.Attribute) and node.value.attr == "operands" and \
                    isinstance(key, int) and not isinstance(key, bool):
                found["operands[N]"].append(node.lineno)
            elif _is_attributes(node.value) and isinstance(key, str):
                found['attributes["..."]'].append(node.lineno)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" and \
                _is_attributes(node.func.value) and node.args and isinstance(node.args[0], ast.Constant) and \
                isinstance(node.args[0].value, str):
            found['attributes.get("...")'].append(node.lineno)
    return found


def all_reads() -> dict:
    """pattern -> ["path:line", ...] over every module of `mlirtext/`."""
    total: dict = {pattern: [] for pattern in CEILINGS}
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for pattern, lines in reads_in(tree).items():
            total[pattern] += [f"{path.relative_to(PACKAGE.parent)}:{line}" for line in lines]
    return total


@pytest.mark.parametrize("pattern", list(CEILINGS))
def test_reads_stay_under_their_ceiling(pattern):
    sites = all_reads()[pattern]
    assert len(sites) <= CEILINGS[pattern], (
        f"{len(sites)} reads of the form {pattern} in mlirtext/, more than the ceiling of "
        f"{CEILINGS[pattern]}: {HINT}. The reads:\n  " + "\n  ".join(sites))


def test_the_counter_tells_reads_from_writes():
    tree = ast.parse("op.attributes['a'] = x\ndel op.attributes['b']\ny = op.attributes['c']\n"
                     "z = op.attributes.get('d')\nw = op.operands[2]\nn = n_operands[0]\n"
                     "v = op.operands[i]\ns = op.operands[1:]\n")
    assert reads_in(tree) == {"operands[N]": [5], 'attributes["..."]': [3], 'attributes.get("...")': [4]}


# ---- the names these reads rely on resolve to the operand they mean -----------------------
HLO = """
func.func @f(%p: tensor<i1>, %i: tensor<i32>, %x: tensor<2x3xf32>, %s: tensor<3xf32>, %o: tensor<3xf32>,
             %m: tensor<3xf32>, %v: tensor<3xf32>, %idx: tensor<1x1xi32>, %sz: tensor<2xi32>) -> tensor<2x3xf32> {
  %a = "stablehlo.if"(%p) ({
    "stablehlo.return"(%x) : (tensor<2x3xf32>) -> ()
  }, {
    "stablehlo.return"(%x) : (tensor<2x3xf32>) -> ()
  }) : (tensor<i1>) -> tensor<2x3xf32>
  %b = "stablehlo.case"(%i) ({
    "stablehlo.return"(%a) : (tensor<2x3xf32>) -> ()
  }) : (tensor<i32>) -> tensor<2x3xf32>
  %n = "stablehlo.batch_norm_inference"(%b, %s, %o, %m, %v) {epsilon = 1.0e-5 : f32, feature_index = 1 : i64}
      : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %g = "stablehlo.dynamic_gather"(%n, %idx, %sz) {dimension_numbers = #stablehlo.gather<offset_dims = [1],
      collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>}
      : (tensor<2x3xf32>, tensor<1x1xi32>, tensor<2xi32>) -> tensor<1x3xf32>
  return %n : tensor<2x3xf32>
}
"""

TOSA = """
func.func @f(%c: tensor<i1>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %r = tosa.cond_if %c (%a = %x) : tensor<i1> (tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%a: tensor<2xf32>):
    tosa.yield %a : tensor<2xf32>
  } else {
  ^bb0(%a: tensor<2xf32>):
    tosa.yield %a : tensor<2xf32>
  }
  return %r : tensor<2xf32>
}
"""


def _ops(text: str) -> dict:
    result = parse_and_verify(text)
    assert not result.diagnostics, result.diagnostics
    return {op.name: op for op in result.module.walk()}


def test_hlo_names_declared_for_the_reads():
    ops = _ops(HLO)
    fn = ops["func.func"].regions[0].blocks[0]
    p, i, x, s, o, m, v, idx, sz = fn.arguments
    assert ops["stablehlo.if"].operand("pred") is p
    assert ops["stablehlo.case"].operand("index") is i
    bn = ops["stablehlo.batch_norm_inference"]
    assert [bn.operand(n) for n in ("scale", "offset", "mean", "variance")] == [s, o, m, v]
    gather = ops["stablehlo.dynamic_gather"]
    assert (gather.operand("start_indices"), gather.operand("slice_sizes")) == (idx, sz)


def test_tosa_control_flow_names():
    ops = _ops(TOSA)
    c, x = ops["func.func"].regions[0].blocks[0].arguments
    cond_if = ops["tosa.cond_if"]
    assert cond_if.operand("condition") is c and cond_if.operands_named("input_list") == [x]
    assert ops["tosa.yield"].operands_named("inputs") == list(ops["tosa.yield"].operands)


if __name__ == "__main__":
    for name, sites in all_reads().items():
        print(f"{name}: {len(sites)} (ceiling {CEILINGS[name]})")
        for site in sites:
            print("  ", site)
    sys.exit(0)
