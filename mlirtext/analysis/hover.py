"""Hover text (Markdown) for whatever `index.target_at` finds under the cursor."""
from __future__ import annotations

from functools import lru_cache
from typing import Optional, Sequence

from ..ir.core import BlockArgument, Operation, OpResult
from ..ir.types import ShapedType
from .document import Document
from .index import ALIAS, ATTR, BLOCK, OP, SYMBOL, TYPE, VALUE, Target, piece_index, target_at
from .source_links import location_aliases


def hover(doc: Document, offset: int, sections: Sequence[str] = ()) -> Optional[tuple[str, int, int]]:
    """(markdown, start, end) for the token at `offset`, or None. `sections` (Markdown: the
    op's dispatch, its lowered forms) go below an op's own hover, each after a rule."""
    target = target_at(doc, offset)
    if target is None:
        return None
    text = _MAKERS[target.kind](doc, target, [s for s in sections if s])
    if not text:
        return None
    return text, target.start, target.end


def _op(doc: Document, t: Target, sections: list) -> str:
    op: Operation = t.obj
    definition = doc.lookup(op.name)
    lines = [f"**{op.name}**" + (f": {definition.summary}" if definition and definition.summary else "")]
    if definition is None:
        lines.append("*(an op mlirtext does not know: parsed in generic form, not verified)*")
    if op.operands:
        lines.append("operands: " + ", ".join(f"`{v.type}`" for v in op.operands))
    if op.results:
        lines.append("results: " + ", ".join(f"`{r.type}`" for r in op.results))
    if op.name in ("func.func", "llvm.func") and "function_type" in op.attributes:
        lines.append(f"signature: `{op.attr('function_type')}`")
    origin = _origin(doc, t, op)
    if origin:
        lines.append(origin)
    return "\n\n---\n\n".join(["\n\n".join(lines), *sections])


def _origin(doc: Document, t: Target, op: Operation) -> str:
    """Where the op came from, by its `loc(...)` (an importer's: the Python line); '' if unknown."""
    if op.location is None:
        return ""
    from ..ir.locations import describe
    return describe(str(op.location), location_aliases(doc, t.piece))


def _value(doc: Document, t: Target, sections) -> str:
    value = t.obj
    name = f"%{value.name}" if value.name else doc.text[t.start:t.end]
    lines = [f"`{name}`: `{value.type}`"]
    if isinstance(value, OpResult):
        where = _line_of(doc, t, value.span)
        index = f" (result #{value.index})" if len(value.op.results) > 1 else ""
        lines.append(f"defined by `{value.op.name}`{index}{where}")
    elif isinstance(value, BlockArgument):
        where = _line_of(doc, t, value.span)
        owner = value.block.parent.parent if value.block.parent is not None else None
        if value.block.label:
            lines.append(f"argument #{value.index} of block `^{value.block.label}`{where}")
        elif owner is not None and owner.sym_name:
            lines.append(f"argument #{value.index} of `@{owner.sym_name}`{where}")
        else:
            lines.append(f"argument #{value.index} of the entry block of `{owner.name if owner else '?'}`{where}")
    uses = len(value.uses)
    lines.append(f"{uses} use{'' if uses == 1 else 's'}")
    meaning = describe_type(value.type)
    if meaning:
        lines.append(meaning)
    return "\n\n".join(lines)


def _line_of(doc: Document, t: Target, span) -> str:
    if span is None or span.source is not t.piece.parsed.source:
        return ""
    line, _ = doc.lines.position(t.piece.base + span.start)
    return f" on line {line + 1}"


def _block(doc: Document, t: Target, sections) -> str:
    block = t.obj
    args = ", ".join(f"%{a.name}: {a.type}" if a.name else str(a.type) for a in block.arguments)
    uses = sum(1 for e in piece_index(t.piece).entries_of(BLOCK, block) if not e.is_def)
    text = f"block `^{block.label}`" + (f"({args})" if args else "")
    return f"{text}\n\n{len(block.ops)} ops; branched to from {uses} place{'' if uses == 1 else 's'}"


def _symbol(doc: Document, t: Target, sections) -> str:
    found = doc.symbol(t.piece, t.obj)
    if found is None:
        return f"`@{t.obj}`: not defined in this file"
    _, op = found
    return symbol_signature(op)


def symbol_signature(op: Operation) -> str:
    name = op.sym_name
    ftype = getattr(op.attr("function_type"), "type", None)
    if op.name == "func.func" and hasattr(ftype, "inputs"):
        args = ", ".join(str(t) for t in ftype.inputs)
        results = ", ".join(str(t) for t in ftype.results)
        results = f" -> ({results})" if len(ftype.results) != 1 else f" -> {results}"
        decl = "" if op.regions and op.regions[0].blocks else " (declaration)"
        return f"```mlir\nfunc.func @{name}({args}){results if ftype.results else ''}\n```\n{decl}".rstrip()
    attrs = ", ".join(f"{k} = {v}" for k, v in op.attributes.items() if k != "sym_name")
    return f"```mlir\n{op.name} @{name}\n```\n{attrs}" if attrs else f"```mlir\n{op.name} @{name}\n```"


