"""User-defined dialects from IRDL files: `irdl.dialect` definitions parsed, turned into
`Dialect`s whose ops verify by their constraints (as MLIR's `--irdl-file`), and registered
into a `Registry` beside the built-in dialects.

A constraint is an SSA value of the IRDL file (`%0 = irdl.is i32`); while one op is verified
each constraint that has matched a type or attribute stays bound to it, so two results
constrained by the same value must have the same type (MLIR's ConstraintVerifier).
Messages are MLIR's: `expected 'i32' but got 'i64'`, `'i1' does not satisfy the constraint`,
`expected base type 'cmath.complex' but got 'builtin.integer'`.

An `irdl.c_pred` (a C++ predicate) is, as in MLIR's loader, no constraint: it has no index,
and a list that names it (any_of, all_of, parametric, a type's parameters, a region's
arguments, the attributes) loses that entry, so `!t<f32>` is what a type of parameters
`(a: %c_pred, b: %f32)` takes and `any_of(%c_pred)` accepts nothing. An operand or result
constrained by one directly is counted and not checked (MLIR reads past its list there).

The ops print in generic form (IRDL declares no custom syntax); the interpreter knows no
semantics for them and says so.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Optional

from .diagnostics import Diagnostic, has_errors
from .dialects.base import Dialect, VerifyError
from .dialects.registry import Registry
from .ir import types as T
from .ir.attributes import (ArrayAttr, Attribute, DenseArrayAttr, DictionaryAttr, FloatAttr, IntegerAttr,
                            OpaqueAttr, StringAttr, SymbolRefAttr, TypeAttr, UnitAttr)
from .ir.core import Operation, Value
from .syntax.parser import parse
from .verifier import verify

#: Builtin type and attribute classes -> the names MLIR gives their bases (`irdl.base "!builtin.integer"`).
_TYPE_BASES = {T.IntegerType: "builtin.integer", T.IndexType: "builtin.index", T.NoneType: "builtin.none",
               T.ComplexType: "builtin.complex", T.RankedTensorType: "builtin.tensor",
               T.UnrankedTensorType: "builtin.unranked_tensor", T.MemRefType: "builtin.memref",
               T.UnrankedMemRefType: "builtin.unranked_memref", T.VectorType: "builtin.vector",
               T.TupleType: "builtin.tuple", T.FunctionType: "builtin.function"}
_ATTR_BASES = {IntegerAttr: "builtin.integer", FloatAttr: "builtin.float", StringAttr: "builtin.string",
               TypeAttr: "builtin.type", ArrayAttr: "builtin.array", DictionaryAttr: "builtin.dictionary",
               UnitAttr: "builtin.unit", SymbolRefAttr: "builtin.symbol_ref", DenseArrayAttr: "builtin.dense_array"}


def _name_and_params(text: str) -> tuple[str, Optional[str]]:
    """`testd.parametric<i32, "x">` -> ("testd.parametric", 'i32, "x"'); no `<`: params None."""
    i = text.find("<")
    return (text, None) if i == -1 else (text[:i], text[i + 1:text.rindex(">")])


def type_base(t) -> str:
    if isinstance(t, T.DialectType):
        return _name_and_params(t.text)[0]
    if isinstance(t, T.FloatType):
        return f"builtin.{t}"
    return _TYPE_BASES.get(type(t), f"builtin.{type(t).__name__}")


def attr_base(a) -> str:
    if isinstance(a, OpaqueAttr) and a.text.startswith("#"):
        return _name_and_params(a.text[1:])[0]
    return _ATTR_BASES.get(type(a), f"builtin.{type(a).__name__}")


@lru_cache(maxsize=4096)
def parameters(text: Optional[str]) -> Optional[tuple]:
    """The parameters of a dynamic type or attribute (`i32, "foo"`) as attributes (types as
    TypeAttr), read by the parser; None when they do not read."""
    if text is None:
        return ()
    result = parse(f'"irdl.params"() {{p = [{text}]}} : () -> ()\n', "<parameters>")
    if not result.ok:
        return None
    return tuple(result.module.regions[0].blocks[0].ops[0].attr("p").items)


def _as_attr(item) -> Attribute:
    return TypeAttr(item) if isinstance(item, T.Type) else item


# ---- constraints ------------------------------------------------------------------------
@dataclass(frozen=True)
class Constraint:
    kind: str                 # is, any, any_of, all_of, base, parametric
    expected: object = None   # is: the attribute; base/parametric: the base name
    on_type: bool = True      # base/parametric: a type base (else an attribute base)
    args: tuple = ()          # any_of/all_of/parametric: constraint indices


class Verifier:
    """Checks types and attributes against the constraints of one definition, keeping what each
    constraint variable matched (one instance per op verified)."""

    def __init__(self, constraints: list, dialect_params: dict):
        self.constraints = constraints
        self.params = dialect_params   # base name -> parameter constraint indices, of this dialect's defs
        self.bound: dict[int, Attribute] = {}

    def check(self, index: int, item) -> Optional[str]:
        """None when `item` (a Type or an Attribute) satisfies constraint `index`, else MLIR's message."""
        attr = _as_attr(item)
        bound = self.bound.get(index)
        if bound is not None:
            return None if bound == attr else f"expected '{bound}' but got '{attr}'"
        problem = self._check(self.constraints[index], item, attr)
        if problem is None:
            self.bound[index] = attr
        return problem

    def _check(self, c: Constraint, item, attr) -> Optional[str]:
        if c.kind == "any":
            return None
        if c.kind == "is":
            return None if c.expected == attr else f"expected '{c.expected}' but got '{attr}'"
        if c.kind == "any_of":
            for arg in c.args:
                trial = Verifier(self.constraints, self.params)
                trial.bound = dict(self.bound)
                if trial.check(arg, item) is None:
                    self.bound = trial.bound
                    return None
            return f"'{attr}' does not satisfy the constraint"
        if c.kind == "all_of":
            for arg in c.args:
                problem = self.check(arg, item)
                if problem is not None:
                    return problem
            return None
        is_type = isinstance(attr, TypeAttr)
        if c.kind == "base":
            if c.on_type:
                got = type_base(attr.type) if is_type else attr_base(attr)
                return None if is_type and got == c.expected else f"expected base type '{c.expected}' but got '{got}'"
            got = attr_base(attr)
            return None if not is_type and got == c.expected else \
                f"expected base attribute '{c.expected}' but got '{got}'"
        # parametric: a dynamic type (or attribute) of this base, its parameters each checked
        text = (attr.type.text if isinstance(attr.type, T.DialectType) else None) if is_type else \
            (attr.text[1:] if isinstance(attr, OpaqueAttr) and attr.text.startswith("#") else None)
        name, params_text = _name_and_params(text) if text is not None else (None, None)
        what = "type" if c.on_type else "attribute"
        if name != c.expected or is_type != c.on_type:
            return f"expected base {what} '{c.expected}' but got '{attr}'"
        params = parameters(params_text)
        if params is None:
            return f"the parameters of '{attr}' do not read"
        if len(params) != len(c.args):  # (MLIR's words, "attribute" for a type too)
            return f"attribute '{c.expected}' expects {len(params)} parameters but got {len(c.args)}"
        for arg, param in zip(c.args, params):
            problem = self.check(arg, param)
            if problem is not None:
                return problem
        return None


