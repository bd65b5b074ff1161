"""Fused row kernels (softmax, layer norm, RMS norm): one workgroup per row, its threads sharing
each of the row's reductions and the elementwise work around them.

A kernel is a fused row kernel when, at the linalg level, its ops work on rows of one shape
R x L (L the innermost axis, MIN_LENGTH or more) and are, in SSA order:

- reductions over the last axis (linalg.reduce, or a linalg.generic whose only reduction is its
  last loop) whose body computes an element from its inputs and combines it with the accumulator
  by one associative, commutative op (add, mul, max, min, and, or, xor), starting from a constant
  fill or a value computed before: each gives one value per row (a "row value");
- elementwise linalg.generics over R x L ("full values": x - max, exp of that) or over R ("row
  values": mean = sum / L, rsqrt(var + eps)), reading kernel arguments through indexing maps of
  axes and constants (the row itself, a broadcast gamma, an init value), splat constants, and
  the values before them at their own element (a row value broadcast along the row);
- fills of constants, and reshapes of row values (one element per row in any shape);

and it returns one full value or row value. This is the shape the lowering gives softmax (max,
exp(x - max), sum, divide) and layer norm (sum, mean, x - mean, its square, sum, rsqrt, scale).
The plain row reduction (reductions.py) is tried first; anything else keeps the thread-per-row
kernel (threads.py).

The kernel runs a workgroup of `width` threads per row (row_width: at least PER_THREAD elements
a thread, 32 to 256 threads; a 2-D grid when there are more rows than one grid axis launches,
the workgroups past the last row doing nothing). For each reduction in turn, thread x combines the
elements j = x, x + width, ... of its input, computed on the spot from the kernel's arguments
and the row values so far (full values are recomputed where they are used, never stored: the
row is read again instead of held); the partials are combined by reductions.py's tree
(RADIX-way steps) in workgroup memory (one buffer per reduction, all of them within the 16 KiB
every Vulkan device has, each written once: no barrier after its last read); every thread reads
the total from there and combines it with the start value: a row value every thread holds. Row-valued generics run in every thread. Last, each thread computes
and stores the output elements j = x, x + width, ... (a row-valued result: thread 0 stores it).
Sums are reassociated, as in reductions.py: results equal the serial kernel's within float
rounding.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ...dialects.linalg import fill_value
from ...dialects.tensor import view_source
from ...ir import types as T
from ...ir.core import Operation
from .epilogue import splat_text, is_splat_constant
from .reductions import MIN_LENGTH, WIDTH, identity_text, tree_lines
from .tiling import BARRIER, ID_ARGUMENTS, MAX_GRID, WORKGROUP_PREFIX, WORKGROUP_SPACE, scalar_constant, constant_text

_RESHAPES = ("tensor.expand_shape", "tensor.collapse_shape")
#: The position along the row, in an element's index. The other entries: ("row", inner, extent),
#: the index (row // inner) % extent that the row number r has on an axis of a row-shaped tensor
#: (row-major: reshapes keep it), or a constant index.
J = "j"

#: Partials each thread folds per level of a reduction's tree (3 levels for 128 threads, not 7:
#: fewer barriers).
RADIX = 8
#: Elements of a row each thread takes at least (where WIDTH allows), so that its strided
#: partial, not the tree and its barriers, is most of a reduction's work; and the fewest threads
#: of a workgroup (a warp).
PER_THREAD = 8
MIN_WIDTH = 32
#: The workgroup memory every Vulkan implementation gives a workgroup (maxComputeSharedMemorySize):
#: the partials of all the kernel's reductions (4 bytes an element) must fit.
MAX_WORKGROUP_BYTES = 16384


def row_width(length: int) -> int:
    """Threads per workgroup for rows of `length`: a power of two."""
    return max(MIN_WIDTH, min(WIDTH, 1 << (-(-length // PER_THREAD) - 1).bit_length()))


@dataclass
class _Value:
    """What a tensor of the kernel is, element by element, for the row a workgroup computes."""
    kind: str                 # "argument", "constant", "row" or "full"
    home: tuple = ()          # a row or full value: the index of the row's element(s) it holds
    op: Operation = None      # a row or full value: the op computing it (a reshape's source's)
    number: int = 0           # an argument: its position
    text: str = ""            # a constant: its element's literal


@dataclass
class FusedRows:
    """A fused row kernel: `steps` (reductions, row-valued generics, and the func.return last)
    over rows of `rows_shape` x `length` (rows_shape (): one row, a whole vector); `values`
    maps the tensors of the kernel's linalg form (a copy) to what they are."""
    values: dict              # tensor value -> _Value
    steps: list               # ops in order: reductions and row generics, then the func.return
    rows_shape: tuple
    length: int
    width: int
    reductions: list          # the reductions among the steps, in order (partials buffer k: the k-th)
    full_home: tuple          # the index of a full value's element: the row's, then J

    @property
    def rows(self) -> int:
        return math.prod(self.rows_shape)

    def grid(self) -> tuple:
        """Workgroups along x and y: row r is workgroup (r % x, r // x)."""
        x = min(self.rows, MAX_GRID)
        return x, -(-self.rows // x)

    def launch(self):
        from .threads import Launch
        x, y = self.grid()
        return Launch(x * y * self.width, False, (), (self.width, 1), (x, y, 1), (1, self.length), "fused rows")

    def kernel_text(self, name: str, in_types: list, out_type: T.MemRefType, attributes: str) -> str:
        return _Writer(self, name, in_types, out_type).text(attributes)


def match_fused_rows(fn: Operation):
    """The FusedRows kernel `fn` (linalg on tensors) is, or None."""
    shape = _row_shape(fn.regions[0].blocks[0].ops)
    if shape is None:
        return None
    rows_shape, length = shape
    if length < MIN_LENGTH or not 0 < math.prod(rows_shape) <= MAX_GRID * MAX_GRID:
        return None
    fn = fn.clone()   # (the plan is read after the kernel itself went down to loops: keep its linalg form)
    block = fn.regions[0].blocks[0]
    arguments = list(block.arguments)
    if any(not isinstance(a.type, T.RankedTensorType) for a in arguments):
        return None
    analysis = _Analysis(rows_shape, length, arguments)
    steps = analysis.classify(block.ops)
    if steps is None:
        return None
    reductions = [op for op in steps if op.name != "func.return" and _is_reduction(op)]
    if len(reductions) * row_width(length) * 4 > MAX_WORKGROUP_BYTES:
        return None
    return FusedRows(analysis.values, steps, rows_shape, length, row_width(length), reductions, analysis.full_home)


def _row_shape(ops):
    """(R, L) of the kernel's first reduction over its last loop, or None."""
    for op in ops:
        if _is_reduction(op):
            s = _structured(op)
            if s is None or s.reductions != {s.num_dims - 1} or len(op.results) != 1:
                return None
            last = ("dim", s.num_dims - 1)
            for operand, amap in zip(op.operands, s.maps[:-1]):
                if last in amap.results and isinstance(operand.type, T.RankedTensorType):
                    return tuple(op.results[0].type.shape), operand.type.shape[list(amap.results).index(last)]
            return None
    return None


def _is_reduction(op: Operation) -> bool:
    if op.name == "linalg.reduce":
        return True
    if op.name != "linalg.generic":
        return False
    s = _structured(op)
    return s is not None and bool(s.reductions)


def _structured(op: Operation):
    from ...transforms.conversions.linalg_to_loops import structured
    try:
        return structured(op)
    except Exception:  # noqa: BLE001 - what the loops step cannot describe is not fused
        return None


class _Analysis:
    """Classifies the kernel's tensors (values) and keeps the ops that run per row (steps)."""

    def __init__(self, rows_shape: tuple, length: int, arguments: list):
        self.rows_shape, self.length = rows_shape, length
        self.values = {a: _Value("argument", number=n) for n, a in enumerate(arguments)}
        self.full_home = self.row_home(rows_shape) + (J,)

    def classify(self, ops) -> list | None:
        steps = []
        for op in ops:
            if op.name == "tensor.empty" or op.name == "arith.constant" and not is_splat_constant(op.results[0]):
                continue   # (scalar constants are read where a body uses them)
            if op.name == "arith.constant":
                self.values[op.results[0]] = _Value("constant", text=splat_text(op.results[0]))
            elif op.name == "linalg.fill":
                value = scalar_constant(fill_value(op))
                if value is None:
                    return None
                self.values[op.results[0]] = _Value("constant", text=constant_text(value, fill_value(op).type))
            elif op.name in _RESHAPES:
                if not self._reshape(op):
                    return None
            elif op.name == "func.return":
                if len(op.operands) != 1 or self.values.get(op.operands[0], _Value("")).kind not in ("row", "full"):
                    return None
                return steps + [op]
            elif _is_reduction(op):
                if not self._reduction(op):
                    return None
                steps.append(op)
            elif op.name == "linalg.generic":
                kind = self._elementwise(op)
                if kind is None:
                    return None
                if kind == "row":
                    steps.append(op)
            else:
                return None
        return None

    def row_home(self, shape) -> tuple | None:
        """The index of row r's element in a row value of `shape` (one element per row), or None."""
        if math.prod(shape) != math.prod(self.rows_shape):
            return None
        return tuple(("row", math.prod(shape[d + 1:]), extent) if extent != 1 else 0 for d, extent in enumerate(shape))

    def home(self, shape) -> tuple | None:
        """The element index of a computed tensor of `shape` (a full or a row value), or None."""
        return self.full_home if tuple(shape) == self.rows_shape + (self.length,) else self.row_home(shape)

    def readable(self, value, index: tuple) -> bool:
        """Whether every thread can read `value` at `index` (symbols of the loop's axes)."""
        info = self.values.get(value)
        if info is None or index is None:
            return False
        if info.kind == "argument":
            return len(index) == len(value.type.shape) and all(
                0 <= i < extent if isinstance(i, int) else (self.length if i == J else i[2]) == extent
                for i, extent in zip(index, value.type.shape))
        return info.kind == "constant" or index == info.home

    def _reshape(self, op) -> bool:
        source = self.values.get(view_source(op))
        if source is None or source.kind not in ("constant", "row"):
            return False
        if source.kind == "constant":
            self.values[op.results[0]] = source
            return True
        home = self.row_home(op.results[0].type.shape)
        if home is None:
            return False
        self.values[op.results[0]] = _Value("row", home, source.op)
        return True

    def _inputs_readable(self, op, s, symbols: tuple) -> bool:
        ins = op.operands[:len(s.body.arguments) - 1]
        return all(self.readable(v, _index(m, symbols)) for v, m in zip(ins, s.maps))

    def _elementwise(self, op) -> str | None:
        """"row" or "full" for an elementwise generic over a row value or a full value, else None."""
        s = _structured(op)
        if s is None or s.reductions or len(op.results) != 1 or not _plain_body(s.body, reduction=False):
            return None
        if list(s.maps[-1].results) != [("dim", d) for d in range(s.num_dims)]:
            return None
        home = self.home(op.results[0].type.shape)
        if home is None or not self._inputs_readable(op, s, home):
            return None
        kind = "full" if home == self.full_home else "row"
        self.values[op.results[0]] = _Value(kind, home, op)
        return kind

    def _reduction(self, op) -> bool:
        s = _structured(op)
        n = len(self.rows_shape)
        if s is None or len(op.results) != 1 or s.num_dims != n + 1 or s.reductions != {n}:
            return False
        if tuple(op.results[0].type.shape) != self.rows_shape or \
                list(s.maps[-1].results) != [("dim", d) for d in range(n)]:
            return False
        combiner = _combiner(s.body)
        if combiner is None or identity_text(combiner.name, op.results[0].type.element) is None or \
                not _plain_body(s.body, reduction=True):
            return False
        init = op.operands[len(s.body.arguments) - 1]
        home = self.row_home(self.rows_shape)
        if not self._inputs_readable(op, s, self.full_home) or not self.readable(init, home):
            return False
        self.values[op.results[0]] = _Value("row", home, op)
        return True


def _index(amap, symbols: tuple) -> tuple | None:
    """The index an operand is read at, through its map, in a loop whose axes are `symbols`."""
    out = []
    for r in amap.results:
        if r[0] == "dim":
            out.append(symbols[r[1]])
        elif r[0] == "const":
            out.append(int(r[1]))
        else:
            return None
    return tuple(out)


def _combiner(body):
    """The op that combines the accumulator (the body's last argument, used by it alone) with the
    element and whose result the body yields, or None."""
    if len(body.ops) < 2:
        return None
    op, yield_ = body.ops[-2], body.ops[-1]
    acc = body.arguments[-1]
    if list(yield_.operands) != [op.results[0]] or len(op.operands) != 2 or acc not in op.operands:
        return None
    if list(op.operands).count(acc) != 1 or any(acc in o.operands for o in body.ops if o is not op):
        return None
    return op


def _plain_body(body, reduction: bool) -> bool:
    """A body of scalar ops on its arguments and scalar constants (no regions, no linalg.index);
    an elementwise body does not read its output's element (the last argument)."""
    if not reduction and body.arguments[-1].has_uses:
        return False
    inside = set(body.arguments) | {r for op in body.ops for r in op.results}
    for op in body.ops[:-1]:
        if op.regions or op.name == "linalg.index" or len(op.results) != 1:
            return False
        if any(v not in inside and (scalar_constant(v) is None or isinstance(v.type, T.ShapedType))
               for v in op.operands):
            return False
    return True


class _Scope:
    """Lines being written at one indentation: the row loop's body, or a loop over the row's
    elements (`j` its index), with the element values it has computed (each computed once)."""

    def __init__(self, indent: str, j: str | None = None):
        self.indent, self.j, self.lines, self.known = indent, j, [], {}

    def add(self, *lines: str) -> None:
        self.lines += [self.indent + line for line in lines]


class _Writer:
    """Writes a FusedRows kernel as loops-level MLIR."""

    def __init__(self, plan: FusedRows, name: str, in_types: list, out_type: T.MemRefType):
        self.plan, self.name, self.in_types, self.out_type = plan, name, in_types, out_type
        self.count = 0
        self.index_constants = {0: "%c0"}
        self.row_values = {}   # the op computing a row value -> its name in the row loop

    def fresh(self, stem: str = "v") -> str:
        self.count += 1
        return f"%{stem}{self.count}"

    def index_name(self, symbol) -> str | None:
        """An index symbol's name (J's is the loop's own: None)."""
        if isinstance(symbol, int):
            return self.index_constants.setdefault(symbol, f"%c{symbol}")
        return f"%r{symbol[1]}_{symbol[2]}" if symbol != J else None

    def text(self, attributes: str) -> str:
        plan, w = self.plan, self.plan.width
        params = [f"%in{i}: {t}" for i, t in enumerate(self.in_types)]
        params += [f"%{a}: index" for a in ID_ARGUMENTS] + [f"%out0: {self.out_type}"]
        for size in (w, plan.length, plan.rows, plan.grid()[0]):   # (named before the rows' code uses them)
            self.index_name(size)
        # The workgroup's row; on a 2-D grid, the workgroups past the last row skip it all (the
        # same branch for all their threads: the barriers stay in uniform control flow). (Not a
        # loop over the rows: with one around them, LLVM 22's SPIR-V back-end turned `row % 128`
        # and `row / 128 % 8` into `& 255` for opencl-spirv.)
        two_d = plan.grid()[1] > 1
        row_number = "%row" if two_d else "%group_x"
        row = _Scope("    " if two_d else "  ")
        symbols = {i for v in plan.values.values() for i in v.home if isinstance(i, tuple)}
        for _, inner, extent in sorted(symbols):   # the row's index on each axis of a row-shaped tensor
            name = self.index_name(("row", inner, extent))
            row.add(f"{name}_q = arith.divui {row_number}, {self.index_name(inner)} : index",
                    f"{name} = arith.remui {name}_q, {self.index_name(extent)} : index")
        for op in plan.steps:
            if op.name == "func.return":
                self.store(row, op.operands[0])
            elif op in plan.reductions:
                self.reduction(row, op)
            else:
                self.row_values[op] = self.generic(op, row, plan.values[op.results[0]].home)
        globals_, setup = [], []
        for k, op in enumerate(plan.reductions):
            partials_t = self.partials_type(op)
            symbol = f"@{WORKGROUP_PREFIX}{self.name}_partials{k}"
            globals_.append(f'memref.global "private" {symbol} : {partials_t} = uninitialized')
            setup.append(f"  %partials{k} = memref.get_global {symbol} : {partials_t}")
        lines = globals_ + [f"func.func @{self.name}({', '.join(params)}) attributes {{{attributes}}} {{"]
        lines += [f"  {name} = arith.constant {value} : index" for value, name in self.index_constants.items()]
        lines += setup
        if two_d:
            lines += [f"  %row_y = arith.muli %group_y, {self.index_name(plan.grid()[0])} : index",
                      "  %row = arith.addi %row_y, %group_x : index",
                      f"  %inside = arith.cmpi ult, %row, {self.index_name(plan.rows)} : index",
                      "  scf.if %inside {", *row.lines, "  }"]
        else:
            lines += row.lines
        lines += ["  return", "}", f"func.func private @{BARRIER}()"]
        return "\n".join(lines) + "\n"

    def partials_type(self, op) -> str:
        return f"memref<{self.plan.width}x{op.results[0].type.element}, {WORKGROUP_SPACE}>"

    def reduction(self, row: _Scope, op) -> None:
        """The row's reduction by all threads: strided partials, the tree, every thread reads the total."""
        plan = self.plan
        k = plan.reductions.index(op)
        s = _structured(op)
        combine = _combiner(s.body)
        e = op.results[0].type.element
        partials, partials_t = f"%partials{k}", self.partials_type(op)
        identity, acc, j = self.fresh("identity"), self.fresh("acc"), self.fresh("j")
        loop = _Scope(row.indent + "  ", j)
        printer = self.bind_inputs(op, s, loop, plan.full_home)
        printer.names[id(s.body.arguments[-1])] = acc
        self.body_ops(s.body.ops[:-1], printer, loop)
        partial = self.fresh("partial")
        row.add(f"{identity} = arith.constant {identity_text(combine.name, e)} : {e}",
                f"{partial} = scf.for {j} = %local_x to {self.index_name(plan.length)} step "
                f"{self.index_name(plan.width)} iter_args({acc} = {identity}) -> ({e}) {{")
        row.lines += loop.lines
        row.add(f"  scf.yield {printer.value(combine.results[0])} : {e}", "}",
                f"memref.store {partial}, {partials}[%local_x] : {partials_t}", f"func.call @{BARRIER}() : () -> ()")
        row.lines += [row.indent + line
                      for line in tree_lines(partials, partials_t, combine.name, e, plan.width, f"_{k}", RADIX)]
        total, value = self.fresh("total"), self.fresh("reduced")
        init = self.element(op.operands[len(s.body.arguments) - 1], plan.values[op.results[0]].home, row)
        row.add(f"{total} = memref.load {partials}[%c0] : {partials_t}",
                f"{value} = {combine.name} {total}, {init} : {e}")
        self.row_values[op] = value

    def store(self, row: _Scope, value) -> None:
        """The returned value: each thread its elements of the row, or thread 0 the row value."""
        info = self.plan.values[value]
        if info.kind == "full":
            j = self.fresh("j")
            loop = _Scope(row.indent + "  ", j)
            result = self.element(value, info.home, loop)
            at = ", ".join(self.index_name(s) or j for s in info.home)
            row.add(f"scf.for {j} = %local_x to {self.index_name(self.plan.length)} step "
                    f"{self.index_name(self.plan.width)} {{")
            row.lines += loop.lines
            row.add(f"  memref.store {result}, %out0[{at}] : {self.out_type}", "}")
            return
        result = self.element(value, info.home, row)
        first = self.fresh("first")
        at = ", ".join(self.index_name(s) for s in info.home)
        row.add(f"{first} = arith.cmpi eq, %local_x, %c0 : index", f"scf.if {first} {{",
                f"  memref.store {result}, %out0[{at}] : {self.out_type}", "}")

    def element(self, value, index: tuple, scope: _Scope) -> str:
        """The name of `value`'s element at `index` in `scope` (written there on first use)."""
        info = self.plan.values[value]
        if info.kind == "row":
            return self.row_values[info.op]
        key = (value, index)
        if key in scope.known:
            return scope.known[key]
        if info.kind == "constant":
            name = self.fresh("k")
            scope.add(f"{name} = arith.constant {info.text} : {value.type.element}")
        elif info.kind == "argument":
            name = self.fresh("x")
            at = ", ".join(self.index_name(s) or scope.j for s in index)
            scope.add(f"{name} = memref.load %in{info.number}[{at}] : {self.in_types[info.number]}")
        else:
            name = self.generic(info.op, scope, info.home)
        scope.known[key] = name
        return name

    def generic(self, op, scope: _Scope, symbols: tuple) -> str:
        """An elementwise generic's element at the loop index `symbols`, written into `scope`."""
        s = _structured(op)
        printer = self.bind_inputs(op, s, scope, symbols)
        self.body_ops(s.body.ops[:-1], printer, scope)
        return printer.value(s.body.ops[-1].operands_named("values")[0])

    def bind_inputs(self, op, s, scope: _Scope, symbols: tuple):
        """A generic-form printer whose names for the body's input arguments are their elements."""
        from ...syntax.printer import Printer
        printer = Printer(generic=True)
        for arg, operand, amap in zip(s.body.arguments, op.operands, s.maps[:len(s.body.arguments) - 1]):
            printer.names[id(arg)] = self.element(operand, _index(amap, symbols), scope)
        return printer

    def body_ops(self, ops, printer, scope: _Scope) -> None:
        for op in ops:
            for operand in op.operands:   # a scalar constant from outside the body
                if id(operand) not in printer.names:
                    printer.names[id(operand)] = self.fresh("k")
                    scope.add(f"{printer.names[id(operand)]} = arith.constant "
                              f"{constant_text(scalar_constant(operand), operand.type)} : {operand.type}")
            for r in op.results:
                printer.names[id(r)] = self.fresh()
            printer.out = []
            printer.operation(op)
            scope.add("".join(printer.out).strip())
