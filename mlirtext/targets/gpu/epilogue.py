"""Elementwise ops after a tiled kernel's main op, applied to each output element before it is
stored (a bias and relu after a matmul, stablehlo.reduce's combination with its init value
after a row reduction).

An epilogue is a chain of linalg.generics (and reshapes that come back to the same shape),
all parallel, each writing the shape of the main result through an identity map, whose inputs
are the values so far (read at the element's own index), kernel arguments (read through their
indexing maps: broadcasts included) or splat constants, and whose bodies use nothing else but
scalar constants; the last one is what the kernel returns. Its bodies are written out op by op in
generic form at the loops level, with the names tiled kernels give their values.
"""
from __future__ import annotations

import numpy as np

from ...dialects.tensor import view_source
from ...ir import types as T
from ...ir.arrays import attr_to_array
from ...ir.core import Operation
from .tiling import scalar_constant, constant_text

_RESHAPES = ("tensor.expand_shape", "tensor.collapse_shape")


class Epilogue:
    """The generics of an epilogue, in order; `lines(...)` writes them for one output element."""

    def __init__(self, main: Operation, generics: list, arguments: list):
        self.main, self.generics, self.arguments = main, generics, arguments

    def __bool__(self) -> bool:
        return bool(self.generics)

    def lines(self, value: str, index: dict, in_types: list, suffix: str) -> tuple[list, str]:
        """(loops-level lines, the final value) for the element whose main result is `value` and
        whose loop index d is named index[d]; `suffix` keeps the names of one element's copy apart."""
        from ...syntax.printer import Printer
        from ...transforms.conversions.linalg_to_loops import structured
        lines, current, count = [], {self.main.results[0]: value}, 0
        result = value
        printer = Printer(generic=True)
        for g in self.generics:
            if g.name in _RESHAPES:   # back to the shape of the main result: the same element
                current[g.results[0]] = current[view_source(g)]
                continue
            s = structured(g)
            body = s.body
            ins = list(g.operands[:len(body.arguments) - 1])
            for arg, operand, amap in zip(body.arguments, ins, s.maps):
                count += 1
                name = f"%ep{count}{suffix}"
                if operand in current:
                    printer.names[id(arg)] = current[operand]
                elif operand in self.arguments:
                    at = []
                    for r in amap.results:
                        if r[0] == "dim":
                            at.append(index[r[1]])
                        else:   # a constant index (a broadcast axis of extent 1)
                            lines.append(f"{name}_{len(at)} = arith.constant {r[1]} : index")
                            at.append(f"{name}_{len(at)}")
                    number = self.arguments.index(operand)
                    lines.append(f"{name} = memref.load %in{number}[{', '.join(at)}] : {in_types[number]}")
                    printer.names[id(arg)] = name
                else:
                    lines.append(f"{name} = arith.constant {splat_text(operand)} : {operand.type.element}")
                    printer.names[id(arg)] = name
            for op in body.ops:
                for operand in op.operands:   # a scalar constant from outside the body
                    if id(operand) not in printer.names:
                        count += 1
                        printer.names[id(operand)] = f"%ep{count}{suffix}"
                        lines.append(f"%ep{count}{suffix} = arith.constant "
                                     f"{constant_text(scalar_constant(operand), operand.type)} : {operand.type}")
                if op is body.ops[-1]:   # the yield: its operand is the generic's value
                    break
                for r in op.results:
                    count += 1
                    printer.names[id(r)] = f"%ep{count}{suffix}"
                printer.out = []
                printer.operation(op)
                lines.append("".join(printer.out).strip())
            result = printer.value(body.ops[-1].operands_named("values")[0])
            current[g.results[0]] = result
        return lines, result


def splat_text(value) -> str:
    """A splat constant tensor's element as MLIR constant text (floats by their bits: exact)."""
    array = np.asarray(attr_to_array(value.op.attr("value"), value.type)).reshape(-1)
    return constant_text(array[0], value.type.element)


def match_epilogue(ops: list, main: Operation, arguments: list):
    """The Epilogue that `ops` (the kernel's ops after its main op, `func.return` last) form on
    `main`'s result, or None when they are not one."""
    from ...transforms.conversions.linalg_to_loops import structured
    generics, ret = ops[:-1], ops[-1]
    if ret.name != "func.return" or len(ret.operands) != 1:
        return None
    produced, reshaped = [main.results[0]], []
    shape = main.results[0].type.shape
    for g in generics:
        if g.name in _RESHAPES and (view_source(g) in produced or view_source(g) in reshaped):
            # Row-major reshapes keep the elements' order: one that comes back to the main
            # result's shape is that value again.
            (produced if g.results[0].type.shape == shape else reshaped).append(g.results[0])
            continue
        if g.name != "linalg.generic" or len(g.results) != 1 or g.results[0].type.shape != shape:
            return None
        try:
            s = structured(g)
        except Exception:  # noqa: BLE001 - not an elementwise generic we can read
            return None
        identity = tuple(("dim", d) for d in range(len(shape)))
        if s.reductions or tuple(s.maps[-1].results) != identity:
            return None
        body = s.body
        ins = list(g.operands[:len(body.arguments) - 1])
        if body.arguments[-1].has_uses or any(op.regions for op in body.ops):
            return None
        inside = set(body.arguments) | {r for op in body.ops for r in op.results}
        if any(v not in inside and scalar_constant(v) is None for op in body.ops for v in op.operands):
            return None
        for operand, amap in zip(ins, s.maps):
            if operand in produced:
                if tuple(amap.results) != identity:
                    return None
            elif operand in arguments:
                if not isinstance(operand.type, T.RankedTensorType) or \
                        any(r[0] not in ("dim", "const") for r in amap.results):
                    return None
            elif not is_splat_constant(operand):
                return None
        produced.append(g.results[0])
    if ret.operands[0] is not produced[-1]:
        return None
    return Epilogue(main, generics, arguments)


def is_splat_constant(value) -> bool:
    """A constant tensor whose elements are all the same number."""
    owner = getattr(value, "op", None)
    if owner is None or owner.name != "arith.constant" or not isinstance(value.type, T.RankedTensorType):
        return False
    if not isinstance(value.type.element, (T.FloatType, T.IntegerType)) or \
            isinstance(value.type.element, T.FloatType) and value.type.element.name not in ("f16", "f32", "f64"):
        return False
    try:
        array = np.asarray(attr_to_array(owner.attr("value"), value.type)).reshape(-1)
    except Exception:  # noqa: BLE001
        return False
    return array.size > 0 and bool(np.all(array == array[0]))


def fill_then_ops(fn: Operation):
    """The ops of kernel `fn` (linalg on tensors) other than its constants and tensor.empty, when
    they are a linalg.fill, the structured op it initialises and at least one op after (the
    epilogue's yield included); else None. Tiled matmuls and row reductions both start so."""
    ops = [op for op in fn.regions[0].blocks[0].ops if op.name not in ("arith.constant", "tensor.empty")]
    return ops if len(ops) >= 3 and ops[0].name == "linalg.fill" else None

