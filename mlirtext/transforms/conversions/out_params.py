"""results-to-out-params: destination-passing style for bufferized functions.

After bufferization a function returns fresh `malloc`ed buffers. A kernel the
VM dispatches should instead write into buffers the VM owns (so that the VM
plans memory: reuses a buffer whose last use has passed). This pass turns each
result into a trailing memref argument:

- a returned buffer that the function allocated itself (`memref.alloc` in the
  entry block, returned once) is replaced by the argument: the computation
  writes the caller's buffer in place, no copy;
- any other returned buffer (a view, an argument, a global) is copied into it;
- a scalar result is stored into a 0-d memref argument.

The function then returns nothing; buffers it still allocates for itself are
freed before it returns. `mlirtext.out_params = N` says the last N arguments
are outputs (the tensor signature stays in `mlirtext.abi`), and both travel
down to the llvm.func.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...ir import types as T
from ...ir.attributes import IntegerAttr, TypeAttr
from ...ir.core import Operation
from ..passes import Pass, PassFailure

OUT_PARAMS_ATTR = "mlirtext.out_params"


def _out_type(t: T.Type) -> T.Type:
    return t if isinstance(t, T.MemRefType) else T.MemRefType((), t)


def _create(before: Operation, name: str, operands, result_types=()) -> Operation:
    op = Operation(name, list(operands), list(result_types), {}, span=before.span, location=before.location)
    op.name_span = before.name_span
    before.parent.insert_before(before, op)
    return op


def to_out_params(fn: Operation) -> None:
    from ...dialects.func import function_type
    ftype = function_type(fn)
    if OUT_PARAMS_ATTR in fn.attributes or not fn.regions or not fn.regions[0].blocks:
        return
    if any(isinstance(t, T.RankedTensorType) for t in (*ftype.inputs, *ftype.results)):
        raise PassFailure(f"results-to-out-params: @{fn.sym_name} is not bufferized (run "
                          "convert-linalg-to-loops first)", fn.span)
    entry = fn.regions[0].blocks[0]
    returns = [op for block in fn.regions[0].blocks for op in block.ops if op.name == "func.return"]
    outs = [entry.add_argument(_out_type(t), name=f"out{i}") for i, t in enumerate(ftype.results)]
    in_place = len(returns) == 1
    for ret in returns:
        for i, (value, out) in enumerate(zip(ret.operands, outs)):
            owner = getattr(value, "op", None)
            if not isinstance(value.type, T.MemRefType):
                _create(ret, "memref.store", [value, out])
            elif in_place and owner is not None and owner.name == "memref.alloc" and owner.parent is entry \
                    and value.type == out.type and list(ret.operands).count(value) == 1:
                value.replace_all_uses_with(out)   # the computation writes the caller's buffer
                owner.erase()
            else:
                _create(ret, "memref.copy", [value, out])
        ret.set_operands([])
    if in_place:  # what the function still allocates for itself does not outlive it
        ret = returns[0]
        for op in [o for o in entry.ops if o.name == "memref.alloc"]:
            _create(ret, "memref.dealloc", [op.results[0]])
    fn.attributes["function_type"] = TypeAttr(T.FunctionType(tuple(ftype.inputs) + tuple(o.type for o in outs), ()))
    fn.attributes[OUT_PARAMS_ATTR] = IntegerAttr(len(outs), T.i64)


@dataclass(frozen=True)
class ResultsToOutParams(Pass):
    name = "results-to-out-params"
    summary = "Destination-passing style: each result of a bufferized function becomes a trailing memref " \
              "argument written in place (mlirtext.out_params says how many)"
    anchor = "builtin.module"

    def run(self, module: Operation) -> None:
        for fn in [op for op in module.walk() if op.name == "func.func"]:
            to_out_params(fn)