@dataclass
class Definition:
    """One `irdl.operation`: its constraints and what its operands, results, attributes and
    regions must satisfy."""

    name: str
    constraints: list
    operands: list       # [(name, variadicity, constraint index)]
    results: list
    attributes: dict     # attribute name -> constraint index
    regions: list        # [(argument constraint indices or None, number of blocks or None)]


def _indices(values, index_of: dict) -> list:
    """The constraint indices of `values`, those of c_preds (which have none) left out."""
    return [index_of[v] for v in values if v in index_of]


def _values_of(op: Optional[Operation], index_of: dict) -> list:
    """[(name, variadicity, constraint index, or None for a c_pred: not checked)]"""
    if op is None:
        return []
    names = op.attr("names")
    kinds = op.attr("variadicity")
    return [(names.items[i].value if isinstance(names, ArrayAttr) else f"#{i}",
             kinds.items[i].value if isinstance(kinds, ArrayAttr) else "single", index_of.get(v))
            for i, v in enumerate(op.operands)]


def _segments(values: list, n: int, segment_sizes, what: str) -> list:
    """The items of each declared operand (or result) group: [(name, kind, constraint, [positions])].
    The counts are checked in MLIR's order and words: with one optional or variadic group its size
    follows from `n`; with several, from the `{what}SegmentSizes` attribute."""
    flexible = [i for i, (_, kind, _) in enumerate(values) if kind != "single"]
    if len(flexible) > 1:
        sizes = _sizes_from_attribute(values, n, segment_sizes, what)
    elif not flexible:
        if n != len(values):
            raise VerifyError(f"expects exactly {len(values)} {what}s, but got {n}")
        sizes = [1] * len(values)
    else:
        extra = n - (len(values) - 1)
        if extra < 0:
            raise VerifyError(f"expects at least {len(values) - 1} {what}s, but got {n}")
        if extra > 1 and values[flexible[0]][1] == "optional":
            raise VerifyError(f"expects at most {len(values)} {what}s, but got {n}")
        sizes = [extra if i == flexible[0] else 1 for i in range(len(values))]
    out, pos = [], 0
    for (name, kind, constraint), size in zip(values, sizes):
        out.append((name, kind, constraint, list(range(pos, pos + size))))
        pos += size
    return out


