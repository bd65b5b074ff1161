"""The checks a module file's JSON passes before the VM trusts any of it (vm/modfile.py runs them).

Every field of the manifest and of each host program is checked for its type and its range, and
against the module's own declarations: entries and their checksums, exports against their host
programs, every register below the program's register count, every pool buffer inside its slot and
every slot inside the pool, every dispatch against its kernel's bindings, every split kernel's
workgroups against the output they cover. A file that passes cannot make the VM index past a
list, read past a buffer, or launch a native kernel with a range it was not compiled for (the
kernels clamp their range too: targets/workgroups.py, compiler/ukernels.py). `Malformed` says
what failed.

JSON is parsed only after its nesting depth is measured (the manifest and the host programs nest a
few levels; 100,000 nested brackets would exhaust the parser's recursion).
"""
from __future__ import annotations

import json
import math
import re

import numpy as np

from ..ir import types as T
from .program import record_dtype

#: The entry that holds the constants' bytes, and the boundary each starts on (the format: vm/modfile.py).
WEIGHTS = "weights.bin"
ALIGNMENT = 64
#: Deeper JSON than this is refused before it is parsed (a host program nests 5 levels).
MAX_DEPTH = 32
#: Elements a declared shape may have (2^48: any real buffer; the product stays far from overflow).
MAX_ELEMENTS = 1 << 48
#: Axes a declared shape may have.
MAX_RANK = 64

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.S)
#: Byte -> nesting step: +1 opens, -1 closes, 0 anything else.
_STEP = np.zeros(256, np.int64)
_STEP[list(b"[{")] = 1
_STEP[list(b"]}")] = -1


class Malformed(Exception):
    """A module file whose JSON is not what the format says, and where."""


def read_json(data: bytes, what: str):
    """`data` parsed as JSON, its nesting measured first (Malformed: `what` is not JSON or too deep)."""
    depth = 0
    if data.count(b"[") + data.count(b"{") > MAX_DEPTH:   # (else it cannot nest deeper)
        depth = int(np.cumsum(_STEP[np.frombuffer(_STRING.sub(b'""', data), np.uint8)]).max(initial=0))
    if depth > MAX_DEPTH:
        raise Malformed(f"{what} nests {depth} levels deep (at most {MAX_DEPTH})")
    try:
        return json.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        raise Malformed(f"{what} is not valid JSON ({e})") from None


def need(cond: bool, what: str) -> None:
    if not cond:
        raise Malformed(what)


def is_int(v, low: int = 0, high: int = 1 << 62) -> bool:
    return type(v) is int and low <= v <= high


def _ints(v, low: int = 0, high: int = 1 << 62) -> bool:
    return isinstance(v, list) and all(is_int(x, low, high) for x in v)


def _dict(v, what: str) -> dict:
    need(isinstance(v, dict), f"{what} is not an object")
    return v


def _list(v, what: str) -> list:
    need(isinstance(v, list), f"{what} is not a list")
    return v


def _str(v, what: str) -> str:
    need(isinstance(v, str), f"{what} is not a string")
    return v


def elements(shape) -> int:
    return math.prod(shape) if shape else 1


def check_shape(shape, what: str) -> tuple:
    """A list of sizes, of at most MAX_RANK axes and MAX_ELEMENTS elements, as a tuple."""
    need(isinstance(shape, list) and len(shape) <= MAX_RANK and _ints(shape, 0, MAX_ELEMENTS),
         f"{what}: shape is not a list of at most {MAX_RANK} sizes")
    need(elements(shape) <= MAX_ELEMENTS, f"{what}: shape {shape} is too large")
    return tuple(shape)


