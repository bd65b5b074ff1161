"""Tiled matmul kernels: a workgroup of TILE x TILE threads computes a TILE x TILE block of the
output, staging TILE-wide slices of both operands through workgroup memory.

A kernel is matmul-class when, at the linalg level, it is a `linalg.fill` with a constant
followed by one contraction (linalg.matmul, linalg.batch_matmul, or a linalg.generic with the
same multiply-accumulate body) of two kernel arguments, and then possibly an elementwise
epilogue (epilogue.py: a bias, a relu), whose result the kernel returns. Its
iteration space is classified by the indexing maps: `m` (in A and C), `n` (in B and C), the one
reduction `k` (in A and B) and at most one batch axis (in all three), so transposed operands are
addressed through their own maps.

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
finally stores its output elements (through the epilogue) where they lie inside the output. The products are added in the
same order as the loop nest's (k ascending, starting from the fill value; the padding adds
exact zeros), so the result is the one the untiled kernel computes.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

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
    """A matmul-class kernel: C[b?, m, n] = fill + sum_k A[..] * B[..], then the epilogue."""
    a: int                   # argument numbers of A and B
    b: int
    a_dims: tuple            # per operand: the role of each of its axes ('b', 'm', 'n', 'k')
    b_dims: tuple
    c_dims: tuple
    m: int
    n: int
    k: int
    batch: int               # 1 when there is no batch axis
    element: T.Type
    fill: object             # the fill constant (python number)
    multiply: str            # the body's ops (arith.mulf / addf, or muli / addi)
    add: str
    epilogue: object = None  # an epilogue.Epilogue, or None

    def grid(self) -> tuple:
        """Workgroups along x (columns), y (rows) and z (batch)."""
        return (-(-self.n // (TILE * COLUMNS)), -(-self.m // (TILE * ROWS)), self.batch)

    def launch(self):
        from .threads import Launch
        grid = self.grid()
        return Launch(grid[0] * grid[1] * grid[2] * TILE * TILE, False, (), (TILE, TILE), grid,
                      (TILE * ROWS, TILE * COLUMNS), "matmul")

    def kernel_text(self, name: str, in_types: list, out_type: T.MemRefType, attributes: str) -> str:
        return tiled_kernel_text(name, self, in_types, out_type, attributes)


def match_matmul(fn: Operation):
    """The Matmul that kernel `fn` (linalg on tensors) computes, or None when it is not one."""
    from ...transforms.conversions.linalg_to_loops import structured
    from .epilogue import fill_then_ops, match_epilogue
    ops = fill_then_ops(fn)
    if ops is None:
        return None
    fill, contraction = ops[:2]
    if contraction.name not in ("linalg.matmul", "linalg.batch_matmul", "linalg.generic"):
        return None
    epilogue = match_epilogue(ops[2:], contraction, list(fn.regions[0].blocks[0].arguments))
    if epilogue is None:
        return None
    try:
        s = structured(contraction)
    except Exception:  # noqa: BLE001 - anything the loops step cannot describe is not tiled
        return None
    ins = list(contraction.operands[:2])
    if len(contraction.operands) != 3 or contraction.operands[2] is not fill.results[0]:
        return None
    args = list(fn.regions[0].blocks[0].arguments)
    if not all(v in args for v in ins) or len(s.reductions) != 1:
        return None
    value = _constant_value(fill.operands[0])
    element = contraction.results[0].type.element
    if value is None or any(v.type.element != element for v in ins) or not _supported(element):
        return None
    roles = _roles(s)
    if roles is None:
        return None
    a_dims, b_dims, c_dims = roles
    body = [op.name for op in s.body.ops]
    if len(body) != 3 or body[0] not in _MULTIPLY or body[1] not in _ADD:
        return None
    if not _is_multiply_accumulate(s.body):
        return None
    extents = {}
    for operand, dims in zip((*ins, contraction.results[0]), (a_dims, b_dims, c_dims)):
        if not operand.type.has_static_shape:
            return None
        for extent, role in zip(operand.type.shape, dims):
            if extents.setdefault(role, extent) != extent:
                return None
    if min(extents.values()) <= 0 or extents.get("b", 1) > MAX_GRID:
        return None
    return Matmul(args.index(ins[0]), args.index(ins[1]), a_dims, b_dims, c_dims, extents["m"], extents["n"],
                  extents["k"], extents.get("b", 1), element, value, body[0], body[1], epilogue or None)


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


def _constant_value(value):
    owner = getattr(value, "op", None)
    if owner is None or owner.name != "arith.constant":
        return None
    return getattr(owner.attributes.get("value"), "value", None)


def _roles(s):
    """(A's, B's, C's axis roles) from the indexing maps, or None when they are not a matmul's."""
    maps = [[r[1] if r[0] == "dim" else None for r in m.results] for m in s.maps]
    if len(maps) != 3 or any(None in m for m in maps) or any(len(set(m)) != len(m) for m in maps):
        return None
    a, b, c = (set(m) for m in maps)
    (k,) = s.reductions
    role = {}
    for d in range(s.num_dims):
        where = (d in a, d in b, d in c)
        role[d] = {(True, True, True): "b", (True, False, True): "m", (False, True, True): "n",
                   (True, True, False): "k"}.get(where)
    if role.get(k) != "k" or sorted(role.values(), key=str) not in (["k", "m", "n"], ["b", "k", "m", "n"]):
        return None
    return tuple(tuple(role[d] for d in m) for m in maps)


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
    touch neighbouring addresses."""
    e, rows, cols = mm.element, ROWS, COLUMNS
    a_tile_t = f"memref<{TILE * rows}x{TILE}x{e}, {WORKGROUP_SPACE}>"
    b_tile_t = f"memref<{TILE}x{TILE * cols}x{e}, {WORKGROUP_SPACE}>"
    zero, fill = constant_text(0, e), constant_text(mm.fill, e)
    tile_a, tile_b = f"{WORKGROUP_PREFIX}{name}_a", f"{WORKGROUP_PREFIX}{name}_b"
    params = [f"%in{i}: {t}" for i, t in enumerate(in_types)]
    params += [f"%{a}: index" for a in ID_ARGUMENTS] + [f"%out0: {out_type}"]
    pairs = [(r, c) for r in range(rows) for c in range(cols)]
    acc_types = ", ".join([str(e)] * len(pairs))

    def load(operand: int, dims: tuple, index: dict) -> str:
        return f"memref.load %in{operand}[{', '.join(index[d] for d in dims)}] : {in_types[operand]}"

    def guarded_load(result: str, cond: str, operand: int, dims: tuple, index: dict) -> list:
        return [f"    {result} = scf.if {cond} -> ({e}) {{", f"      %x{result[1:]} = {load(operand, dims, index)}",
                f"      scf.yield %x{result[1:]} : {e}", "    } else {", f"      scf.yield %zero : {e}", "    }"]
    lines = [f'memref.global "private" @{tile_a} : {a_tile_t} = uninitialized',
             f'memref.global "private" @{tile_b} : {b_tile_t} = uninitialized',
             f"func.func @{name}({', '.join(params)}) attributes {{{attributes}}} {{",
             "  %c0 = arith.constant 0 : index", "  %c1 = arith.constant 1 : index",
             f"  %tile = arith.constant {TILE} : index",
             f"  %block_rows = arith.constant {TILE * rows} : index",
             f"  %block_cols = arith.constant {TILE * cols} : index",
             f"  %m = arith.constant {mm.m} : index", f"  %n = arith.constant {mm.n} : index",
             f"  %k = arith.constant {mm.k} : index",
             f"  %zero = arith.constant {zero} : {e}", f"  %fill = arith.constant {fill} : {e}",
             f"  %ta = memref.get_global @{tile_a} : {a_tile_t}", f"  %tb = memref.get_global @{tile_b} : {b_tile_t}",
             "  %row0 = arith.muli %group_y, %block_rows : index", "  %col0 = arith.muli %group_x, %block_cols : index"]
    lines += [f"  %off{i} = arith.constant {TILE * i} : index" for i in range(1, max(rows, cols))]
    ly, lx = ["%local_y"] + [f"%ly{r}" for r in range(1, rows)], ["%local_x"] + [f"%lx{c}" for c in range(1, cols)]
    for r in range(rows):   # this thread's rows and columns, and whether they are inside the output
        if r:
            lines.append(f"  %ly{r} = arith.addi %local_y, %off{r} : index")
        lines += [f"  %row{r}_ = arith.addi %row0, {ly[r]} : index", f"  %row_in{r} = arith.cmpi ult, %row{r}_, %m : index"]
    for c in range(cols):
        if c:
            lines.append(f"  %lx{c} = arith.addi %local_x, %off{c} : index")
        lines += [f"  %col{c}_ = arith.addi %col0, {lx[c]} : index", f"  %col_in{c} = arith.cmpi ult, %col{c}_, %n : index"]
    inits = ", ".join(f"%acc{r}{c} = %fill" for r, c in pairs)
    lines += [f"  %sum:{len(pairs)} = scf.for %k0 = %c0 to %k step %tile iter_args({inits}) -> ({acc_types}) {{",
              "    %ka = arith.addi %k0, %local_x : index", "    %ka_in = arith.cmpi ult, %ka, %k : index",
              "    %kb = arith.addi %k0, %local_y : index", "    %kb_in = arith.cmpi ult, %kb, %k : index"]
    for r in range(rows):   # stage A's block rows x TILE slice and B's TILE x block columns slice
        lines.append(f"    %a_in{r} = arith.andi %row_in{r}, %ka_in : i1")
        lines += guarded_load(f"%a{r}", f"%a_in{r}", mm.a, mm.a_dims, {"b": "%group_z", "m": f"%row{r}_", "k": "%ka"})
        lines.append(f"    memref.store %a{r}, %ta[{ly[r]}, %local_x] : {a_tile_t}")
    for c in range(cols):
        lines.append(f"    %b_in{c} = arith.andi %kb_in, %col_in{c} : i1")
        lines += guarded_load(f"%b{c}", f"%b_in{c}", mm.b, mm.b_dims, {"b": "%group_z", "k": "%kb", "n": f"%col{c}_"})
        lines.append(f"    memref.store %b{c}, %tb[%local_y, {lx[c]}] : {b_tile_t}")
    lines.append(f"    func.call @{BARRIER}() : () -> ()")
    inner = ", ".join(f"%s{r}{c} = %acc{r}{c}" for r, c in pairs)
    lines.append(f"    %part:{len(pairs)} = scf.for %kk = %c0 to %tile step %c1 iter_args({inner}) -> ({acc_types}) {{")
    lines += [f"      %u{r} = memref.load %ta[{ly[r]}, %kk] : {a_tile_t}" for r in range(rows)]
    lines += [f"      %v{c} = memref.load %tb[%kk, {lx[c]}] : {b_tile_t}" for c in range(cols)]
    for r, c in pairs:
        lines += [f"      %p{r}{c} = {mm.multiply} %u{r}, %v{c} : {e}", f"      %q{r}{c} = {mm.add} %s{r}{c}, %p{r}{c} : {e}"]
    lines += [f"      scf.yield {', '.join(f'%q{r}{c}' for r, c in pairs)} : {acc_types}", "    }",
              f"    func.call @{BARRIER}() : () -> ()",
              f"    scf.yield {', '.join(f'%part#{i}' for i in range(len(pairs)))} : {acc_types}", "  }"]
    for i, (r, c) in enumerate(pairs):   # each output this thread owns that lies inside the output
        at = {"b": "%group_z", "m": f"%row{r}_", "n": f"%col{c}_"}
        value, tail = f"%sum#{i}", []
        if mm.epilogue:
            tail, value = mm.epilogue.lines(value, {d: at[role] for d, role in enumerate(mm.c_dims)}, in_types,
                                            f"_{r}_{c}")
        lines += [f"  %inside{r}{c} = arith.andi %row_in{r}, %col_in{c} : i1", f"  scf.if %inside{r}{c} {{",
                  *(f"    {t}" for t in tail),
                  f"    memref.store {value}, %out0[{', '.join(at[d] for d in mm.c_dims)}] : {out_type}", "  }"]
    lines += ["  return", "}", f"func.func private @{BARRIER}()"]
    return "\n".join(lines) + "\n"


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
