"""The VM against the real IREE: the bundled examples, compiled by mlirtext and run on local-task,
give what iree-compile + iree-run-module give on the same inputs (the benchmark programs: in
test_vm_oracle_programs.py); iree-opt accepts the IR after dispatch formation."""
from __future__ import annotations

import numpy as np
import pytest

from mlirtext import runtime

from .test_vm_programs import PROGRAMS, close, inputs_for, module_file


EXAMPLES = [p for p in PROGRAMS if p.parent.name == "examples"]


@pytest.mark.oracle
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_matches_iree_run_module(path, tmp_path):
    check_against_iree(path, tmp_path)


def check_against_iree(path, tmp_path):
    from .oracle import iree_compile, iree_run
    data = module_file(path)
    m = runtime.load_module(data, device="local-task")
    (name,) = m.exports
    args = inputs_for(m.vm_module.functions[name], seed=2)
    got = m[name](*args)
    vmfb = iree_compile(path.read_text(), tmp_path)
    (want,) = iree_run(vmfb, name, args, 1, tmp_path)
    assert close(got, want.astype(got.dtype)), f"max |diff| {np.max(np.abs(got - want))}"


@pytest.mark.oracle
def test_dispatch_regions_are_accepted_by_iree_opt():
    from mlirtext.api import parse_and_verify
    from mlirtext.syntax.printer import print_module
    from mlirtext.compiler.driver import form_dispatches

    from .oracle import generic_forms
    texts = []
    for path in PROGRAMS:
        result = parse_and_verify(path.read_text(), str(path))
        form_dispatches(result.module)
        texts.append(print_module(result.module))
    assert generic_forms(texts) is not None
