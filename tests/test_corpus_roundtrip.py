"""Round trip against the real MLIR: parse, verify, print; iree-opt must agree.

For every valid corpus case that iree-opt accepts and that uses only the core
dialects (other dialects only in generic form), mlirtext's custom and generic
prints must be accepted by iree-opt and give the same generic form as the
original. Cases are batched per corpus file: one iree-opt run per batch.
"""
from __future__ import annotations

from collections import defaultdict

import pytest

from mlirtext.api import parse_and_verify, to_text

from . import corpus
from .oracle import generic_form, generic_forms

pytestmark = [pytest.mark.oracle, pytest.mark.skipif(not corpus.available(), reason="no corpus")]

#: Cases we knowingly do not read yet, with the reason.
KNOWN_GAPS = {
    # `dense<tensor<2x!tosa.mxint8> : [...]>`: a self-typed dense literal of a dialect element type.
    "llvm-project/mlir__test__Dialect__Tosa__ops#219",
}


def _batches():
    by_file = defaultdict(list)
    for case in corpus.core_cases():
        if case.case_id not in KNOWN_GAPS:
            by_file[case.file].append(case)
    return sorted(by_file.items())


BATCHES = _batches() if corpus.available() else []


def test_core_case_count_is_stable():
    """The README quotes this count; it must not silently shrink."""
    assert sum(len(b) for _, b in BATCHES) >= 900


@pytest.mark.parametrize("file,cases", BATCHES, ids=[f for f, _ in BATCHES])
def test_round_trip(file, cases):
    ours_custom, ours_generic = [], []
    for case in cases:
        result = parse_and_verify(case.text, case.case_id)
        problems = "\n".join(d.format() for d in result.diagnostics)
        assert result.ok, f"{case.case_id}: mlirtext rejects a case iree-opt accepts:\n{problems}"
        ours_custom.append(to_text(result))
        ours_generic.append(to_text(result, generic=True))
    originals = generic_forms([c.text for c in cases])
    assert originals is not None, f"iree-opt rejects the original cases of {file}"
    for label, ours in (("custom", ours_custom), ("generic", ours_generic)):
        printed = generic_forms(ours)
        if printed is None:  # find the case that fails, for a precise message
            for case, text in zip(cases, ours):
                out, err = generic_form(text)
                assert out is not None, f"{case.case_id}: iree-opt rejects our {label} print:\n{err}\n{text}"
        for case, want, got, text in zip(cases, originals, printed, ours):
            assert got == want, f"{case.case_id}: our {label} print means something else:\n{text}"
