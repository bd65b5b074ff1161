"""mhlo pretty printing, checked against mlir-hlo's own expected output (its CHECK lines).

mlir-hlo prints mhlo ops in stablehlo's pretty forms under the `mhlo.` prefix; ops
whose attributes have no pretty spelling (mhlo's dense-element dimension lists)
stay generic, as mlir-hlo prints them. Our pretty print must read back to the
same IR: the corpus figures (tests/test_corpus_figures.py) check that for every
mhlo case; here, focused cases.
"""
from __future__ import annotations

import re

import pytest

from mlirtext.api import parse_and_verify, to_text

from . import corpus
from .corpus_status import ir_key

pytestmark = pytest.mark.skipif(not corpus.available(), reason="no corpus")

PRETTYPRINT = "mlir-hlo/tests__Dialect__mhlo__mhlo_ops_prettyprint.mlir"
_CHECK = re.compile(r"//\s*CHECK(?:-NEXT|-DAG)?:\s*(.*)$")

#: Literal CHECK lines of the prettyprint test we knowingly print differently, and why.
KNOWN_DIFFERENCES = {
    'mhlo.trace %arg0, "This is a test" : tensor<3xi64>': "mhlo.trace (not in mhlo any more) is an unknown op: generic",
    "mhlo.optimization_barrier()": "the empty barrier prints generic (our grammar needs an operand)",
    # mlir-hlo's quant printer (older MLIR) writes `u8`; iree-opt 3.13, our reference, writes `ui8`
    "mhlo.uniform_quantize %arg0 : (tensor<4xf32>) -> tensor<4x!quant.uniform<u8:f32, 3.400000e+01:16>>":
        "quant storage type spelling",
    '%0 = "mhlo.set_dimension_size"(%arg0, %arg1) <{dimension = 1 : i64}> : (tensor<?x?xf32, '
    '#mhlo.type_extensions<bounds = [3, ?]>>, tensor<i32>) -> tensor<?x?xf32>':
        "we print stablehlo's `dim = 1` form (it reads back the same)",
}


def _literal_checks(text: str) -> list[str]:
    out = []
    for line in text.splitlines():
        m = _CHECK.search(line)
        if m and "{{" not in m.group(1) and "[[" not in m.group(1):
            out.append(m.group(1).strip())
    return out


def test_prettyprint_check_lines():
    """Every literal CHECK line of mlir-hlo's pretty-print test is a line of our print."""
    missing, checked = [], 0
    for case in corpus.cases():
        if case.file != PRETTYPRINT or not case.valid:
            continue
        result = parse_and_verify(case.text, case.case_id)
        assert result.ok, [d.format() for d in result.diagnostics]
        lines = [line.strip() for line in to_text(result).splitlines()]
        for want in _literal_checks(case.text):
            checked += 1
            if want not in KNOWN_DIFFERENCES and not any(want in line for line in lines):
                missing.append(f"{case.case_id}: {want}")
    assert checked >= 60
    assert not missing, "\n".join(missing)


GENERIC_MHLO = """func.func @f(%a: tensor<2x3xf32>, %i: tensor<f32>, %t: tuple<tensor<2x3xf32>, tensor<f32>>) -> tensor<2xf32> {
  %0 = "mhlo.add"(%a, %a) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = "mhlo.compare"(%0, %a) {comparison_direction = #mhlo<comparison_direction LT>, compare_type = #mhlo<comparison_type TOTALORDER>} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  %2 = "mhlo.reduce"(%0, %i) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = "mhlo.maximum"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "mhlo.return"(%s) : (tensor<f32>) -> ()
  }) {dimensions = dense<1> : tensor<1xi64>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
  %3 = "mhlo.get_tuple_element"(%t) {index = 1 : i32} : (tuple<tensor<2x3xf32>, tensor<f32>>) -> tensor<f32>
  %4 = "mhlo.broadcast_in_dim"(%i) {broadcast_dimensions = dense<> : tensor<0xi64>} : (tensor<f32>) -> tensor<2x3xf32>
  %5 = "mhlo.complex"(%a, %a) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xcomplex<f32>>
  %6 = "mhlo.copy"(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %7 = mhlo.constant dense<1.0> : tensor<2xf32>
  "mhlo.return"(%2) : (tensor<2xf32>) -> ()
}
"""


def test_generic_mhlo_prints_pretty_and_reads_back_the_same():
    result = parse_and_verify(GENERIC_MHLO, "<mhlo>")
    assert result.ok, [d.format() for d in result.diagnostics]
    printed = to_text(result)
    for want in (
            "%0 = mhlo.add %a, %a : tensor<2x3xf32>",
            "%1 = mhlo.compare LT, %0, %a, TOTALORDER : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>",
            "%2 = mhlo.reduce(%0 init: %i) applies mhlo.maximum across dimensions = [1] : "
            "(tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>",
            "%3 = mhlo.get_tuple_element %t[1] : (tuple<tensor<2x3xf32>, tensor<f32>>) -> tensor<f32>",
            # mhlo's dense-element dimensions have no pretty spelling: generic, as mlir-hlo prints it
            '%4 = "mhlo.broadcast_in_dim"(%i) {broadcast_dimensions = dense<> : tensor<0xi64>}',
            "%5 = mhlo.complex %a, %a : tensor<2x3xcomplex<f32>>",
            "%6 = mhlo.copy %a : tensor<2x3xf32>",
            "mhlo.return %2 : tensor<2xf32>"):
        assert want in printed, printed
    again = parse_and_verify(printed, "<printed>")
    assert again.ok, [d.format() for d in again.diagnostics]
    assert ir_key(again.module) == ir_key(result.module)
    assert to_text(again) == printed


def test_verbatim_dot_numbers_in_another_order_stay_generic():
    """`#mhlo.dot<...>` written in another field order reads back differently from the pretty
    form (which always writes the canonical order), so it prints generic."""
    text = """func.func @f(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = "mhlo.dot_general"(%a, %b) {dot_dimension_numbers = #mhlo.dot<lhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_batching_dimensions = [0], rhs_contracting_dimensions = [1]>} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  %1 = "mhlo.dot_general"(%a, %b) {dot_dimension_numbers = #mhlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  return %1 : tensor<2x3x5xf32>
}
"""
    result = parse_and_verify(text, "<dot>")
    printed = to_text(result)
    assert '%0 = "mhlo.dot_general"' in printed
    assert "%1 = mhlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1]" in printed
    assert ir_key(parse_and_verify(printed, "<p>").module) == ir_key(result.module)