def check_type_record(rec, what: str, storage_allowed: bool = True) -> tuple:
    """A value's type record ({shape, element, dtype, name?, storage?}): (shape, dtype) of it."""
    _dict(rec, what)
    need("shape" in rec, f"{what}: no shape")
    shape = rec["shape"]
    if shape is not None:
        check_shape(shape, what)
    _str(rec.get("element"), f"{what}: element")
    _str(rec.get("dtype"), f"{what}: dtype")
    need(len(rec["element"]) <= 16 and T.scalar_type_from_name(rec["element"]) is not None,
         f"{what}: unknown element type '{rec['element'][:40]}'")
    need(rec.get("name") is None or isinstance(rec["name"], str), f"{what}: name is not a string")
    try:
        dtype = record_dtype(rec)
    except (ValueError, TypeError, KeyError) as e:
        raise Malformed(f"{what}: element type '{rec['element']}' / dtype '{rec['dtype'][:40]}' ({e})") from None
    need(dtype.itemsize > 0, f"{what}: dtype '{rec['dtype']}' has no size")
    if "storage" in rec:
        need(storage_allowed, f"{what}: a storage record has a storage record")
        inner, inner_dtype = check_type_record(rec["storage"], f"{what} (storage)", False)
        need(elements(inner) == elements(shape), f"{what}: its storage holds a different number of elements")
    return (tuple(shape) if shape is not None else None), dtype


def check_manifest(manifest: dict, entries, bookkeeping: set, weights_size: int | None = None) -> None:
    """Every field of the manifest, by type, and every path it names against `entries` (the
    archive's files; `bookkeeping` the ones the format itself adds, listed nowhere); every
    constant inside the weights entry (`weights_size` bytes: None when the file has none)."""
    for key in ("exports", "kernels", "executables", "constants", "entries"):
        need(key in manifest, f"the manifest has no '{key}'")
    listed = _dict(manifest["entries"], "the manifest's 'entries'")
    for path, info in listed.items():
        _dict(info, f"the entry record of '{path}'")
        need(path in entries, f"entry '{path}' is missing")
        need(isinstance(info.get("sha256"), str), f"entry '{path}' has no sha256")
    extra = set(entries) - set(listed) - bookkeeping
    need(not extra, f"entries not in the manifest: {sorted(extra)}")
    need(weights_size is not None and WEIGHTS in listed, f"the file has no {WEIGHTS}")

    def entry(path, what: str) -> str:
        need(isinstance(path, str) and path in listed, f"{what} names no entry of the file ({path!r})")
        return path

    exports = _list(manifest["exports"], "the manifest's 'exports'")
    names = set()
    for i, export in enumerate(exports):
        _dict(export, f"export {i}")
        name = _str(export.get("name"), f"export {i}: name")
        need(name not in names, f"export @{name} is listed twice")
        names.add(name)
        entry(export.get("program"), f"export @{name}: program")
        for key in ("inputs", "results"):
            for j, rec in enumerate(_list(export.get(key), f"export @{name}: {key}")):
                check_type_record(rec, f"export @{name}: {key[:-1]} {j}")
        need(is_int(export.get("peak_bytes", 0)), f"export @{name}: peak_bytes is not a size")
    for name, kernel in _dict(manifest["kernels"], "the manifest's 'kernels'").items():
        check_kernel(name, kernel)
    for name, const in _dict(manifest["constants"], "the manifest's 'constants'").items():
        check_constant(name, const, weights_size)
    executables = _dict(manifest["executables"], "the manifest's 'executables'")
    need("reference" in executables, "the manifest has no reference executable")
    for target, exe in executables.items():
        _dict(exe, f"the {target} executable")
        _str(exe.get("format"), f"the {target} executable's format")
        if target == "reference":
            entry(exe.get("kernels"), "the reference executable's kernels")
        elif target == "llvm-cpu":
            entry(exe.get("object"), "the llvm-cpu executable's object")
            if "llvm_ir" in exe:   # (kept when the compile asked for it)
                entry(exe["llvm_ir"], "the llvm-cpu executable's LLVM IR")
            vectors = _dict(exe.get("vectors", {}), "the llvm-cpu executable's vectors")
            need(all(isinstance(v, str) for v in vectors.values()), "the llvm-cpu executable's vectors are not strings")
            entry(exe.get("definitions"), "the llvm-cpu executable's definitions")
            for key in ("triple", "cpu"):
                _str(exe.get(key), f"the llvm-cpu executable's {key}")
            need(all(isinstance(f, str) for f in _list(exe.get("features"), "the llvm-cpu executable's features")),
                 "the llvm-cpu executable's features are not strings")
        else:
            check_gpu_executable(target, exe, manifest["kernels"], entry)


