"""Tiled matmul and convolution kernels: a workgroup of TILE x TILE threads computes a
(TILE * ROWS) x (TILE * COLUMNS) block of the output, staging TILE-wide K slices of both
operands through workgroup memory.

A kernel is matmul-class when, at the linalg level, it starts the output with a `linalg.fill` of
a constant or with a linalg.generic that broadcasts a kernel argument into it (tosa.conv2d's
bias), then runs one contraction (linalg.matmul, linalg.batch_matmul, a linalg.conv_* op, or a
linalg.generic with the same multiply-accumulate body) of two kernel arguments, and then
possibly an elementwise epilogue (epilogue.py: a bias, a relu), whose result the kernel returns.
Its iteration space is classified by the indexing maps: `m` axes (in A and C), `n` axes (in B
and C), the reductions `k` (in A and B) and at most one batch axis (in all three), so transposed
operands are addressed through their own maps. B's and C's maps must be bare axes; A's may be
linear forms of them: a convolution is then an implicit GEMM, its rows the output's n, oh, ow,
its columns the output channels, its K the kh, kw, ic axes, and A's tile elements are read at
oh * stride + kh * dilation. The pad before a convolution is a dispatch of its own that writes
the padded input, so every index A's map gives must lie inside A (else the kernel is not tiled:
nothing is guarded); a map with floordiv or mod (grouped and depthwise convolutions) is not
tiled either, nor a convolution with a batch axis.

The tiled kernel is written at the loops level (scf / memref / arith), so every GPU target
emits it with its ordinary machinery plus three conventions:

- the workgroup and local ids are index arguments after the inputs (`group_x`, `group_y`,
  `group_z`, `local_x`, `local_y`), which the target's entry point reads from its builtins;
- the operand tiles are `memref.global`s in memory space 3 named `__workgroup_...` (SPIR-V
  Workgroup storage, NVPTX / AMDGPU address space 3);
- `func.call @__mlirtext_workgroup_barrier()` is the workgroup barrier (OpControlBarrier,
  llvm.nvvm.barrier0, llvm.amdgcn.s.barrier between workgroup fences).

Each thread loads one element of each tile (zero past the edges, so sizes need not be multiples
of the tile), waits at a barrier, accumulates TILE products from the tiles, waits again, and
finally stores its output elements (through the epilogue) where they lie inside the output. The
products are added in the same order as the loop nest's (k ascending, the k axes in the nest's
order, starting from the fill value or the bias; the padding adds exact zeros), so the result is
the one the untiled kernel computes, bit for bit on lavapipe (tests/test_gpu_conv_tiled.py).
"""
from __future__ import annotations

import math
import struct
from dataclasses import dataclass

from ...dialects.linalg import fill_value, segments
from ...ir import types as T
from ...ir.core import Operation

#: Threads per workgroup along x (output columns) and y (output rows); also the K slice width.
TILE = 16
#: Outputs per thread along the rows and the columns: a workgroup computes a block of
#: (TILE * ROWS) x (TILE * COLUMNS) outputs, each value it stages used ROWS or COLUMNS times.
ROWS = 4
COLUMNS = 4
#: The barrier function and the prefix of the workgroup-memory globals (see the module docstring).
BARRIER = "__mlirtext_workgroup_barrier"
WORKGROUP_PREFIX = "__workgroup_"
WORKGROUP_SPACE = 3
#: The most workgroups along y and z every Vulkan implementation and CUDA launch.
MAX_GRID = 65535
#: The id arguments of a tiled kernel, in order (after the inputs, before the outputs).
ID_ARGUMENTS = ("group_x", "group_y", "group_z", "local_x", "local_y")

_MULTIPLY = {"arith.mulf", "arith.muli"}
_ADD = {"arith.addf", "arith.addi"}


