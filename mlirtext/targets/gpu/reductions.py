"""Row reductions: one workgroup per output element, its threads sharing the row's reduction.

A kernel is a row reduction when, at the linalg level, it is a `linalg.fill` with a constant
followed by one reduction of a kernel argument over its innermost axis (linalg.reduce, or a
linalg.generic whose last loop is the only reduction and whose input is read at every loop
index) with a single associative, commutative combiner (add, mul, max, min, and, or, xor), then
possibly an elementwise epilogue (epilogue.py: stablehlo.reduce's combination with its init
value), whose result the kernel returns: a row sum, a row max, softmax's max and sum when they
are dispatches of their own.

Each of the workgroup's WIDTH threads combines the elements j = x, x + WIDTH, ... of its row,
starting from the combiner's identity; the partials go to workgroup memory and are combined
pairwise in a tree (WIDTH / 2 threads, then WIDTH / 4, ..., a barrier after each level); thread
0 combines the total with the fill value and stores it. The same conventions as tiling.py (id
arguments, `__workgroup_` globals in memory space 3, the barrier call) make every GPU target
emit it. Sums are reassociated (as any parallel reduction is): results equal the serial loop's
within float rounding.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ...dialects.linalg import fill_value
from ...ir import types as T
from ...ir.core import Operation
from .tiling import BARRIER, ID_ARGUMENTS, WORKGROUP_PREFIX, WORKGROUP_SPACE, scalar_constant, constant_text

#: Threads per workgroup (fewer for short rows: the next power of two at or above the row length).
WIDTH = 256
#: Rows shorter than this keep one thread per row (nothing to share).
MIN_LENGTH = 128
#: The most workgroups along x every Vulkan implementation launches (maxComputeWorkGroupCount).
MAX_GROUPS = 65535

_FLOAT_IDENTITY = {"arith.addf": 0.0, "arith.mulf": 1.0, "arith.maximumf": -math.inf, "arith.maxnumf": -math.inf,
                   "arith.minimumf": math.inf, "arith.minnumf": math.inf}
_INT_IDENTITY = {"arith.addi": lambda w: 0, "arith.muli": lambda w: 1, "arith.andi": lambda w: -1,
                 "arith.ori": lambda w: 0, "arith.xori": lambda w: 0, "arith.maxsi": lambda w: -(1 << (w - 1)),
                 "arith.minsi": lambda w: (1 << (w - 1)) - 1, "arith.maxui": lambda w: 0,
                 "arith.minui": lambda w: -1}


@dataclass
class RowReduction:
    """out[r] = fill combined with in[r, j] for all j (r over the output's elements)."""
    source: int              # the argument number of the reduced input
    rows: int
    length: int
    element: T.Type
    fill: object
    combiner: str            # the arith op
    width: int               # threads per workgroup
    epilogue: object = None  # an epilogue.Epilogue, or None

    def launch(self):
        from .threads import Launch
        return Launch(self.rows * self.width, False, (), (self.width, 1), (self.rows, 1, 1), (1, self.length),
                      "row reduction")

    def kernel_text(self, name: str, in_types: list, out_type: T.MemRefType, attributes: str) -> str:
        return _kernel_text(name, self, in_types, out_type, attributes)


def match_row_reduction(fn: Operation):
    """The RowReduction kernel `fn` (linalg on tensors) computes, or None."""
    from ...transforms.conversions.linalg_to_loops import structured
    from .epilogue import fill_then_ops, match_epilogue
    ops = fill_then_ops(fn)
    if ops is None:
        return None
    fill, reduction = ops[:2]
    if reduction.name not in ("linalg.reduce", "linalg.generic") or len(reduction.operands) != 2:
        return None
    source, init = reduction.operands
    arguments = list(fn.regions[0].blocks[0].arguments)
    if init is not fill.results[0] or source not in arguments:
        return None
    epilogue = match_epilogue(ops[2:], reduction, arguments)
    if epilogue is None:
        return None
    try:
        s = structured(reduction)
    except Exception:  # noqa: BLE001 - what the loops step cannot describe is not tiled
        return None
    last = s.num_dims - 1
    identity = tuple(("dim", d) for d in range(s.num_dims))
    if s.reductions != {last} or tuple(s.maps[0].results) != identity or tuple(s.maps[1].results) != identity[:-1]:
        return None
    element, value = reduction.results[0].type.element, scalar_constant(fill_value(fill))
    combiner = _combiner(s.body)
    if value is None or combiner is None or source.type.element != element or identity_text(combiner, element) is None:
        return None
    length = source.type.shape[-1]
    rows = math.prod(source.type.shape[:-1])
    if length < MIN_LENGTH or not 0 < rows <= MAX_GROUPS:
        return None
    return RowReduction(arguments.index(source), rows, length, element, value, combiner, min(WIDTH, 1 << (length - 1).bit_length()),
                        epilogue or None)


def _combiner(body):
    """The op name when the body is `yield(op(in, acc))` (either operand order), else None."""
    if len(body.ops) != 2:
        return None
    op, yield_ = body.ops
    if list(yield_.operands) != [op.results[0]] or set(op.operands) != set(body.arguments) or len(op.operands) != 2:
        return None
    return op.name


def identity_text(combiner: str, t: T.Type):
    """The combiner's identity as MLIR constant text for element type t (f32 and i32: the types
    tiled reductions are tested with), or None."""
    if isinstance(t, T.FloatType) and t.name == "f32" and combiner in _FLOAT_IDENTITY:
        return constant_text(_FLOAT_IDENTITY[combiner], t)
    if isinstance(t, T.IntegerType) and t.width == 32 and combiner in _INT_IDENTITY:
        return constant_text(_INT_IDENTITY[combiner](t.width), t)
    return None


def tree_lines(partials: str, partials_t: str, combiner: str, e: T.Type, width: int, suffix: str = "",
               radix: int = 2) -> list:
    """The tree over the `width` partials in workgroup memory `partials` (powers of two): while n
    partials are left, the threads x below s = n / radix fold partials x + s, x + 2 s, ... into
    partial x, a barrier after each level; the total ends in partials[0]. `suffix` keeps the names
    of several trees in one kernel apart."""
    lines, n = [], width
    while n > 1:
        step = n // min(radix, n)
        h = f"{step}{suffix}"
        lines += [f"%half{h} = arith.constant {step} : index",
                  f"%low{h} = arith.cmpi ult, %local_x, %half{h} : index", f"scf.if %low{h} {{",
                  f"  %a{h} = memref.load {partials}[%local_x] : {partials_t}"]
        folded = f"%a{h}"
        for k in range(1, n // step):
            o = f"{h}_{k}"
            lines += [f"  %offset{o} = arith.constant {k * step} : index",
                      f"  %other{o} = arith.addi %local_x, %offset{o} : index",
                      f"  %b{o} = memref.load {partials}[%other{o}] : {partials_t}",
                      f"  %f{o} = {combiner} {folded}, %b{o} : {e}"]
            folded = f"%f{o}"
        lines += [f"  memref.store {folded}, {partials}[%local_x] : {partials_t}", "}",
                  f"func.call @{BARRIER}() : () -> ()"]
        n = step
    return lines


def _kernel_text(name: str, rr: RowReduction, in_types: list, out_type: T.MemRefType, attributes: str) -> str:
    e, w = rr.element, rr.width
    fill = constant_text(rr.fill, e)
    partials_t = f"memref<{w}x{e}, {WORKGROUP_SPACE}>"
    partials = f"{WORKGROUP_PREFIX}{name}_partials"
    source_t = in_types[rr.source]
    params = [f"%in{i}: {t}" for i, t in enumerate(in_types)]
    params += [f"%{a}: index" for a in ID_ARGUMENTS] + [f"%out0: {out_type}"]
    lines = [f'memref.global "private" @{partials} : {partials_t} = uninitialized',
             f"func.func @{name}({', '.join(params)}) attributes {{{attributes}}} {{",
             "  %c0 = arith.constant 0 : index", f"  %width = arith.constant {w} : index",
             f"  %length = arith.constant {rr.length} : index",
             f"  %identity = arith.constant {identity_text(rr.combiner, e)} : {e}", f"  %fill = arith.constant {fill} : {e}",
             f"  %partials = memref.get_global @{partials} : {partials_t}"]
    # The output element this workgroup computes: the row number in the output's own indices.
    out_shape = list(source_t.shape[:-1])
    index = []
    for d, extent in enumerate(out_shape):
        inner = math.prod(out_shape[d + 1:])
        lines += [f"  %inner{d} = arith.constant {inner} : index", f"  %extent{d} = arith.constant {extent} : index",
                  f"  %q{d} = arith.divui %group_x, %inner{d} : index", f"  %i{d} = arith.remui %q{d}, %extent{d} : index"]
        index.append(f"%i{d}")
    at = ", ".join(index + ["%j"])
    lines += [f"  %partial = scf.for %j = %local_x to %length step %width iter_args(%acc = %identity) -> ({e}) {{",
              f"    %x = memref.load %in{rr.source}[{at}] : {source_t}", f"    %y = {rr.combiner} %x, %acc : {e}",
              f"    scf.yield %y : {e}", "  }",
              f"  memref.store %partial, %partials[%local_x] : {partials_t}", f"  func.call @{BARRIER}() : () -> ()"]
    lines += ["  " + line for line in tree_lines("%partials", partials_t, rr.combiner, e, w)]
    value, tail = "%result", []
    if rr.epilogue:
        tail, value = rr.epilogue.lines(value, dict(enumerate(index)), in_types, "")
    lines += ["  %first = arith.cmpi eq, %local_x, %c0 : index", "  scf.if %first {",
              f"    %total = memref.load %partials[%c0] : {partials_t}", f"    %result = {rr.combiner} %total, %fill : {e}",
              *(f"    {t}" for t in tail), f"    memref.store {value}, %out0[{', '.join(index)}] : {out_type}", "  }",
              "  return", "}", f"func.func private @{BARRIER}()"]
    return "\n".join(lines) + "\n"