def check_constant(name: str, const, weights_size: int) -> None:
    """A constant's record: a plain numpy dtype and a shape whose bytes (its one value, for a
    splat) lie inside the weights, starting on an ALIGNMENT boundary."""
    _dict(const, f"constant {name}")
    shape = check_shape(const.get("shape"), f"constant {name}")
    try:
        dtype = np.dtype(_str(const.get("dtype"), f"constant {name}: dtype"))
    except TypeError:
        raise Malformed(f"constant {name}: dtype '{const['dtype'][:40]}' is not a numpy dtype") from None
    need(dtype.kind in "biufcV" and dtype.names is None and dtype.subdtype is None and dtype.itemsize > 0,
         f"constant {name}: dtype '{const['dtype'][:40]}' is not a number type")
    need(const.get("dtype_name") is None or isinstance(const["dtype_name"], str),
         f"constant {name}: dtype_name is not a string")
    need(isinstance(const.get("splat", False), bool), f"constant {name}: splat is not true or false")
    offset = const.get("offset")
    nbytes = dtype.itemsize * (1 if const.get("splat") else elements(shape))
    need(is_int(offset) and offset % ALIGNMENT == 0 and offset + nbytes <= weights_size,
         f"constant {name}: {nbytes} bytes at offset {offset!r} are not inside the {weights_size}-byte weights "
         f"on a {ALIGNMENT}-byte boundary")