@dataclass
class Matmul:
    """A contraction C = init + sum_k A[..] * B[..], then the epilogue, as a GEMM: each axis of its
    iteration space has a role ('m', 'n', 'k' or 'b'). A matmul has one axis per role; a
    convolution read as an implicit GEMM has several m axes (n, oh, ow) and k axes (kh, kw, ic),
    and A's indices are linear forms of them (oh * stride + kh * dilation)."""
    a: int                   # argument numbers of A and B
    b: int
    a_map: tuple             # per A axis: its index as (((dim, coefficient), ...), constant)
    b_map: tuple             # per B axis: its dim
    c_map: tuple             # per C axis: its dim
    roles: dict              # dim -> 'm', 'n', 'k' or 'b'
    extents: dict            # dim -> extent
    element: T.Type
    fill: object             # the fill constant (python number), or None when `init` gives the start
    init: object             # (argument number, its map's results over C's axes): a broadcast bias
    multiply: str            # the body's ops (arith.mulf / addf, or muli / addi)
    add: str
    epilogue: object = None  # an epilogue.Epilogue, or None

    def axes(self, role: str) -> tuple:
        """The dims of `role`, the slowest first: m and n in C's order (stores of neighbouring
        threads are neighbours), k in the loop nest's order (so the sums keep their order)."""
        if role == "k":
            return tuple(sorted(d for d, r in self.roles.items() if r == "k"))
        return tuple(d for d in self.c_map if self.roles[d] == role)

    def extent(self, role: str) -> int:
        return math.prod(self.extents[d] for d in self.axes(role))

    @property
    def m(self) -> int:
        return self.extent("m")

    @property
    def n(self) -> int:
        return self.extent("n")

    @property
    def k(self) -> int:
        return self.extent("k")

    @property
    def batch(self) -> int:
        return self.extent("b")

    @property
    def kind(self) -> str:
        """"matmul" when A is read at bare axes, else "convolution" (an implicit GEMM)."""
        bare = all(len(terms) == 1 and terms[0][1] == 1 and not constant for terms, constant in self.a_map)
        return "matmul" if bare else "convolution"

    def grid(self) -> tuple:
        """Workgroups along x (columns), y (rows) and z (batch)."""
        return (-(-self.n // (TILE * COLUMNS)), -(-self.m // (TILE * ROWS)), self.batch)

    def launch(self):
        from .threads import Launch
        grid = self.grid()
        return Launch(grid[0] * grid[1] * grid[2] * TILE * TILE, False, (), (TILE, TILE), grid,
                      (TILE * ROWS, TILE * COLUMNS), self.kind)

    def kernel_text(self, name: str, in_types: list, out_type: T.MemRefType, attributes: str) -> str:
        return tiled_kernel_text(name, self, in_types, out_type, attributes)


def match_matmul(fn: Operation):
    """The Matmul that kernel `fn` (linalg on tensors) computes, or None when it is not one."""
    from ...transforms.conversions.linalg_to_loops import structured
    from .epilogue import match_epilogue
    ops = [op for op in fn.regions[0].blocks[0].ops if op.name not in ("arith.constant", "tensor.empty")]
    if len(ops) < 3:
        return None
    start, contraction = ops[:2]
    if contraction.name not in ("linalg.matmul", "linalg.batch_matmul", "linalg.generic") and \
            not contraction.name.startswith("linalg.conv_"):
        return None
    args = list(fn.regions[0].blocks[0].arguments)
    epilogue = match_epilogue(ops[2:], contraction, args)
    if epilogue is None:
        return None
    try:
        s = structured(contraction)
    except Exception:  # noqa: BLE001 - anything the loops step cannot describe is not tiled
        return None
    ins, inits = segments(contraction)
    if len(ins) != 2 or len(inits) != 1 or inits[0] is not start.results[0]:
        return None
    if not all(v in args for v in ins) or not s.reductions:
        return None
    element = contraction.results[0].type.element
    if any(v.type.element != element for v in ins) or not _supported(element):
        return None
    fill, init = _starting_values(start, args, element)
    if fill is None and init is None:
        return None
    body = [op.name for op in s.body.ops]
    if len(body) != 3 or body[0] not in _MULTIPLY or body[1] not in _ADD:
        return None
    if not _is_multiply_accumulate(s.body):
        return None
    if any(not v.type.has_static_shape for v in (*ins, contraction.results[0])):
        return None
    a_map = _linear_forms(s.maps[0])
    b_map, c_map = _bare_dims(s.maps[1]), _bare_dims(s.maps[2])
    if a_map is None or b_map is None or c_map is None:
        return None
    extents = {}
    for operand, dims in ((ins[1], b_map), (contraction.results[0], c_map)):
        for extent, d in zip(operand.type.shape, dims):
            if extents.setdefault(d, extent) != extent:
                return None
    roles = _roles(a_map, b_map, c_map, s.reductions, s.num_dims)
    if roles is None or set(roles) != set(extents) or min(extents.values()) <= 0:
        return None
    mm = Matmul(args.index(ins[0]), args.index(ins[1]), a_map, b_map, c_map, roles, extents, element,
                fill, init, body[0], body[1], epilogue or None)
    if not _inside(a_map, extents, ins[0].type.shape) or max(mm.grid()) > MAX_GRID:
        return None
    if mm.kind == "convolution" and "b" in roles.values():   # (depthwise, grouped: not tiled yet)
        return None
    return mm


def _starting_values(start: Operation, args: list, element: T.Type) -> tuple:
    """(fill constant, None) for a linalg.fill with a constant; (None, (argument number, map
    results)) for a linalg.generic that broadcasts a kernel argument (a bias) into the output;
    (None, None) otherwise."""
    from ...transforms.conversions.linalg_to_loops import structured
    if start.name == "linalg.fill":
        return scalar_constant(fill_value(start)), None
    if start.name != "linalg.generic" or len(start.operands) != 2:
        return None, None
    inputs, _ = segments(start)
    if len(inputs) != 1 or inputs[0] not in args:
        return None, None
    source = inputs[0]
    try:
        s = structured(start)
    except Exception:  # noqa: BLE001
        return None, None
    ops = s.body.ops
    rank = start.results[0].type.rank
    if s.reductions or tuple(s.maps[1].results) != tuple(("dim", d) for d in range(rank)) or \
            any(r[0] not in ("dim", "const") for r in s.maps[0].results) or \
            not isinstance(source.type, T.RankedTensorType) or source.type.element != element or \
            len(ops) != 1 or list(ops[0].operands) != [s.body.arguments[0]]:
        return None, None
    return None, (args.index(source), tuple(s.maps[0].results))


def _bare_dims(amap):
    """The dims of a map whose results are distinct bare dims, or None."""
    dims = [r[1] if r[0] == "dim" else None for r in amap.results]
    return None if amap.symbols or None in dims or len(set(dims)) != len(dims) else tuple(dims)


def _linear_forms(amap):
    """Each result of `amap` as (((dim, coefficient), ...), constant), or None when one is not
    linear in the dims (floordiv, mod, symbols)."""
    from ...dialects.affine_maps import evaluate
    if amap.symbols:
        return None
    forms = []
    for kind, value in amap.results:
        if kind == "dim":
            forms.append((((value, 1),), 0))
        elif kind == "const":
            forms.append(((), value))
        elif any(word in value for word in ("floordiv", "ceildiv", "mod")):
            return None
        else:
            zero = {d: 0 for d in range(amap.num_dims)}
            constant = evaluate(amap, value, zero)
            if constant is None:
                return None
            terms = tuple((d, c) for d in range(amap.num_dims)
                          if (c := (evaluate(amap, value, {**zero, d: 1}) or 0) - constant))
            probe = {d: 3 + 2 * d for d in range(amap.num_dims)}   # (an affine form is linear: check)
            if evaluate(amap, value, probe) != constant + sum(c * probe[d] for d, c in terms):
                return None
            forms.append((terms, constant))
    return tuple(forms)


def _roles(a_map, b_map, c_map, reductions, num_dims):
    """{dim: role} from where each dim appears, or None when they are not a GEMM's: m in A and
    C, n in B and C, the reductions k in A and B, at most one batch axis in all three."""
    a = {d for terms, _ in a_map for d, _ in terms}
    b, c = set(b_map), set(c_map)
    roles = {}
    for d in range(num_dims):
        roles[d] = {(True, True, True): "b", (True, False, True): "m", (False, True, True): "n",
                    (True, True, False): "k"}.get((d in a, d in b, d in c))
    if {d for d, r in roles.items() if r == "k"} != set(reductions) or None in roles.values():
        return None
    if list(roles.values()).count("b") > 1 or not {"m", "n", "k"} <= set(roles.values()):
        return None
    return roles


def _inside(a_map, extents, shape) -> bool:
    """Every index A's map gives inside A (padding is a pad before the kernel: no bounds to check)."""
    for (terms, constant), size in zip(a_map, shape):
        low = constant + sum(min(0, c * (extents[d] - 1)) for d, c in terms)
        high = constant + sum(max(0, c * (extents[d] - 1)) for d, c in terms)
        if low < 0 or high >= size:
            return False
    return True


def _supported(t: T.Type) -> bool:
    """The element types tiled kernels are tested with (others keep the thread-per-element form)."""
    return isinstance(t, T.FloatType) and t.name == "f32" or isinstance(t, T.IntegerType) and t.width == 32


def constant_text(value, t: T.Type) -> str:
    """`value` as the literal of an arith.constant of type t (a float by its bits: exact, and
    infinities and NaNs have no other spelling)."""
    if isinstance(t, T.FloatType):
        fmt, digits = {"f16": ("<e", 4), "f32": ("<f", 8), "f64": ("<d", 16)}[t.name]
        return f"0x{int.from_bytes(struct.pack(fmt, float(value)), 'little'):0{digits}X}"
    return str(int(value))


def scalar_constant(value):
    owner = getattr(value, "op", None)
    if owner is None or owner.name != "arith.constant":
        return None
    return getattr(owner.attr("value"), "value", None)


def _is_multiply_accumulate(body) -> bool:
    """yield(out + in0 * in1) (either order of the addition's operands)."""
    mul, add, yield_ = body.ops
    a, b, out = body.arguments
    return set(mul.operands) == {a, b} and len(mul.operands) == 2 and \
        set(add.operands) == {mul.results[0], out} and list(yield_.operands) == [add.results[0]]


def tiled_kernel_text(name: str, mm: Matmul, in_types: list, out_type: T.MemRefType, attributes: str) -> str:
    """The tiled kernel `name` as loops-level MLIR (its workgroup globals first, the barrier's
    declaration last). Thread (x, y) owns the outputs at rows y + TILE * r, columns
    x + TILE * c of its workgroup's block (r < ROWS, c < COLUMNS): loads of neighbouring threads
    touch neighbouring addresses. A row, a column and a k index is split into its role's axes
    (the last the fastest) where the role has several."""
    e, rows, cols = mm.element, ROWS, COLUMNS
    a_tile_t = f"memref<{TILE * rows}x{TILE}x{e}, {WORKGROUP_SPACE}>"
    b_tile_t = f"memref<{TILE}x{TILE * cols}x{e}, {WORKGROUP_SPACE}>"
    zero = constant_text(0, e)
    tile_a, tile_b = f"{WORKGROUP_PREFIX}{name}_a", f"{WORKGROUP_PREFIX}{name}_b"
    params = [f"%in{i}: {t}" for i, t in enumerate(in_types)]
    params += [f"%{a}: index" for a in ID_ARGUMENTS] + [f"%out0: {out_type}"]
    pairs = [(r, c) for r in range(rows) for c in range(cols)]
    acc_types = ", ".join([str(e)] * len(pairs))
    index = _IndexWriter()

    def guarded_load(result: str, cond: str, operand: int, at: list) -> list:
        load = f"memref.load %in{operand}[{', '.join(at)}] : {in_types[operand]}"
        return [f"    {result} = scf.if {cond} -> ({e}) {{", f"      %x{result[1:]} = {load}",
                f"      scf.yield %x{result[1:]} : {e}", "    } else {", f"      scf.yield %zero : {e}", "    }"]
    lines = [f'memref.global "private" @{tile_a} : {a_tile_t} = uninitialized',
             f'memref.global "private" @{tile_b} : {b_tile_t} = uninitialized',
             f"func.func @{name}({', '.join(params)}) attributes {{{attributes}}} {{"]
    body = ["  %c0 = arith.constant 0 : index", "  %c1 = arith.constant 1 : index",
            f"  %tile = arith.constant {TILE} : index",
            f"  %block_rows = arith.constant {TILE * rows} : index",
            f"  %block_cols = arith.constant {TILE * cols} : index",
            f"  %m = arith.constant {mm.m} : index", f"  %n = arith.constant {mm.n} : index",
            f"  %k = arith.constant {mm.k} : index", f"  %zero = arith.constant {zero} : {e}",
            f"  %ta = memref.get_global @{tile_a} : {a_tile_t}", f"  %tb = memref.get_global @{tile_b} : {b_tile_t}",
            "  %row0 = arith.muli %group_y, %block_rows : index", "  %col0 = arith.muli %group_x, %block_cols : index"]
    if mm.fill is not None:
        body.append(f"  %fill = arith.constant {constant_text(mm.fill, e)} : {e}")
    body += [f"  %off{i} = arith.constant {TILE * i} : index" for i in range(1, max(rows, cols))]
    batch = {d: "%group_z" for d in mm.axes("b")}
    ly, lx = ["%local_y"] + [f"%ly{r}" for r in range(1, rows)], ["%local_x"] + [f"%lx{c}" for c in range(1, cols)]
    row_axes, col_axes = [], []   # per row r / column c: {dim: its index}
    for r in range(rows):   # this thread's rows and columns, and whether they are inside the output
        if r:
            body.append(f"  %ly{r} = arith.addi %local_y, %off{r} : index")
        body += [f"  %row{r}_ = arith.addi %row0, {ly[r]} : index", f"  %row_in{r} = arith.cmpi ult, %row{r}_, %m : index"]
        row_axes.append(index.split(body, "  ", f"%row{r}_", mm.axes("m"), mm.extents))
    for c in range(cols):
        if c:
            body.append(f"  %lx{c} = arith.addi %local_x, %off{c} : index")
        body += [f"  %col{c}_ = arith.addi %col0, {lx[c]} : index", f"  %col_in{c} = arith.cmpi ult, %col{c}_, %n : index"]
        col_axes.append(index.split(body, "  ", f"%col{c}_", mm.axes("n"), mm.extents))
    at = {(r, c): {**row_axes[r], **col_axes[c], **batch} for r, c in pairs}   # each output's axes
    starts = []
    for r, c in pairs:
        body.append(f"  %inside{r}{c} = arith.andi %row_in{r}, %col_in{c} : i1")
        if mm.init is None:
            starts.append("%fill")
            continue
        number, results = mm.init   # the bias at this output (zero outside: never stored)
        where = [at[r, c][mm.c_map[x]] if kind == "dim" else index.constant(x) for kind, x in results]
        body += [f"  {t}" for t in guarded_load(f"%init{r}{c}", f"%inside{r}{c}", number, where)]
        starts.append(f"%init{r}{c}")
    # A's indices: the parts of rows and constants before the K loop, k's parts in it.
    a_parts = [[index.linear(body, "  ", f"%a{r}_{x}", [(c, row_axes[r].get(d, batch.get(d))) for d, c in terms
                                                           if mm.roles[d] != "k"], constant)
                for x, (terms, constant) in enumerate(mm.a_map)] for r in range(rows)]
    inits = ", ".join(f"%acc{r}{c} = {start}" for (r, c), start in zip(pairs, starts))
    body += [f"  %sum:{len(pairs)} = scf.for %k0 = %c0 to %k step %tile iter_args({inits}) -> ({acc_types}) {{",
             "    %ka = arith.addi %k0, %local_x : index", "    %ka_in = arith.cmpi ult, %ka, %k : index",
             "    %kb = arith.addi %k0, %local_y : index", "    %kb_in = arith.cmpi ult, %kb, %k : index"]
    ka = index.split(body, "    ", "%ka", mm.axes("k"), mm.extents)
    kb = index.split(body, "    ", "%kb", mm.axes("k"), mm.extents)
    k_parts = [index.linear(body, "    ", f"%ak_{x}", [(c, ka[d]) for d, c in terms if mm.roles[d] == "k"], 0)
               for x, (terms, _) in enumerate(mm.a_map)]
    for r in range(rows):   # stage A's block rows x TILE slice and B's TILE x block columns slice
        body.append(f"    %a_in{r} = arith.andi %row_in{r}, %ka_in : i1")
        where = [index.linear(body, "    ", f"%ai{r}_{x}", [(1, p) for p in (a_parts[r][x], k_parts[x]) if p], 0)
                 for x in range(len(mm.a_map))]
        body += guarded_load(f"%a{r}", f"%a_in{r}", mm.a, [w or "%c0" for w in where])
        body.append(f"    memref.store %a{r}, %ta[{ly[r]}, %local_x] : {a_tile_t}")
    for c in range(cols):
        body.append(f"    %b_in{c} = arith.andi %kb_in, %col_in{c} : i1")
        axes = {**kb, **col_axes[c], **batch}
        body += guarded_load(f"%b{c}", f"%b_in{c}", mm.b, [axes[d] for d in mm.b_map])
        body.append(f"    memref.store %b{c}, %tb[%local_y, {lx[c]}] : {b_tile_t}")
    body.append(f"    func.call @{BARRIER}() : () -> ()")
    inner = ", ".join(f"%s{r}{c} = %acc{r}{c}" for r, c in pairs)
    body.append(f"    %part:{len(pairs)} = scf.for %kk = %c0 to %tile step %c1 iter_args({inner}) -> ({acc_types}) {{")
    body += [f"      %u{r} = memref.load %ta[{ly[r]}, %kk] : {a_tile_t}" for r in range(rows)]
    body += [f"      %v{c} = memref.load %tb[%kk, {lx[c]}] : {b_tile_t}" for c in range(cols)]
    for r, c in pairs:
        body += [f"      %p{r}{c} = {mm.multiply} %u{r}, %v{c} : {e}",
                 f"      %q{r}{c} = {mm.add} %s{r}{c}, %p{r}{c} : {e}"]
    body += [f"      scf.yield {', '.join(f'%q{r}{c}' for r, c in pairs)} : {acc_types}", "    }",
             f"    func.call @{BARRIER}() : () -> ()",
             f"    scf.yield {', '.join(f'%part#{i}' for i in range(len(pairs)))} : {acc_types}", "  }"]
    for i, (r, c) in enumerate(pairs):   # each output this thread owns that lies inside the output
        where = [at[r, c][d] for d in mm.c_map]
        value, tail = f"%sum#{i}", []
        if mm.epilogue:
            tail, value = mm.epilogue.lines(value, dict(enumerate(where)), in_types, f"_{r}_{c}")
        body += [f"  scf.if %inside{r}{c} {{", *(f"    {t}" for t in tail),
                 f"    memref.store {value}, %out0[{', '.join(where)}] : {out_type}", "  }"]
    lines += index.constants + body + ["  return", "}", f"func.func private @{BARRIER}()"]
    return "\n".join(lines) + "\n"


class _IndexWriter:
    """Writes index arithmetic for a tiled kernel: the index constants it needs (declared once,
    at the top: `constants`), sums of multiples, and linear indices split into axes."""

    def __init__(self):
        self.constants, self._names = [], set()

    def constant(self, value: int) -> str:
        name = f"%i{value}".replace("-", "_")
        if name not in self._names:
            self._names.add(name)
            self.constants.append(f"  {name} = arith.constant {value} : index")
        return name

    def linear(self, lines: list, indent: str, name: str, terms: list, constant: int):
        """sum(coefficient * value for (coefficient, value) in terms) + constant, as `name` (a
        bare value as it is; None when there is nothing to add)."""
        parts = []
        for i, (coefficient, value) in enumerate(terms):
            if coefficient == 1:
                parts.append(value)
            else:
                lines.append(f"{indent}{name}_t{i} = arith.muli {value}, {self.constant(coefficient)} : index")
                parts.append(f"{name}_t{i}")
        if constant:
            parts.append(self.constant(constant))
        total = parts[0] if parts else None
        for i, part in enumerate(parts[1:]):
            lines.append(f"{indent}{name}_s{i} = arith.addi {total}, {part} : index")
            total = f"{name}_s{i}"
        return total

    def split(self, lines: list, indent: str, linear: str, dims: tuple, extents: dict) -> dict:
        """{dim: index} of the linear index `linear` over `dims` (the last the fastest). Past the
        end the first axis runs over its extent: such indices are only used under a bounds check."""
        found, rest = {}, linear
        for d in reversed(dims[1:]):
            size = self.constant(extents[d])
            lines += [f"{indent}{linear}_{d} = arith.remui {rest}, {size} : index",
                      f"{indent}{linear}_q{d} = arith.divui {rest}, {size} : index"]
            found[d], rest = f"{linear}_{d}", f"{linear}_q{d}"
        if dims:
            found[dims[0]] = rest
        return found


def replace_with_tiled(module: Operation, fn: Operation, plan, n_inputs: int) -> bool:
    """Replace loops-level kernel `fn` in `module` by the tiled form `plan` (a Matmul or a
    reductions.RowReduction) writes, adding its workgroup globals and the barrier's declaration.
    False (nothing changed) when the kernel's arguments do not fit."""
    from ...api import parse_and_verify
    args = fn.regions[0].blocks[0].arguments
    outputs = [args[-1].type]
    if getattr(fn.attributes.get("mlirtext.out_params"), "value", None) != 1 or \
            not isinstance(outputs[0], T.MemRefType) or outputs[0].layout is not None:
        return False
    in_types = [a.type for a in args[:n_inputs]]
    if any(not isinstance(t, T.MemRefType) or t.layout is not None for t in in_types):
        return False
    kept = {k: v for k, v in fn.attributes.items()
            if k not in ("sym_name", "function_type", "mlirtext.workgroups", "sym_visibility")}
    attributes = ", ".join(f"{k} = {v}" for k, v in kept.items())
    text = plan.kernel_text(fn.sym_name, in_types, outputs[0], attributes)
    if not text:
        return False
    body = module.regions[0].blocks[0]
    declared = any(op.name == "func.func" and op.sym_name == BARRIER for op in body.ops)
    parsed = parse_and_verify(text)
    if parsed.diagnostics or parsed.module is None:   # (a bug here, not bad input: say what)
        from .executable import GpuCompileError
        raise GpuCompileError(f"kernel @{fn.sym_name}: the tiled kernel does not verify: "
                              f"{parsed.diagnostics[0].message if parsed.diagnostics else 'no module'}")
    for op in list(parsed.module.regions[0].blocks[0].ops):
        if not (declared and op.name == "func.func" and op.sym_name == BARRIER):
            body.insert_before(fn, op.detach())
    fn.erase()
    return True
