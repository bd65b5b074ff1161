"""`mlirtext import jax|torch|onnx ...`: a framework's model as MLIR text (see README "Importing models")."""
from __future__ import annotations

import sys

LEVELS = ["stablehlo", "tosa", "linalg"]


def add_arguments(sub) -> None:
    from ..cli import _Parser
    imp = sub.add_parser("import", help="import a JAX function, a PyTorch module or an ONNX model as MLIR",
                         description="Drive the framework's own importer and write MLIR text mlirtext has "
                                     "parsed and verified. Each front end is an optional extra: "
                                     "pip install 'mlirtext[jax]', '[torch]' or '[onnx]'.")
    fronts = imp.add_subparsers(dest="front_end", required=True, parser_class=_Parser)
    jx = fronts.add_parser("jax", help="a jitted Python function to StableHLO, with Python source locations")
    jx.add_argument("target", metavar="MODULE:FUNCTION", help="a module (or a .py file) and a function in it")
    _add_example_inputs(jx)
    th = fronts.add_parser("torch", help="a torch.nn.Module (from a factory function) through torch.export "
                                         "and torch-mlir")
    th.add_argument("target", metavar="MODULE:FACTORY",
                    help="a module (or a .py file) and a function in it returning the torch.nn.Module")
    _add_example_inputs(th)
    th.add_argument("--to", choices=LEVELS, default="stablehlo", help="the level to import to (default stablehlo)")
    th.add_argument("--weights", choices=["inline", "args"], default="inline",
                    help="inline: weights are constants in the module (default); args: @main takes them "
                         "after the model's inputs (written to OUT.weights.npz with -o)")
    ox = fronts.add_parser("onnx", help="an .onnx model through torch-mlir's ONNX importer")
    ox.add_argument("model", metavar="MODEL.onnx")
    ox.add_argument("--to", choices=LEVELS, default="stablehlo", help="the level to import to (default stablehlo)")
    for p in (jx, th, ox):
        p.add_argument("-o", dest="output", default="-", help="output file (default: standard output)")


def _add_example_inputs(p) -> None:
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument("--args", nargs="+", metavar="SPEC",
                       help="each argument's shape and element type: 4x8xf32, 16xi32, f32")
    group.add_argument("--args-npz", metavar="FILE.npz", help="example inputs, in the file's order")


def cmd_import(args) -> int:
    from ..cli import write_output
    from ..diagnostics import report
    from ..diagnostics import Diagnostic
    from .common import ImportFailed
    try:
        imported = _import(args)
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


def _import(args):
    from .common import example_arrays, load_npz, load_object
    if args.front_end == "onnx":
        from .onnx import import_model
        return import_model(args.model, to=args.to)
    target = load_object(args.target)
    if args.front_end == "jax":
        from .jax import import_function, shape_structs
        inputs = load_npz(args.args_npz) if args.args_npz else shape_structs(args.args)
        return import_function(target, *inputs, name=args.target)
    from .common import ImportFailed
    from .torch import import_module
    try:
        model = target()
    except Exception as e:  # the user's factory failed
        raise ImportFailed(f"{args.target}() failed: {type(e).__name__}: {e}") from None
    inputs = load_npz(args.args_npz) if args.args_npz else example_arrays(args.args)
    return import_module(model, *inputs, to=args.to, weights=args.weights, name=args.target)


def _write_weights(output: str, imported):
    """With --weights=args: the weights, in @main's order after the inputs, beside the output."""
    import numpy as np

    from ..diagnostics import Diagnostic
    names = ", ".join(imported.weight_names)
    if output == "-":
        print(f"note: @main takes the weights after the inputs: {names} (use -o to save them)", file=sys.stderr)
        return None
    path = output + ".weights.npz"
    try:
        np.savez(path, *imported.weights)
    except OSError as e:
        return Diagnostic("error", f"could not write '{path}': {e.strerror}")
    print(f"note: {path}: the weights @main takes after the inputs ({names})", file=sys.stderr)
    return None