def _sizes_from_attribute(values: list, n: int, segment_sizes, what: str) -> list:
    """The group sizes an op with several optional or variadic groups gives in its attribute."""
    attr_name = f"{what}SegmentSizes"
    if segment_sizes is None:
        raise VerifyError(f"'{attr_name}' attribute is expected but not provided")
    if not isinstance(segment_sizes, DenseArrayAttr) or segment_sizes.element_type != T.IntegerType(32):
        raise VerifyError(f"'{attr_name}' attribute is expected to be a dense i32 array")
    sizes = list(segment_sizes.values)
    if len(sizes) != len(values):
        raise VerifyError(f"'{attr_name}' attribute for specifying {what} segments must have {len(values)} "
                          f"elements, but got {len(sizes)}")
    for i, (size, (_, kind, _)) in enumerate(zip(sizes, values)):
        if size < 0:
            raise VerifyError(f"'{attr_name}' attribute for specifying {what} segments must have "
                              "non-negative values")
        if kind == "single" and size != 1:
            raise VerifyError(f"element {i} in '{attr_name}' attribute must be equal to 1")
        if kind == "optional" and size > 1:
            raise VerifyError(f"element {i} in '{attr_name}' attribute must be equal to 0 or 1")
    if sum(sizes) != n:
        raise VerifyError(f"sum of elements in '{attr_name}' attribute must be equal to the number of {what}s")
    return sizes


def _op_verifier(definition: Definition, dialect_params: dict):
    def verify_op(op: Operation) -> None:
        v = Verifier(definition.constraints, dialect_params)
        for values, items, what in ((definition.operands, op.operand_types, "operand"),
                                    (definition.results, op.result_types, "result")):
            for _, _, constraint, positions in _segments(values, len(items), op.attributes.get(
                    f"{what}SegmentSizes"), what):
                if constraint is None:  # a c_pred: counted, not checked
                    continue
                for i in positions:
                    problem = v.check(constraint, items[i])
                    if problem is not None:
                        raise VerifyError(problem)
        for name, constraint in definition.attributes.items():
            value = op.attributes.get(name)
            if value is None:
                raise VerifyError(f'attribute "{name}" is expected but not provided')
            problem = v.check(constraint, value)
            if problem is not None:
                raise VerifyError(problem)
        if definition.regions is None:
            return
        if len(op.regions) != len(definition.regions):
            raise VerifyError(f"unexpected number of regions: expected {len(definition.regions)} but got "
                              f"{len(op.regions)}")
        for i, (region, (args, n_blocks)) in enumerate(zip(op.regions, definition.regions)):
            if n_blocks is not None and len(region.blocks) != n_blocks:
                raise VerifyError(f"expected region {i} to have {n_blocks} block(s) but got {len(region.blocks)}")
            if args is None or not region.blocks:
                continue
            entry = region.blocks[0]
            at = [("see the operation", op.name_span or op.span)]
            if len(entry.arguments) != len(args):
                raise VerifyError(f"expected region {i} to have {len(args)} arguments but got "
                                  f"{len(entry.arguments)}", entry.span, at)
            for arg, constraint in zip(entry.arguments, args):
                problem = v.check(constraint, arg.type)
                if problem is not None:
                    raise VerifyError(problem, entry.span, at)
    return verify_op


