"""The ways `mlirtext reduce` makes a module smaller, one class per kind, like xDSL's rewrite patterns.

Each reduction finds its sites in a module (`sites`: how many, in a fixed walk order, so that the
same text always gives the same numbering) and applies itself to any subset of them (`apply`, on a
freshly parsed copy: the reducer never edits the module it keeps). Whether the result still verifies
and is still interesting is the reducer's business, not the reduction's.
"""
from __future__ import annotations

from typing import Callable, Optional

from ..ir import types as T
from ..ir.attributes import ArrayAttr, DictionaryAttr, FloatAttr, IntegerAttr, TypeAttr
from ..ir.core import Operation
from ..ir.dense import DenseElementsAttr
from ..transforms.pass_manager import PassManager
from ..transforms.pipeline import parse_pipeline

#: The attributes that make a function what it is: dropping them is never a reduction.
STRUCTURAL_ATTRIBUTES = frozenset({"sym_name", "function_type", "sym_visibility", "arg_attrs", "res_attrs",
                                   "operandSegmentSizes", "resultSegmentSizes"})


def top_ops(module: Operation) -> list:
    return module.regions[0].blocks[0].ops


def functions(module: Operation) -> list:
    return [op for op in top_ops(module) if op.name == "func.func" and op.regions and op.regions[0].blocks]


def body_ops(module: Operation) -> list:
    """Every op inside a function but the terminators, in walk order."""
    return [op for fn in functions(module) for op in fn.walk()
            if op is not fn and not _is_terminator(op)]


def _is_terminator(op: Operation) -> bool:
    return op.parent is not None and op is op.parent.terminator and not op.results and \
        op.parent.parent is not None


def count_ops(module: Operation) -> int:
    """The ops of a module, the module itself not counted (what `reduce` reports)."""
    return sum(1 for _ in module.walk()) - 1


def size(module: Operation, text: str) -> tuple[int, int, int]:
    """What a reduction must make smaller, in this order: the ops, the elements of the tensors the
    values hold (a shape halved keeps the text as long), the characters."""
    elements = 0
    for op in module.walk():
        values = list(op.results) + [a for region in op.regions for block in region.blocks for a in block.arguments]
        for v in values:
            if isinstance(v.type, T.ShapedType) and v.type.has_static_shape:
                elements += v.type.num_elements
    return count_ops(module), elements, len(text)


def enclosing_function(op: Operation) -> Optional[Operation]:
    return next((a for a in op.ancestors() if a.name == "func.func"), None)


def add_function_argument(fn: Operation, t: T.Type):
    """A new last argument of `fn` of type `t` (its signature and argument attributes follow)."""
    ftype = fn.attr("function_type").type
    fn.attributes["function_type"] = TypeAttr(T.FunctionType(tuple(ftype.inputs) + (t,), ftype.results))
    if "arg_attrs" in fn.attributes:
        fn.attributes["arg_attrs"] = ArrayAttr(tuple(fn.attr("arg_attrs").items) + (DictionaryAttr({}),))
    return fn.regions[0].blocks[0].add_argument(t)


class Reduction:
    """A kind of reduction: `name` (for the progress line), `sites` and `apply`."""

    name = ""

    def __init__(self, keep: frozenset = frozenset()):
        self.keep = keep   # the functions that must stay (their names), e.g. the one a mismatch runs

    def sites(self, module: Operation) -> int:
        raise NotImplementedError

    def apply(self, module: Operation, chosen: list[int]) -> None:
        raise NotImplementedError


class EraseFunctions(Reduction):
    """Erase whole functions (not the kept ones); one still called leaves IR that does not verify."""

    name = "erase functions"

    def _targets(self, module):
        return [fn for fn in functions(module) if fn.sym_name not in self.keep]

    def sites(self, module):
        return len(self._targets(module))

    def apply(self, module, chosen):
        targets = self._targets(module)
        for i in chosen:
            _erase_subtree(targets[i])


def _erase_subtree(op: Operation) -> None:
    """Detach `op` and drop the uses its ops make (nothing outside uses what is inside a function)."""
    op.detach()
    for inner in op.walk():
        inner.drop_operand_uses()


