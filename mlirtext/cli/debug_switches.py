"""What `opt` and `bisect` share: the --debug-* fault switches and the function to follow."""
from __future__ import annotations

from ..diagnostics import Diagnostic, report
from ..debugging.faults import FAULTS, FaultSpec, FaultSpecError
from ..transforms.passes import builtin_passes
from .io import public_functions, runnable


def make_faults(args):
    """The faults the --debug-* switches ask for, or None after reporting a bad one."""
    faults = []
    for switch, cls in FAULTS.items():
        for text in getattr(args, switch[2:].replace("-", "_")) or []:
            try:
                faults.append(cls(FaultSpec.parse(text, builtin_passes())))
            except FaultSpecError as e:
                report([Diagnostic("error", f"{switch}: {e}")])
                return None
    return faults


def never_struck(fault) -> Diagnostic:
    return Diagnostic("warning", f"{fault.flag()} never struck: no run of pass '{fault.spec.pass_name}' "
                                 f"left an op named {fault.spec.op_name}")


def pick_function(module, name, path):
    """The function named `name` (a func.func, or an llvm.func lowered from one), or the module's only
    public one; None after reporting."""
    if name is None:
        public = public_functions(module)
        if len(public) != 1:
            report([Diagnostic("error", f"{path}: --function is needed: the module has {len(public)} public "
                                        f"functions ({', '.join(public) or 'none'})")])
            return None
        name = public[0]
    name = name.lstrip("@")
    body = module.regions[0].blocks[0].ops
    fn = next((op for op in body if runnable(op) and op.sym_name == name), None)
    if fn is None:
        report([Diagnostic("error", f"{path}: there is no function @{name} with a body")])
    return fn