# ---- from a parsed IRDL file to dialects ------------------------------------------------
def _constraint(op: Operation, index_of: dict, dialect_name: str, defs: dict) -> Constraint:
    if op.name == "irdl.is":
        return Constraint("is", op.attr("expected"))
    if op.name == "irdl.any":
        return Constraint("any")
    if op.name in ("irdl.any_of", "irdl.all_of"):
        return Constraint(op.name[5:], args=tuple(_indices(op.operands, index_of)))
    ref = op.attr("base_ref") or op.attr("base_type")
    if ref is not None:
        base, on_type = _resolve(ref, dialect_name, defs)
    else:
        text = op.attr("base_name").value
        base, on_type = text[1:], text.startswith("!")
    kind = "base" if op.name == "irdl.base" else "parametric"
    return Constraint(kind, base, on_type, tuple(_indices(op.operands, index_of)))


def _resolve(ref: SymbolRefAttr, dialect_name: str, defs: dict) -> tuple[str, bool]:
    """`@complex` or `@cmath::@complex` -> ("cmath.complex", is a type)."""
    dialect, name = (dialect_name, ref.root) if not ref.nested else (ref.root, ref.nested[-1])
    found = defs.get((dialect, name))
    if found is None:
        raise VerifyError(f"'{ref}' does not refer to a type or attribute definition")
    return f"{dialect}.{name}", found == "irdl.type"


def _summary(op: Operation) -> str:
    """An `attributes {summary = "..."}` of the definition, else the `//` comment lines just above it."""
    given = op.attr("summary")
    if isinstance(given, StringAttr):
        return given.value
    span = op.span
    if span is None:
        return ""
    lines = span.source.text[:span.start].split("\n")[:-1]
    comment = []
    while lines and lines[-1].strip().startswith("//") and not lines[-1].strip().startswith("// -----"):
        comment.insert(0, lines.pop().strip()[2:].strip())
    return " ".join(comment)


def dialects_from(module: Operation) -> list[Dialect]:
    """The dialects the `irdl.dialect` ops of a verified module define."""
    found = []
    dialect_ops = [op for op in module.walk() if op.name == "irdl.dialect"]
    defs = {(d.attr("sym_name").value, o.attr("sym_name").value): o.name
            for d in dialect_ops for o in d.regions[0].blocks[0].ops if o.name in ("irdl.type", "irdl.attribute")}
    for dop in dialect_ops:
        name = dop.attr("sym_name").value
        dialect = Dialect(name, summary=_summary(dop))
        params: dict = {}
        kinds: dict = {"irdl.type": {}, "irdl.attribute": {}}  # name -> (constraints, parameter indices)
        for definition in dop.regions[0].blocks[0].ops:
            if definition.name in kinds:
                body, index_of, constraints = _constraints_of(definition, name, defs)
                declared = next((o for o in body if o.name == "irdl.parameters"), None)
                kinds[definition.name][definition.attr("sym_name").value] = (
                    constraints, _indices(declared.operands, index_of) if declared is not None else [])
            if definition.name != "irdl.operation":
                continue
            body, index_of, constraints = _constraints_of(definition, name, defs)
            by_name = {inner.name: inner for inner in body}
            attrs_op = by_name.get("irdl.attributes")
            attributes = {n.value: index_of[v] for n, v in zip(attrs_op.attr("attributeValueNames").items,
                                                               attrs_op.operands) if v in index_of} if attrs_op else {}
            regions = None
            if "irdl.regions" in by_name:
                regions = []
                for r in by_name["irdl.regions"].operands:
                    rop = r.op
                    args = _indices(rop.operands, index_of) if "constrainedArguments" in rop.attributes else None
                    blocks = rop.attr("numberOfBlocks")
                    regions.append((args, blocks.value if blocks is not None else None))
            op_name = f"{name}.{definition.attr('sym_name').value}"
            spec = Definition(op_name, constraints, _values_of(by_name.get("irdl.operands"), index_of),
                              _values_of(by_name.get("irdl.results"), index_of), attributes, regions)
            # (no declared counts: the verifier hook says what is wrong in IRDL's words)
            dialect.op(op_name, _summary(definition), verify=_op_verifier(spec, params))
        dialect.type_check, dialect.type_check_after_parse = _parameter_checks(name, kinds["irdl.type"], "type")
        dialect.attr_check, dialect.attr_check_after_parse = _parameter_checks(name, kinds["irdl.attribute"],
                                                                               "attribute")
        found.append(dialect)
    return found


