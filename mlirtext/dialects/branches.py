"""Branch ops' shared pieces, for cf and llvm alike: which operands each successor gets,
MLIR's rule that they match the block's arguments, the `^bb1(%a : i32)` syntax, switch cases."""
from __future__ import annotations

from ..ir import types as T
from ..ir.attributes import DenseArrayAttr
from ..ir.dense import DenseElementsAttr, parse_dense
from .base import VerifyError
from .common import create, dense_i32_array, merge_attrs, operand_segments


def successor_groups(op) -> list:
    """The operands each successor of a branch op receives, in successor order."""
    name = op.name
    if name in ("llvm.br", "cf.br"):
        return [list(op.operands)]
    if name in ("llvm.cond_br", "cf.cond_br"):
        _, t, f = operand_segments(op, 3)
        return [list(t), list(f)]
    if name in ("llvm.switch", "cf.switch"):
        _, default, cases = operand_segments(op, 3)
        key = "case_operand_segments"
        sizes = op.attributes.get(key)
        sizes = list(sizes.values) if isinstance(sizes, DenseArrayAttr) else [0] * (len(op.successors) - 1)
        groups, i = [list(default)], 0
        for s in sizes:
            groups.append(list(cases[i:i + s]))
            i += s
        return groups
    if name == "llvm.invoke":
        _, normal, unwind, _ = operand_segments(op, 4)
        return [list(normal), list(unwind)]
    return [[] for _ in op.successors]


def verify_branch(op) -> None:
    groups = successor_groups(op)
    if len(groups) != len(op.successors):
        raise VerifyError(f"expected {len(groups)} successors, got {len(op.successors)}")
    for i, values in enumerate(groups):
        check_successor_operands(op, i, values)


def check_successor_operands(op, index: int, values) -> None:
    """MLIR's branch rule: successor `index` gets exactly its block's argument types."""
    block = op.successors[index]
    args = block.arguments
    if len(values) != len(args):
        raise VerifyError(f"branch has {len(values)} operands for successor #{index}, but target block "
                          f"has {len(args)}")
    for i, (v, a) in enumerate(zip(values, args)):
        if v.type != a.type:
            raise VerifyError(f"type mismatch for bb argument #{i} of successor #{index}")


def succ(ctx, children):
    """`^bb1(%a, %b : i32, f32)` -> (block, values)."""
    tok = children[0]
    uses, types = (children[1], children[2]) if len(children) >= 3 else (None, None)
    block = ctx.block_ref(tok)
    values = ctx.resolve_all(uses, types or []) if uses else []
    return (block, values)


def write_successor(p, block, values) -> None:
    p.write(p.block(block))
    if values:
        p.write("(", p.values(values), " : ", p.types([v.type for v in values]), ")")


def case_values(attr) -> list:
    if not isinstance(attr, DenseElementsAttr) or attr.is_raw:
        return []
    if attr.splat:
        n = getattr(attr.type, "num_elements", None) or 0
        return [int(attr.values[0])] * n
    return [int(v) for v in attr.values]


def build_switch(ctx, name, flag, flag_type, default, cases, attrs, values_type):
    db, dv = default
    operands = [ctx.resolve(flag, flag_type)] + dv
    case_ops, segs, vals, blocks = [], [], [], [db]
    for value, (block, values) in cases:
        vals.append(value)
        segs.append(len(values))
        case_ops += values
        blocks.append(block)
    attributes = {"case_operand_segments": dense_i32_array(segs),
                  "operandSegmentSizes": dense_i32_array((1, len(dv), len(case_ops)))}
    if vals:
        attributes["case_values"] = parse_dense("[" + ", ".join(map(str, vals)) + "]",
                                                values_type(len(vals)))
    return create(ctx, name, operands + case_ops, (), merge_attrs(attributes, attrs), successors=blocks)


def build_cond_br(ctx, name: str, children):
    """`cond_br %c [weights], ^t(...), ^f(...) attrs` (cf and llvm share the form)."""
    cond, weights, (tb, tv), (fb, fv), attrs = children
    operands = [ctx.resolve(cond, T.i1)] + tv + fv
    attributes = {"operandSegmentSizes": dense_i32_array((1, len(tv), len(fv)))}
    if weights is not None:
        attributes["branch_weights"] = weights
    return create(ctx, name, operands, (), merge_attrs(attributes, attrs), successors=[tb, fb])


def print_cond_br(p, op) -> None:
    cond, t, f = operand_segments(op, 3)
    p.write(op.name, " ", p.value(cond[0]))
    weights = op.attr("branch_weights")
    if isinstance(weights, DenseArrayAttr):
        p.write(" weights([", ", ".join(str(w) for w in weights.values), "])")
    p.write(", ")
    write_successor(p, op.successors[0], t)
    p.write(", ")
    write_successor(p, op.successors[1], f)
    p.write(p.attr_dict(op.attributes, elide=("operandSegmentSizes", "branch_weights")))
