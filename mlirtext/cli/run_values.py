"""The `--input` and `--output` values of `run` (and of `opt --check-semantics`, `bisect` and
`reduce`): parsed for a function's argument types, printed as iree-run-module prints them, or
written as .npy files."""
from __future__ import annotations

import io
from typing import Optional

import numpy as np

from ..diagnostics import Diagnostic, report
from ..values import ValueError_, format_results, format_value, parse_inputs as parse_input_values
from .io import write_output


def npy_bytes(value) -> bytes:
    """`value` as the bytes of an .npy file."""
    buffer = io.BytesIO()
    np.save(buffer, np.asarray(value), allow_pickle=False)
    return buffer.getvalue()


def parse_inputs(specs: list, fn_name: str, types) -> Optional[list]:
    """The `--input` values for a function taking `types`; None after reporting a wrong count or value."""
    try:
        return parse_input_values(specs, fn_name, types)
    except ValueError_ as e:
        report([Diagnostic("error", str(e))])
        return None


def print_outputs(specs: list, outputs, types, max_elements: Optional[int] = None) -> int:
    """Print the results as iree-run-module does (at most `max_elements` elements of each), or write
    each where its `--output` says (`-` print, `@FILE.npy` write whole, `+FILE.npy` append); the
    exit status."""
    if not specs:
        print(format_results(outputs, types, max_elements))
        return 0
    if len(specs) > len(outputs):
        report([Diagnostic("error", f"{len(specs)} --output given for {len(outputs)} results")])
        return 1
    for spec, value, t in zip(specs, outputs, types):
        if spec == "-":
            print(format_value(value, t, max_elements))
            continue
        if not spec.startswith(("@", "+")):
            report([Diagnostic("error", f"--output={spec}: expected '-', '@FILE.npy' or '+FILE.npy'")])
            return 1
        problem = write_output(spec[1:], npy_bytes(value), append=spec[0] == "+")
        if problem is not None:
            report([problem])
            return 1
    return 0
