"""cf: unstructured control flow between the blocks of a region.

`cf.br`, `cf.cond_br` and `cf.switch` pass operands to their successor blocks
(the op's operands, split by `operandSegmentSizes` as MLIR's generic form
does); each successor's operands must match its block's arguments. `cf.assert`
aborts with a message when its condition is false.
"""
from __future__ import annotations

from ..ir import types as T
from ..ir.attributes import StringAttr
from .assembly_format import StringAttrKind, declare_family
from ..ir.signatures import OpSignature
from .base import PURE, TERMINATOR, Dialect, VerifyError
from .branches import (build_cond_br, build_switch, case_values, print_cond_br, succ, successor_groups,
                       verify_branch, write_successor)
from .common import dense_i32_array, safe_printer

dialect = Dialect("cf", grammar="cf")


@dialect.rule("cf_weights")
def _cf_weights(ctx, children):
    return dense_i32_array(int(t.value, 0) for t in children if t is not None)


@dialect.rule("cf_succ")
def _cf_succ(ctx, children):
    return succ(ctx, children)


# ---- cf.br ----------------------------------------------------------------------
declare_family(dialect, "br", ["cf.br"], "$dest (`(` $destOperands^ `:` type($destOperands) `)`)? attr-dict",
               operands=("destOperands*",), successors=("dest",), strict_properties=False,
               summary="Unconditional branch to a block, passing its arguments.", traits=(TERMINATOR, PURE),
               verify=verify_branch)


# ---- cf.cond_br -------------------------------------------------------------------
def _verify_cond_br(op) -> None:
    if not op.operands or op.operand("condition").type != T.i1:
        got = op.operand("condition").type if op.operands else None
        raise VerifyError(f"operand #0 must be 1-bit signless integer, but got '{got}'")
    verify_branch(op)


dialect.op("cf.cond_br", "Branches to one of two blocks on an i1 condition.", traits=(TERMINATOR, PURE),
           properties=("operandSegmentSizes", "branch_weights"), verify=_verify_cond_br,
           print=safe_printer(print_cond_br),
           names=OpSignature.of(("condition", "trueDestOperands*", "falseDestOperands*"), (), ("branch_weights",)))


@dialect.rule("cf_cond_br")
def _cf_cond_br(ctx, children):
    return build_cond_br(ctx, "cf.cond_br", children)


# ---- cf.switch ----------------------------------------------------------------------
def _print_switch(p, op) -> None:
    groups = successor_groups(op)
    flag = op.operand("flag")
    indent = "  " * (p.level + 1)
    lines = []
    entries = [("default", op.successors[0], groups[0])]
    entries += list(zip(case_values(op.attr("case_values")), op.successors[1:], groups[1:]))
    for key, block, values in entries:
        mark = len(p.out)
        write_successor(p, block, values)
        text = "".join(p.out[mark:])
        del p.out[mark:]
        lines.append(f"{indent}{key}: {text}")
    p.write("cf.switch ", p.value(flag), " : ", p.type(flag.type), ", [\n", ",\n".join(lines), "\n",
            "  " * p.level, "]")
    p.write(p.attr_dict(op.attributes, elide=("operandSegmentSizes", "case_values", "case_operand_segments")))


def _verify_switch(op) -> None:
    flag = op.operand("flag").type if op.operands else None
    if not isinstance(flag, T.IntegerType):  # iree-opt 3.13: index is not accepted
        raise VerifyError(f"invalid kind of type specified: expected builtin.integer, but found '{flag}'")
    values = case_values(op.attr("case_values"))
    if len(values) != len(op.successors) - 1:
        raise VerifyError(f"number of case values ({len(values)}) should match number of case destinations "
                          f"({len(op.successors) - 1})")
    verify_branch(op)


dialect.op("cf.switch", "Multi-way branch on an integer value, with a default.", traits=(TERMINATOR, PURE),
           properties=("case_values", "case_operand_segments", "operandSegmentSizes"), verify=_verify_switch,
           print=safe_printer(_print_switch),
           names=OpSignature.of(("flag", "defaultOperands*", "caseOperands*"), (), ("case_values", "case_operand_segments")))


@dialect.rule("cf_default")
def _cf_default(ctx, children):
    return children[0]


@dialect.rule("cf_switch")
def _cf_switch(ctx, children):
    flag, type, default = children[0], children[1], children[2]
    cases = [c for c in children[3:-1] if c is not None]
    return build_switch(ctx, "cf.switch", flag, type, default, cases, children[-1],
                        lambda n: T.VectorType((n,), type))


# ---- cf.assert -------------------------------------------------------------------------
def _verify_assert(op) -> None:
    arg = op.operand("arg").type
    if arg != T.i1:
        raise VerifyError(f"operand #0 must be 1-bit signless integer, but got '{arg}'")
    if not isinstance(op.attr("msg"), StringAttr):
        raise VerifyError("requires attribute 'msg'")


declare_family(dialect, "assert", ["cf.assert"], "$arg `,` $msg attr-dict", operands=("arg",),
               attributes={"msg": StringAttrKind()}, infer={"arg": T.i1}, strict_properties=False,
               summary="Aborts with a message when the condition is false.", properties=("msg",),
               verify=_verify_assert)
