"""The VM against the real IREE on the five benchmark programs (the examples are in
test_vm_oracle.py): local-task's results equal iree-run-module's on the same inputs."""
from __future__ import annotations

import pytest

from .test_vm_oracle import check_against_iree
from .test_vm_programs import PROGRAMS

BENCHMARKS = [p for p in PROGRAMS if p.parent.name == "programs"]


@pytest.mark.oracle
@pytest.mark.parametrize("path", BENCHMARKS, ids=lambda p: p.stem)
def test_benchmark_program_matches_iree_run_module(path, tmp_path):
    check_against_iree(path, tmp_path)