def _alias(doc: Document, t: Target, sections) -> str:
    chunk = doc.chunk_of(t.piece)
    found = chunk.aliases.get(t.obj)
    if found is None:
        return f"`{t.obj}`: undefined alias"
    piece, _ = found
    value = piece.parsed.attr_aliases.get(t.obj) or piece.parsed.type_aliases.get(t.obj)
    text = f"```mlir\n{t.obj} = {value}\n```"
    if t.obj.startswith("!"):
        meaning = describe_type(value)
        if meaning:
            text += "\n\n" + meaning
    return text


def _type(doc: Document, t: Target, sections) -> str:
    parsed = parse_type(t.obj)
    if parsed is None:
        return f"`{t.obj}`"
    meaning = describe_type(parsed)
    return f"`{parsed}`" + (f"\n\n{meaning}" if meaning else "")


@lru_cache(maxsize=4096)
def parse_type(text: str):
    """The Type a piece of type text means, parsed by the real parser; None if it is not one."""
    from .document import parse_piece
    parsed = parse_piece(f'%0 = "mlirtext.type"() : () -> {text}\n', "<type>", {}, {})
    ops = parsed.top_ops
    if not parsed.result.ok or len(ops) != 1 or len(ops[0].results) != 1:
        return None
    return ops[0].results[0].type


def describe_type(t) -> str:
    """What a type means: shape, element type and count, size in bytes."""
    if not isinstance(t, ShapedType):
        width = getattr(t, "width", None)
        return f"{width}-bit scalar" if isinstance(width, int) else ""
    kind = type(t).__name__.replace("Ranked", "").replace("Type", "").lower()
    dims = " x ".join("?" if d is None else str(d) for d in t.shape) or "scalar (rank 0)"
    parts = [f"{kind} of rank {t.rank}: {dims}", f"element type `{t.element}`"]
    count = t.num_elements
    if count is not None:
        parts.append(f"{count:,} element{'' if count == 1 else 's'}")
        width = getattr(t.element, "width", None)
        if isinstance(width, int):
            size = count * width / 8
            parts.append(f"{int(size):,} bytes" if size == int(size) else f"{size:,} bytes")
    else:
        parts.append("dynamic shape")
    return "; ".join(parts)


def _attr(doc: Document, t: Target, sections) -> str:
    if t.obj.startswith("affine_map"):
        from ..dialects.affine_maps import parse_map
        m = parse_map(t.obj)
        if m is None:
            return f"`{t.obj}`"
        results = ", ".join(m.dims[v] if kind == "dim" else str(v) for kind, v in m.results)
        permutation = sorted(v for kind, v in m.results if kind == "dim") == list(range(m.num_dims)) and \
            m.num_results == m.num_dims
        return (f"`{t.obj}`\n\naffine map: {m.num_dims} dimension{'' if m.num_dims == 1 else 's'}, "
                f"{len(m.symbols)} symbol{'' if len(m.symbols) == 1 else 's'} -> {m.num_results} "
                f"result{'' if m.num_results == 1 else 's'} ({results})" +
                ("; a permutation of the dimensions" if permutation else ""))
    # `dense<...>`: the attribute of the innermost op around the cursor tells what it holds.
    from ..ir.dense import DenseElementsAttr
    local = t.start - t.piece.base
    best = None
    module = t.piece.parsed.module
    for op in module.walk() if module is not None else ():
        if op.span is not None and op.span.source is t.piece.parsed.source and \
                op.span.start <= local < op.span.end and (best is None or op.span.start >= best.span.start):
            best = op
    for name, value in (best.attributes.items() if best is not None else ()):
        if isinstance(value, DenseElementsAttr):
            count = getattr(value.type, "num_elements", None)
            kind = "splat (one value repeated)" if value.splat else \
                ("raw bytes (hex)" if value.is_raw else "listed values")
            text = f"dense elements attribute `{name}` of `{value.type}`: {kind}"
            if count is not None:
                text += f"; {count:,} element{'' if count == 1 else 's'}"
            if value.splat and value.values:
                text += f"; every element is {value.values[0]}"
            return text
    return "dense elements attribute"


_MAKERS = {OP: _op, VALUE: _value, BLOCK: _block, SYMBOL: _symbol, ALIAS: _alias, TYPE: _type, ATTR: _attr}
