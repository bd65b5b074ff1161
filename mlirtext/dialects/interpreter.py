"""interpreter (StableHLO's reference interpreter): `interpreter.probe` and `interpreter.print`.

A probe returns its operand unchanged and records it under `probe_id` (the
tests read it back with `check.expect_serialized_eq`); print writes a value.
`interpreter.run_parallel` appears only in generic form and stays an unknown op.
"""
from __future__ import annotations

from ..ir.attributes import StringAttr, escape_string
from ..syntax.literals import string_value
from ..ir.signatures import OpSignature
from .base import Dialect, VerifyError
from .common import create

dialect = Dialect("interpreter", grammar="interpreter")


def _is_tensor(t) -> bool:
    return type(t).__name__ in ("RankedTensorType", "UnrankedTensorType")


def _print_probe(p, op) -> None:
    probe = op.attr("probe_id")
    p.write("interpreter.probe ", p.value(op.operand("operand")), ", probe_id = ", escape_string(probe.value),
            p.op_attr_dict(op, elide=("probe_id",)), " : ", p.type(op.results[0].type))


def _verify_probe(op) -> None:
    if len(op.operands) != 1 or len(op.results) != 1:
        raise VerifyError("expects one operand and one result")
    if not isinstance(op.attr("probe_id"), StringAttr):
        raise VerifyError("requires attribute 'probe_id'")
    operand = op.operand("operand").type
    if operand != op.results[0].type:
        raise VerifyError("failed to verify that all of {operand, result} have same type")
    if not _is_tensor(operand):
        raise VerifyError(f"operand #0 must be tensor, but got '{operand}'")


dialect.op("interpreter.probe", "Returns its operand and records it (serialised) under `probe_id`.",
           properties=("probe_id",), verify=_verify_probe, print=_print_probe,
           names=OpSignature.of(("operand",), ("result",), ("probe_id",)))


@dialect.rule("interpreter_probe")
def _interpreter_probe(ctx, children):
    value, probe, attrs, type = children
    attributes = {"probe_id": StringAttr(string_value(ctx, probe))}
    for key, v in (attrs or {}).items():
        if key in attributes:
            raise ctx.fail(f"attribute '{key}' given twice")
        attributes[key] = v
    return create(ctx, "interpreter.probe", [ctx.resolve(value, type)], [type], attributes)


def _print_print(p, op) -> None:
    operand = op.operand("operand")
    p.write("interpreter.print ", p.value(operand), p.op_attr_dict(op), " : ", p.type(operand.type))


def _verify_print(op) -> None:
    if len(op.operands) != 1:
        raise VerifyError(f"expected 1 operand, but found {len(op.operands)}")


dialect.op("interpreter.print", "Prints a value.", verify=_verify_print, print=_print_print,
           names=OpSignature.of(("operand",)))


@dialect.rule("interpreter_print")
def _interpreter_print(ctx, children):
    value, attrs, type = children
    return create(ctx, "interpreter.print", [ctx.resolve(value, type)], (), attrs)