class EraseOps(Reduction):
    """Erase ops; a value an erased op defined and something else still uses is replaced by the op's
    first operand of the same type (so the ops after it stay live: a pass skips a dead op), else by a
    new argument of its function (mlir-reduce's operation elimination, C-Reduce's "replace by a
    variable")."""

    name = "erase ops"

    def sites(self, module):
        return len(body_ops(module))

    def apply(self, module, chosen):
        ops = body_ops(module)
        gone: set = set()
        for i in sorted(chosen, reverse=True):   # users before definitions: fewer arguments to add
            op = ops[i]
            if any(id(a) in gone for a in op.ancestors()):
                continue
            fn = enclosing_function(op)
            for r in op.results:
                if r.uses:
                    same = next((v for v in op.operands if v.type == r.type), None)
                    r.replace_all_uses_with(same if same is not None else add_function_argument(fn, r.type))
            _erase_subtree(op)
            gone.add(id(op))


class ReplaceWithConstants(Reduction):
    """Replace an op that gives one tensor or scalar of ints or floats by a zero `arith.constant` of its
    type (fewer arguments than EraseOps leaves, and the values a pass cannot fold away are gone)."""

    name = "replace by constants"

    @staticmethod
    def _targets(module):
        return [op for op in body_ops(module)
                if op.name != "arith.constant" and len(op.results) == 1 and _zero(op.results[0].type) is not None]

    def sites(self, module):
        return len(self._targets(module))

    def apply(self, module, chosen):
        targets = self._targets(module)
        for i in sorted(chosen, reverse=True):
            op = targets[i]
            if op.parent is None:
                continue
            const = Operation("arith.constant", (), [op.results[0].type], {"value": _zero(op.results[0].type)},
                              span=op.span)
            op.parent.insert_before(op, const)
            op.results[0].replace_all_uses_with(const.results[0])
            _erase_subtree(op)


def _zero(t: T.Type):
    """A zero constant attribute of type `t`, or None when `t` has none here."""
    if isinstance(t, T.RankedTensorType) and t.has_static_shape:
        e = t.element
        if T.is_float(e):
            return DenseElementsAttr(t, (0.0,), splat=True)
        if T.is_integer(e) or isinstance(e, T.IndexType):
            return DenseElementsAttr(t, (0,), splat=True)
        return None
    if T.is_float(t):
        return FloatAttr(0.0, t)
    if T.is_integer(t) or isinstance(t, T.IndexType):
        return IntegerAttr(0, t)
    return None


class DropUnusedArguments(Reduction):
    """Drop function arguments nothing uses (those EraseOps made, or the source's)."""

    name = "drop unused arguments"

    def _targets(self, module):
        return [(fn, a) for fn in functions(module) for a in fn.regions[0].blocks[0].arguments if not a.uses]

    def sites(self, module):
        return len(self._targets(module))

    def apply(self, module, chosen):
        targets = self._targets(module)
        by_function: dict = {}
        for i in chosen:
            fn, arg = targets[i]
            by_function.setdefault(id(fn), (fn, set()))[1].add(arg.index)
        for fn, indexes in by_function.values():
            block = fn.regions[0].blocks[0]
            ftype = fn.attr("function_type").type
            keep = [i for i in range(len(block.arguments)) if i not in indexes]
            fn.attributes["function_type"] = TypeAttr(T.FunctionType(tuple(ftype.inputs[i] for i in keep),
                                                                      ftype.results))
            if "arg_attrs" in fn.attributes:
                items = fn.attr("arg_attrs").items
                fn.attributes["arg_attrs"] = ArrayAttr(tuple(items[i] for i in keep))
            block.arguments = [block.arguments[i] for i in keep]
            for n, arg in enumerate(block.arguments):
                arg.index = n


class InlineCalls(Reduction):
    """Inline every call and drop the private functions left uncalled (the `inline,symbol-dce` passes)."""

    name = "inline calls"

    def sites(self, module):
        return int(any(op.name == "func.call" for op in module.walk()))

    def apply(self, module, chosen):
        if chosen:
            PassManager(parse_pipeline("inline,symbol-dce"), verify_each=False).run(module)


