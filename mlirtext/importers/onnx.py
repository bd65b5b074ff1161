"""ONNX models to StableHLO, TOSA or Linalg through torch-mlir: its ONNX importer (what
`torch-mlir-import-onnx` runs) to the torch dialect, then `torch-onnx-to-torch-backend-pipeline`
and a backend pipeline (what `torch-mlir-opt` runs), in this process. A model torch-mlir cannot
convert as it is is tried again rewritten by `onnx_graph` (function ops expanded, constants folded)."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys

import numpy as np

from . import onnx_graph
from .common import ImportFailed, Imported, parse_imported, require

#: `--to` names and torch-mlir's backend pipelines.
PIPELINES = {
    "stablehlo": "torch-backend-to-stablehlo-backend-pipeline",
    "tosa": "torch-backend-to-tosa-backend-pipeline",
    "linalg": "torch-backend-to-linalg-on-tensors-backend-pipeline",
}


def import_model(path: str, to: str = "stablehlo", name: str = "") -> Imported:
    """The .onnx model at `path` as a parsed module at level `to`. torch-mlir runs in a child
    process: on some models it crashes (a segmentation fault in `torch-mlir-opt` as well), and
    that must be an error message, not the end of the caller's process."""
    text = convert_in_child(path, to)
    return Imported(text, parse_imported(text, name or path))


def convert_in_child(path: str, to: str) -> str:
    """`convert(path, to)` in a child process (`python -m mlirtext.importers.onnx PATH TO`)."""
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")])))
    child = subprocess.run([sys.executable, "-m", "mlirtext.importers.onnx", path, to], env=env,
                           capture_output=True, text=True)
    if child.returncode == 0:
        return child.stdout
    if child.returncode < 0:
        raise ImportFailed(f"torch-mlir crashed ({signal.Signals(-child.returncode).name}) converting '{path}' "
                           f"to {to}")
    raise ImportFailed(child.stderr.strip() or f"converting '{path}' failed (exit status {child.returncode})")


def convert(model, to: str = "stablehlo", constants: dict | None = None) -> str:
    """The MLIR text torch-mlir makes of `model` (a path or a ModelProto) at level `to`
    (ImportFailed when it cannot). `constants` binds graph inputs by name to numpy arrays: they
    become initializers, so the function no longer takes them. StableHLO's shapes are static,
    so an input that decides a shape (Reshape's shape, TopK's k, a reduction's axes) must be
    a constant for torch-mlir to convert the model."""
    onnx = require("onnx", "onnx", "ONNX")
    require("torch_mlir", "onnx", "ONNX")
    if to not in PIPELINES:
        raise ImportFailed(f"unknown target level '{to}': one of {', '.join(PIPELINES)}")
    proto = _load(onnx, model) if isinstance(model, str) else model
    if constants:
        proto = _with_constant_inputs(proto, constants)
    if isinstance(model, str) or constants:  # the importer needs the shapes ONNX infers
        proto = _infer_shapes(onnx, proto, f"'{model}'" if isinstance(model, str) else "the model")
    try:
        return _import_and_lower(proto, to)
    except _Unconverted as e:
        first = e
    # Then the graph rewritten, keeping what it computes (onnx_graph.py): an op torch-mlir has no
    # conversion for (Attention, RMSNormalization), or one whose conversion it cannot lower
    # (NegativeLogLikelihoodLoss to StableHLO), may be one ONNX defines as a function of other
    # ops, and is then replaced by that function's body, as a runtime without a kernel for it
    # runs it; and values known before the model runs (axes and shapes computed in the graph)
    # are folded to the constants StableHLO's static shapes need. First the function ops
    # torch-mlir names, then every function op (None), nested ones included.
    named = first.ops & onnx_graph.function_ops(onnx, proto)
    folded = None
    for ops in ([named] if named else []) + [None]:
        try:
            # Folded before the expansion too (once for both tries): a function op on constants
            # (Range) is computed rather than expanded into a body torch-mlir may not take (a Loop).
            if folded is None:
                folded = onnx_graph.infer_shapes(onnx, onnx_graph.fold_constants(onnx, proto))
            rewritten = onnx_graph.fold_constants(onnx, onnx_graph.expand_functions(onnx, folded, ops))
            return _import_and_lower(onnx_graph.infer_shapes(onnx, rewritten), to)
        except _Unconverted as e:
            last = e
        except ImportFailed as e:   # the importer rejects the rewritten graph
            last = _Unconverted(str(e), set())
        except Exception as e:   # ONNX cannot rewrite the graph (a function it cannot specialise)
            last = _Unconverted(f"rewriting the graph failed: {type(e).__name__}: {_first_line(e)}", set())
    raise ImportFailed(f"{first.message}\n  and with function ops expanded and constants folded: "
                       f"{last.message.splitlines()[-1].strip()}")