def check_kernel(name: str, kernel) -> None:
    """A kernel's bindings, and its workgroups: `count` of them, each writing at most `block`
    elements of its one output, together exactly that output: count = ceil(elements / block), with
    block <= elements (so the range [0, count) the VM launches is the one the kernel was compiled
    for; a matmul whose last 16-column panel is narrower has a last workgroup that writes less)."""
    _dict(kernel, f"kernel @{name}")
    for key in ("inputs", "outputs"):
        for j, rec in enumerate(_list(kernel.get(key), f"kernel @{name}: {key}")):
            check_type_record(rec, f"kernel @{name}: {key[:-1]} {j}")
    need(isinstance(kernel.get("implementation", ""), str), f"kernel @{name}: implementation is not a string")
    groups = kernel.get("workgroups")
    if groups is None:
        return
    _dict(groups, f"kernel @{name}: workgroups")
    need(len(kernel["outputs"]) == 1, f"kernel @{name}: a kernel split into workgroups has one output")
    shape = kernel["outputs"][0]["shape"] or []
    count, block = groups.get("count"), groups.get("block")
    need(is_int(groups.get("axis"), 0, max(len(shape) - 1, 0)), f"kernel @{name}: workgroup axis is not an axis of its output")
    need(is_int(count, 1) and is_int(block, 1), f"kernel @{name}: workgroup count {count!r} or block {block!r} "
         "is not a positive size")
    size = elements(shape)
    need(block <= size and count == -(-size // block), f"kernel @{name}: {count} workgroups of {block} elements do "
         f"not cover its output ({'x'.join(map(str, shape))}, {size} elements)")
    need(groups.get("take") is None or isinstance(groups["take"], str), f"kernel @{name}: take is not a name")


#: The launch record's lists and their lengths: a tiled kernel's grid (x, y, z), workgroup (x, y), block.
_LAUNCH_LISTS = {"grid": 3, "workgroup": 2, "block": 2}


_DEFINE = re.compile(rb'define [^@]*@(?:"((?:[^"\\]|\\[0-9A-Fa-f]{2})*)"|([-\w.$]+))\((.*)\)[^()]*\{')


def _symbol_name(m) -> str:
    """The function name of a `define` match: bare, or quoted with `\\XX` escapes (`@"my fn-1_dispatch_0"`)."""
    if m.group(2) is not None:
        return m.group(2).decode()
    return re.sub(rb"\\([0-9A-Fa-f]{2})", lambda e: bytes([int(e.group(1), 16)]), m.group(1)).decode(errors="replace")


_PARENTHESES = re.compile(rb"\([^()]*\)")


def _top_level_parts(params: bytes) -> list[bytes]:
    """A parameter list split at the commas outside parentheses (`ptr initializes((0, 4)) %out0`):
    the parenthesised parts dropped, innermost first, then split (a regex, not a loop over the
    characters: a model's kernels have tens of kilobytes of parameter lists)."""
    while b"(" in params:
        params, dropped = _PARENTHESES.subn(b"", params)
        if not dropped:   # (unbalanced: what is left is split as it is)
            break
    return params.split(b",")


def _definitions(llvm_ir: bytes) -> dict:
    """Function name -> its parameters' types, from the `define` lines of LLVM IR text (found with
    find: a multi-line regex would try every position of the text)."""
    found = {}
    text = b"\n" + llvm_ir
    at = text.find(b"\ndefine ")
    while at >= 0:
        end = text.find(b"\n", at + 1)
        m = _DEFINE.fullmatch(text[at + 1:end if end >= 0 else len(text)])
        if m:
            found[_symbol_name(m)] = [p.split()[0].decode() for p in _top_level_parts(m.group(3)) if p.strip()]
        at = text.find(b"\ndefine ", at + 1)
    return found


def definition_lines(llvm_ir: str) -> str:
    """The `define` lines of LLVM IR: all `check_native_abi` reads (the module file keeps them
    beside the IR, so a load does not read the IR itself)."""
    return "".join(line + "\n" for line in llvm_ir.split("\n") if line.startswith("define "))


def check_native_abi(llvm_ir: bytes, kernels: dict) -> None:
    """Each kernel's parameters, as the llvm-cpu executable's LLVM IR defines them (its `define`
    lines are enough: `definition_lines`), are the ones
    its manifest record makes the VM pass: a pointer per buffer, a value per scalar, the workgroup
    range (two i64) when it is split, and its work-sharing wrapper (`take`) when it names one. (A
    record edited to drop a kernel's range would make the VM call it with too few arguments.)"""
    defined = _definitions(llvm_ir)
    for name, kernel in kernels.items():
        groups = kernel.get("workgroups")
        ins = ["ptr" if r["shape"] is not None else "value" for r in kernel["inputs"]]
        outs = ["ptr"] * len(kernel["outputs"])
        for symbol, want in ((name, ins + (["i64", "i64"] if groups else []) + outs),
                             (groups and groups.get("take"), ins + ["ptr", "ptr", "i64"] + outs)):
            if not symbol:
                continue
            got = defined.get(symbol)
            need(got is not None and len(got) == len(want) and
                 all((g == "ptr") == (w == "ptr") and (w != "i64" or g == "i64") for g, w in zip(got, want)),
                 f"kernel @{name}: the llvm-cpu code's @{symbol} takes ({', '.join(got or ['nothing'])}), the "
                 f"manifest's record passes ({', '.join(want)})")


def check_gpu_executable(target: str, exe: dict, kernels: dict, entry) -> None:
    """A GPU executable's kernels: code, and launches whose counts agree with each other (a grid of
    `workgroups` workgroups of `workgroup_size` threads runs `threads`, or, tiled, exactly that)."""
    _str(exe.get("arch"), f"the {target} executable's arch")
    need(all(isinstance(v, str) for v in _list(exe.get("validated", []), f"the {target} executable's validated")),
         f"the {target} executable's validated list is not of names")
    for name, info in _dict(exe.get("kernels"), f"the {target} executable's kernels").items():
        what = f"the {target} executable's kernel @{name}"
        need(name in kernels and isinstance(info, dict), f"{what} is not a kernel of the module")
        entry(info.get("code"), f"{what}: code")
        if "assembly" in info:
            entry(info["assembly"], f"{what}: assembly")
        _str(info.get("entry"), f"{what}: entry")
        _str(info.get("tiling", ""), f"{what}: tiling")
        need(_ints(info.get("axes", [])) and isinstance(info.get("split", False), bool), f"{what}: malformed axes")
        threads, groups, size = info.get("threads"), info.get("workgroups"), info.get("workgroup_size")
        need(is_int(threads, 1, 1 << 40) and is_int(groups, 1, 1 << 40) and is_int(size, 1, 1 << 20),
             f"{what}: threads, workgroups and workgroup_size are not positive counts")
        tiled = "workgroup" in info
        for key, length in _LAUNCH_LISTS.items():
            need((key in info) == tiled, f"{what}: a launch with{'out' if tiled else ''} {key}")
            need(not tiled or _ints(info[key], 1) and len(info[key]) == length and all(v < 1 << 31 for v in info[key]),
                 f"{what}: {key} is not {length} positive counts")
        if tiled:
            need(elements(info["grid"]) == groups and elements(info["workgroup"]) == size and threads == groups * size,
                 f"{what}: its grid, workgroup and thread counts disagree")
        else:
            need(groups == -(-threads // size), f"{what}: {groups} workgroups of {size} do not run {threads} threads")
        need(_ints(info.get("scratch", []), 1), f"{what} has a malformed scratch list")


def check_program(prog, export: dict, kernels: dict, constants: dict) -> None:
    """A host program against its export (the same signature), the kernels and constants it names,
    its register count and its memory plan."""
    name = export["name"]
    _dict(prog, f"the host program of @{name}")
    need(prog.get("name") == name, f"the host program of @{name} is named {prog.get('name')!r}")
    for key in ("inputs", "results"):   # (as JSON: in Python, true == 1)
        need(json.dumps(prog.get(key), sort_keys=True) == json.dumps(export[key], sort_keys=True),
             f"@{name}: the host program's {key} differ from the export's")
    registers = prog.get("registers")
    need(is_int(registers, len(export["inputs"]), 1 << 24), f"@{name}: register count {registers!r} is not a "
         f"count of at least its {len(export['inputs'])} arguments")
    plan = _dict(prog.get("plan"), f"@{name}: plan")
    for key in ("pool_bytes", "peak_bytes", "result_bytes", "without_reuse_bytes", "buffers"):
        need(is_int(plan.get(key)), f"@{name}: plan {key} is not a size")
    slots, offsets = plan.get("slots"), plan.get("offsets")
    need(_ints(slots) and _ints(offsets) and len(slots) == len(offsets),
         f"@{name}: plan slots and offsets are not lists of sizes, one per slot")
    for i, (size, offset) in enumerate(zip(slots, offsets)):
        need(offset + size <= plan["pool_bytes"], f"@{name}: pool slot {i} (bytes {offset}..{offset + size}) is "
             f"outside the pool ({plan['pool_bytes']} bytes)")
    extent = max((offset + size for size, offset in zip(slots, offsets)), default=0)
    need(plan["pool_bytes"] == extent, f"@{name}: the pool is {plan['pool_bytes']} bytes, its slots end at {extent}")
    values: dict = {}   # register -> (shape, dtype)
    constant: set = set()   # registers that hold a constant, or a view of one (mapped read-only: never written)
    for i, rec in enumerate(export["inputs"]):
        shape, dtype = check_type_record(rec, f"@{name}: input {i}")
        if "storage" in rec:
            shape, dtype = check_type_record(rec["storage"], f"@{name}: input {i}")
        values[i] = (shape or (), dtype)
    instructions = _list(prog.get("instructions"), f"@{name}: instructions")
    need(instructions and isinstance(instructions[-1], dict) and instructions[-1].get("op") == "return",
         f"@{name}: the host program does not end with a return")

    def reg(r, what: str) -> tuple:
        if not (is_int(r) and r in values):
            raise Malformed(f"@{name}: {what} reads register {r!r}, which is not defined")
        return values[r]

    def define(ins: dict, value: tuple) -> None:
        dst = ins.get("dst")
        if not (is_int(dst) and dst < registers) or dst in values:
            raise Malformed(f"@{name}: {ins['op']} writes register {dst!r}, which is written twice or not "
                            f"below the register count ({registers})")
        values[dst] = value

    for n, ins in enumerate(instructions):
        _dict(ins, f"@{name}: instruction {n}")
        op = ins.get("op")
        if op == "constant":
            const = constants.get(ins.get("name")) if isinstance(ins.get("name"), str) else None
            need(const is not None, f"@{name}: unknown constant {ins.get('name')!r}")
            define(ins, (tuple(const["shape"]), record_dtype(const)))   # (bf16's stored dtype is V2)
            constant.add(ins["dst"])
        elif op == "alloc":
            shape, dtype = check_type_record(ins, f"@{name}: instruction {n} (alloc)", False)
            need(shape is not None, f"@{name}: instruction {n} allocates a scalar")
            slot = ins.get("slot")
            need(is_int(slot, -1, len(slots) - 1), f"@{name}: alloc into slot {slot!r} ({len(slots)} slots)")
            nbytes = elements(shape) * dtype.itemsize
            need(slot < 0 or nbytes <= slots[slot], f"@{name}: a {nbytes}-byte buffer does not fit slot {slot} "
                 f"({slots[slot] if slot >= 0 else 0} bytes)")
            define(ins, (shape, dtype))
        elif op == "view":
            src_shape, dtype = reg(ins.get("src"), "a view")
            need(elements(check_shape(ins.get("shape"), f"@{name}: a view")) == elements(src_shape),
                 f"@{name}: a view changes the element count")
            define(ins, (tuple(ins["shape"]), dtype))
            if ins["src"] in constant:
                constant.add(ins["dst"])
        elif op == "dispatch":
            kernel = kernels.get(ins.get("kernel")) if isinstance(ins.get("kernel"), str) else None
            need(kernel is not None, f"@{name}: unknown kernel {ins.get('kernel')!r}")
            for key, side in (("ins", "inputs"), ("outs", "outputs")):
                regs = _list(ins.get(key), f"@{name}: dispatch {key}")
                need(len(regs) == len(kernel[side]), f"@{name}: @{ins['kernel']} is dispatched with "
                     f"{len(regs)} {side}, it takes {len(kernel[side])}")
                for j, (r, rec) in enumerate(zip(regs, kernel[side])):
                    got = reg(r, "a dispatch")
                    want = (tuple(rec["shape"] or ()), record_dtype(rec))
                    # (an alloc of bf16 / f8 names only its storage, raw bytes of the same size)
                    untyped = got[1].kind == "V" and got[0] == want[0] and got[1].itemsize == want[1].itemsize
                    if got != want and not untyped:   # (the message only when it is needed: this runs per buffer)
                        raise Malformed(f"@{name}: {side[:-1]} {j} of @{ins['kernel']} is "
                                        f"{'x'.join(map(str, got[0]))} {got[1]}, the kernel takes "
                                        f"{'x'.join(map(str, want[0]))} {want[1]}")
            need(len(set(ins["outs"])) == len(ins["outs"]), f"@{name}: a dispatch writes one buffer twice")
            need(not constant.intersection(ins["outs"]), f"@{name}: @{ins['kernel']} writes a constant")
        elif op == "return":
            need(n == len(instructions) - 1, f"@{name}: a return before the end of the host program")
            regs = _list(ins.get("values"), f"@{name}: return values")
            need(len(regs) == len(export["results"]), f"@{name}: returns {len(regs)} values, the export "
                 f"declares {len(export['results'])}")
            for j, (r, rec) in enumerate(zip(regs, export["results"])):
                shape, _ = reg(r, "the return")
                need(elements(shape) == elements(rec["shape"]), f"@{name}: result {j} has {elements(shape)} "
                     f"elements, the export declares {rec['shape']}")
        else:
            raise Malformed(f"@{name}: unknown instruction {op!r}")