def _constraints_of(definition: Operation, dialect_name: str, defs: dict) -> tuple[list, dict, list]:
    """(the ops of a definition's body, constraint value -> index, the constraints)."""
    body = definition.regions[0].blocks[0].ops if definition.regions[0].blocks else []
    index_of: dict[Value, int] = {}
    constraints = []
    for inner in body:
        if inner.name in ("irdl.is", "irdl.any", "irdl.any_of", "irdl.all_of", "irdl.base", "irdl.parametric"):
            index_of[inner.results[0]] = len(constraints)
            constraints.append(_constraint(inner, index_of, dialect_name, defs))
    return body, index_of, constraints


def split_parameters(text: str) -> list[str]:
    """`i32, tensor<2x3xf32>, "a,b"` -> its top-level parts (brackets and strings kept whole)."""
    parts, depth, start, quoted, i = [], 0, 0, False, 0
    while i < len(text):
        c = text[i]
        if quoted:
            i += c == "\\"
            quoted = c != '"'
        elif c == '"':
            quoted = True
        elif c in "<([{":
            depth += 1
        elif c in ">)]}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
        i += 1
    last = text[start:].strip()
    return parts + [last] if last or parts else parts


def _parameter_checks(dialect_name: str, definitions: dict, kind: str):
    """The parse-time checks of a user dialect's types or attributes (MLIR's messages, at the name):
    the name and the number of parameters while parsing, their constraints once it is done. They
    take the text after `!` of a type, the whole `#...` of an attribute."""
    offset = len(dialect_name) + 1

    def split(text: str):
        name, params_text = _name_and_params(text.lstrip("#"))
        return definitions.get(name[offset:]), params_text, offset + text.startswith("#")

    def check(text: str):
        found, params_text, at = split(text)
        if found is None:
            return f"expected dynamic {kind}", at
        given = len(split_parameters(params_text)) if params_text is not None else 0
        if given != len(found[1]):
            return f"expected {len(found[1])} type arguments, but had {given}", at  # (MLIR's words for both)
        return None

    def check_parameters(text: str):
        (constraints, indices), params_text, at = split(text)
        values = parameters(params_text)
        if values is None:
            return f"the parameters of '{text}' do not read", at
        verifier = Verifier(constraints, {})
        for index, value in zip(indices, values):
            problem = verifier.check(index, value)
            if problem is not None:
                return problem, at
        return None
    return check, check_parameters

def load(text: str, filename: str) -> tuple[list[Dialect], list[Diagnostic]]:
    """The dialects an IRDL file defines, or the problems that keep it from loading."""
    result = parse(text, filename)
    problems = list(result.diagnostics)
    if result.ok and result.module is not None:
        problems.extend(verify(result.module))
    if has_errors(problems):
        return [], problems
    try:
        return dialects_from(result.module), problems
    except VerifyError as e:
        return [], problems + [Diagnostic("error", str(e), result.module.span)]


def irdl_files(files=(), directories=()) -> list[Path]:
    """The files of `--irdl-file` and every `*.irdl.mlir` under each `--dialect-path` directory."""
    paths = [Path(f) for f in files]
    for d in directories:
        paths.extend(sorted(Path(d).rglob("*.irdl.mlir")))
    return paths


def registry_with(paths) -> tuple[Registry, list[Diagnostic]]:
    """A registry of the built-in dialects plus those the IRDL files at `paths` define."""
    registry = Registry()
    problems: list[Diagnostic] = []
    for path in paths:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            problems.append(Diagnostic("error", f"cannot read IRDL file '{path}': {e}"))
            continue
        dialects, found = load(text, str(path))
        problems.extend(found)
        for dialect in dialects:
            registry.register(dialect)
    return registry, problems