class DropAttributes(Reduction):
    """Drop the attributes an op can do without (one it needs leaves IR that does not verify)."""

    name = "drop attributes"

    @staticmethod
    def _targets(module):
        return [(op, key) for op in body_ops(module) for key in sorted(op.attributes)
                if key not in STRUCTURAL_ATTRIBUTES and key not in op.property_names]

    def sites(self, module):
        return len(self._targets(module))

    def apply(self, module, chosen):
        targets = self._targets(module)
        for i in chosen:
            op, key = targets[i]
            op.attributes.pop(key, None)


class RewriteTypes(Reduction):
    """Give every value of a type one simpler type, everywhere in the module at once (a site is one
    type: the values, block arguments, signatures and type attributes that hold it)."""

    def __init__(self, name: str, simpler: Callable[[T.Type], Optional[T.Type]], keep: frozenset = frozenset()):
        super().__init__(keep)
        self.name = name
        self.simpler = simpler

    def _types(self, module) -> list:
        seen: dict = {}
        for op in module.walk():
            for v in op.results:
                seen.setdefault(v.type, None)
            for region in op.regions:
                for block in region.blocks:
                    for a in block.arguments:
                        seen.setdefault(a.type, None)
        return [t for t in seen if self.simpler(t) not in (None, t)]

    def sites(self, module):
        return len(self._types(module))

    def apply(self, module, chosen):
        types = self._types(module)
        mapping = {types[i]: self.simpler(types[i]) for i in chosen}

        def new(t):
            if isinstance(t, T.FunctionType):
                return T.FunctionType(tuple(new(x) for x in t.inputs), tuple(new(x) for x in t.results))
            return mapping.get(t, t)

        for op in module.walk():
            for v in op.results:
                v.type = new(v.type)
            for region in op.regions:
                for block in region.blocks:
                    for a in block.arguments:
                        a.type = new(a.type)
            for key, attr in list(op.attributes.items()):
                if isinstance(attr, TypeAttr):
                    op.attributes[key] = TypeAttr(new(attr.type))
                elif isinstance(attr, DenseElementsAttr) and attr.splat and attr.type in mapping:
                    op.attributes[key] = DenseElementsAttr(mapping[attr.type], attr.values, splat=True)


def shrink_shape(t: T.Type) -> Optional[T.Type]:
    """A tensor with every static dimension over 1 halved (so a shape shrinks in a few steps)."""
    if isinstance(t, T.RankedTensorType) and any(d is not None and d > 1 for d in t.shape):
        return T.RankedTensorType(tuple(d if d is None or d <= 1 else d // 2 for d in t.shape), t.element, t.encoding)
    return None


#: The plain element type a wider or narrower one becomes.
_PLAIN = {T.FloatType("f64"): T.FloatType("f32"), T.FloatType("f16"): T.FloatType("f32"),
          T.FloatType("bf16"): T.FloatType("f32")}


def plain_element_type(t: T.Type) -> Optional[T.Type]:
    """f64, f16 and bf16 (alone or in a tensor) as f32; i64 and i16 as i32."""
    element = T.element_type(t)
    plain = _PLAIN.get(element)
    if plain is None and isinstance(element, T.IntegerType) and element.width in (16, 64):
        plain = T.IntegerType(32, element.signedness)
    if plain is None:
        return None
    if isinstance(t, T.RankedTensorType):
        return T.RankedTensorType(t.shape, plain, t.encoding)
    return plain if t == element else None


def reductions(keep: frozenset) -> list[Reduction]:
    """Every reduction, in the order one round tries them: the big cuts first."""
    # (arguments are dropped after each reduction that leaves some unused: erasing ops, constants)
    return [EraseFunctions(keep), InlineCalls(keep), EraseOps(keep), DropUnusedArguments(keep),
            ReplaceWithConstants(keep), DropUnusedArguments(keep), RewriteTypes("shrink shapes", shrink_shape, keep),
            RewriteTypes("simplify types", plain_element_type, keep), DropAttributes(keep)]
