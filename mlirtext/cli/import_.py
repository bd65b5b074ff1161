"""`mlirtext import jax|torch|onnx ...`: a framework's model as MLIR text (see README "Importing models")."""
from __future__ import annotations

import io
import sys

import numpy as np

from ..diagnostics import Diagnostic, report
from ..importers.common import ImportFailed
from ..importers.front_ends import import_from
from .io import write_output


def main(args) -> int:
    try:
        imported = import_from(args.front_end, args.target, arg_specs=args.args, args_npz=args.args_npz,
                               to=args.to, weights=args.weights)
    except ImportFailed as e:
        report([Diagnostic("error", str(e))])
        return 1
    problem = write_output(args.output, imported.text if imported.text.endswith("\n") else imported.text + "\n")
    if problem is None and imported.weight_names:
        problem = _write_weights(args.output, imported)
    if problem is not None:
        report([problem])
        return 1
    return 0


def _write_weights(output: str, imported):
    """With --weights=args: the weights, in @main's order after the inputs, beside the output."""
    names = ", ".join(imported.weight_names)
    if output == "-":
        print(f"note: @main takes the weights after the inputs: {names} (use -o to save them)", file=sys.stderr)
        return None
    path = output + ".weights.npz"
    buffer = io.BytesIO()
    np.savez(buffer, *imported.weights)
    problem = write_output(path, buffer.getvalue())
    if problem is None:
        print(f"note: {path}: the weights @main takes after the inputs ({names})", file=sys.stderr)
    return problem