class _Unconverted(Exception):
    """torch-mlir's pipeline failed; `ops` are the ONNX ops it left unconverted."""

    def __init__(self, message: str, ops: set[str]):
        super().__init__(message)
        self.message, self.ops = message, ops


def _import_and_lower(proto, to: str) -> str:
    """torch-mlir's import of `proto`, lowered to level `to`."""
    from torch_mlir.dialects import torch as torch_d
    from torch_mlir.extras import onnx_importer
    from torch_mlir.ir import Context, MLIRError
    from torch_mlir.passmanager import PassManager
    context = Context()
    torch_d.register_dialect(context)
    try:
        info = onnx_importer.ModelInfo(proto)
        module = info.create_module(context=context).operation
        onnx_importer.NodeImporter.define_function(info.main_graph, module).import_all()
    except Exception as e:  # the importer rejects the graph (an unsupported type or attribute)
        raise ImportFailed(f"torch-mlir's ONNX importer rejected the model: {type(e).__name__}: {e}") from None
    pipeline = f"builtin.module(torch-onnx-to-torch-backend-pipeline,{PIPELINES[to]})"
    try:
        with context:
            PassManager.parse(pipeline).run(module)
    except MLIRError as e:
        raise _Unconverted(*_conversion_problem(e, to)) from None
    return module.get_asm()


def _load(onnx, path: str):
    try:
        return onnx.load(path)
    except Exception as e:  # a missing file, or bytes that are no ONNX protobuf
        raise ImportFailed(f"cannot read ONNX model '{path}': {type(e).__name__}: {e}") from None


def _infer_shapes(onnx, proto, what: str):
    """`proto` checked, with the shapes ONNX infers, data propagation included (as
    torch-mlir-import-onnx does by default: a Shape -> Gather -> Reshape chain gets a static shape)."""
    try:
        onnx.checker.check_model(proto)
        return onnx.shape_inference.infer_shapes(proto, data_prop=True)
    except Exception as e:
        raise ImportFailed(f"{what} is not a valid ONNX model: {type(e).__name__}: {_first_line(e)}") from None


def _with_constant_inputs(proto, constants: dict):
    """A copy of `proto` whose graph inputs named in `constants` are initializers with those values."""
    from onnx import numpy_helper
    bound = type(proto)()
    bound.CopyFrom(proto)
    graph = bound.graph
    initialized = {t.name for t in graph.initializer}
    inputs = [i for i in graph.input if i.name not in initialized]
    unknown = sorted(set(constants) - {i.name for i in inputs})
    if unknown:
        raise ImportFailed(f"the model has no input named '{unknown[0]}' "
                           f"(its inputs: {', '.join(i.name for i in inputs) or 'none'})")
    for name, value in constants.items():
        graph.initializer.append(numpy_helper.from_array(np.asarray(value), name))
    kept = [i for i in graph.input if i.name not in constants]
    del graph.input[:]
    graph.input.extend(kept)
    del graph.value_info[:]  # shapes inferred without the constants; inferred again with them
    return bound


#: The op a `torch.operator` stands for, in its custom (`torch.operator "onnx.X"`) or generic form.
_ONNX_OP = re.compile(r'"onnx\.(\w+)"')


def _conversion_problem(error, to: str) -> tuple[str, set[str]]:
    """Which ONNX ops (and nodes) torch-mlir left unconverted, from its diagnostics: the message
    and the ops' names."""
    lines, ops = [], set()
    for d in error.error_diagnostics:
        text = "\n".join([d.message] + [n.message for n in d.notes])
        op = _ONNX_OP.search(text) or _ONNX_OP.search(str(d.location))
        where = f" at {d.location}" if str(d.location) not in ("loc(unknown)", 'loc("")') else ""
        if op:
            ops.add(op.group(1))
            lines.append(f"the ONNX op {op.group(1)}{where} has no conversion to {to} in torch-mlir: {d.message}")
        else:
            lines.append(f"{d.message}{where}")
    return "torch-mlir could not convert the model:\n  " + "\n  ".join(lines or [_first_line(error)]), ops


def _first_line(e: Exception) -> str:
    return (str(e).strip().splitlines() or [""])[0]


if __name__ == "__main__":  # the child process of `convert_in_child`
    try:
        sys.stdout.write(convert(sys.argv[1], sys.argv[2]))
    except ImportFailed as e:
        sys.stderr.write(str(e))
        sys.exit(1)
