"""linalg-interchange-for-vectors: put a contiguous parallel dimension innermost in reductions.

The loops lowering walks a structured op's dimensions in order, so a matmul
`(b, m, n, k)` runs its reduction `k` innermost: every step reads B with a
stride of a row and adds into one scalar of C, which LLVM cannot vectorise.
Moving the output's last dimension (`n`) innermost, after the reductions
(`b, m, k, n`), makes the inner loop `C[m, n:] += A[m, k] * B[k, n:]`: unit
stride in C and B, one broadcast scalar, a vector loop. Convolutions in NHWC /
HWIO get the same treatment (output channels innermost).

The op is rewritten as a `linalg.generic` with its maps, iterator types and
`linalg.index` uses renumbered.
Each output element still adds its terms in the same order (the reduction
loops keep their relative order), so results are unchanged bit for bit. It
applies when the op has reductions, its innermost dimension is one of them,
the output's last index is a parallel dimension, and some input is contiguous
along that dimension.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..ir.attributes import ArrayAttr, DenseArrayAttr, IntegerAttr, OpaqueAttr
from ..ir import types as T
from ..ir.core import Operation
from .passes import Pass


def _permutation(op: Operation):
    from ..dialects.linalg import segments
    from .conversions.linalg_to_loops import structured
    try:
        s = structured(op)
        ins, outs = segments(op)
    except Exception:  # noqa: BLE001 - an op the loops lowering cannot read is left alone
        return None
    n = s.num_dims
    if not s.reductions or (n - 1) not in s.reductions or len(outs) != 1:
        return None
    last = s.maps[-1].results[-1] if s.maps[-1].results else None
    if last is None or last[0] != "dim" or last[1] in s.reductions:
        return None
    inner = last[1]
    if not any(m.results and m.results[-1] == ("dim", inner) for m in s.maps[:len(ins)]):
        return None
    order = [d for d in range(n) if d not in s.reductions and d != inner] + sorted(s.reductions) + [inner]
    return s, order


def _map_text(m, new_of: dict, n: int) -> str:
    def rename(text: str) -> str:
        return re.sub(r"\bd(\d+)\b", lambda g: f"d{new_of[int(g.group(1))]}", text)
    exprs = []
    for kind, value in m.results:
        exprs.append(f"d{new_of[value]}" if kind == "dim" else str(value) if kind == "const" else rename(str(value)))
    dims = ", ".join(f"d{i}" for i in range(n))
    return f"affine_map<({dims}) -> ({', '.join(exprs)})>"


def interchange(op: Operation) -> bool:
    from ..dialects.linalg import segments
    found = _permutation(op)
    if found is None:
        return False
    s, order = found
    n = s.num_dims
    new_of = {old: new for new, old in enumerate(order)}
    ins, outs = segments(op)
    maps = ArrayAttr(tuple(OpaqueAttr(_map_text(m, new_of, n)) for m in s.maps))
    kinds = ArrayAttr(tuple(OpaqueAttr("#linalg.iterator_type<reduction>" if old in s.reductions else
                                       "#linalg.iterator_type<parallel>") for old in order))
    body = s.body.parent.clone({})
    for inner in body.blocks[0].ops if body.blocks else []:
        for o in inner.walk():
            if o.name == "linalg.index":
                o.attributes["dim"] = IntegerAttr(new_of[o.attr("dim").value], T.index)
    attrs = {"indexing_maps": maps, "iterator_types": kinds,
             "operandSegmentSizes": DenseArrayAttr(T.i32, (len(ins), len(outs)))}
    new = Operation("linalg.generic", list(op.operands), op.result_types, attrs, [body], span=op.span,
                    location=op.location)
    new.name_span = op.name_span
    op.parent.insert_before(op, new)
    for old, r in zip(op.results, new.results):
        r.name = old.name
        old.replace_all_uses_with(r)
    op.erase()
    return True


@dataclass(frozen=True)
class InterchangeForVectors(Pass):
    name = "linalg-interchange-for-vectors"
    summary = "Reorder the loops of reductions (matmul, conv) so that a contiguous parallel dimension of the " \
              "output is innermost and the inner loop vectorises"

    def run(self, op: Operation) -> None:
        from .dispatch import is_structured
        for target in [o for o in op.walk() if is_structured(o)]:
            interchange(target)
