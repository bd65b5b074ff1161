"""How an HLO family declares its ops: one `HloOp` record per op, carrying its check.

A family module (dot.py, shapes.py, ...) lists its ops as records: the summary, the
inherent attributes, the traits, the custom syntax (a declared `HloFormat`, or a
hand-written printer with its grammar callbacks) and `verify`, the op's own rules.
`declare_ops` declares records on a dialect under a prefix (stablehlo, mhlo, chlo).
Every HLO op's verifier checks the operand and result types first (hlo_types.py), as
MLIR does, then runs the record's rules. A check that raises anything but `VerifyError`
has a bug: the verifier reports it as an internal error naming the op, never as a pass.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from ...ir.core import Operation
from ...ir.signatures import OpSignature
from .. import hlo_types
from ..assembly_format import declare_family
from ..base import PURE, Dialect, VerifyError
from .syntax import HloFormat, hlo_create


@dataclass(frozen=True)
class HloOp:
    """One op: its name (short for the op set stablehlo and mhlo share: `dot_general`), what
    `dialect.op` takes, its syntax (`format`, or the hand-written `print`), and `verify`, its
    own rules. `inferred`: every rule is part of MLIR's return type inference, so an error is
    followed by "failed to infer returned types" (as `--verify-diagnostics` expects);
    `operands`, `results`: the operand and result names of an op with hand-written syntax."""
    name: str
    summary: str
    properties: tuple = ()
    traits: tuple = (PURE,)
    verify: Optional[Callable[[Operation], None]] = None
    print: Optional[Callable] = None
    format: Optional[HloFormat] = None
    inferred: bool = False
    operands: Optional[tuple] = None
    results: tuple = ("result",)


def verifier(check: Optional[Callable[[Operation], None]], inferred: bool = False) -> Callable[[Operation], None]:
    """The verifier of an HLO op: the type constraints, then `check`."""
    def verify(op: Operation) -> None:
        hlo_types.check(op)  # as MLIR: the operand and result types first, then the op's own rules
        if check is not None:
            try:
                check(op)
            except VerifyError as e:
                if inferred:
                    e.also.append("failed to infer returned types")
                raise
    return verify


def declare_ops(d: Dialect, prefix: str, ops) -> None:
    """Declare the records `ops` on dialect `d` as `<prefix>.<name>`: the ops of one format
    together (one grammar rule), the others with their hand-written printers."""
    records: dict = {}
    for op in ops:
        name = f"{prefix}.{op.name}"
        if name in records:  # two families claiming one op: the later would silently win
            raise ValueError(f"'{name}' is declared twice")
        records[name] = op
    families: dict = {}  # HloFormat -> op names, in first-use order
    for name, op in records.items():
        if op.format is not None:
            families.setdefault(op.format, []).append(name)
        else:
            d.op(name, op.summary, op.traits, op.properties, verifier(op.verify, op.inferred), op.print,
                 names=OpSignature.of(op.operands, op.results, op.properties) if op.operands is not None else None)

    def per_op(name: str) -> dict:
        op = records[name]
        return {"summary": op.summary, "traits": op.traits, "properties": op.properties,
                "verify": verifier(op.verify, op.inferred)}

    for fmt, names in families.items():
        kinds = {k: v(prefix) if callable(v) else v for k, v in fmt.attributes.items()}
        declare_family(d, fmt.family, names, fmt.text, operands=fmt.operands, results=fmt.results,
                       attributes=kinds, custom=fmt.custom, per_op=per_op, strict_properties=False,
                       build=hlo_create)
