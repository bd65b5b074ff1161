"""Names of an op's operands, results and attributes, as its dialect declares them.

MLIR's ODS gives every operand a name (`$lhs`, `$indices`) and generates an
accessor for it (`getLhs()`); here a dialect declares an `OpSignature` for the
op and `Operation.operand("lhs")`, `Operation.operands_named("indices")`,
`Operation.result_named("overflow")` and `Operation.attr("predicate")` read it.
The signature is part of the op's declaration in its dialect; the dialect
registry answers `signature(op name)` through the hook below, so that the IR can
answer by name without importing the dialects.

A group marked variadic (`indices*`) or optional (`dest?`) takes the operands
the fixed ones leave; with more than one such group the op carries MLIR's
`operandSegmentSizes` (`resultSegmentSizes`) attribute, one count per group.
"""
from __future__ import annotations

from typing import Optional


class Group:
    """One named operand or result: a single value, or a variadic/optional group of them."""

    __slots__ = ("name", "variadic", "optional")

    def __init__(self, name: str, variadic: bool = False, optional: bool = False):
        self.name = name
        self.variadic = variadic   # `name*`: any number
        self.optional = optional   # `name?`: zero or one

    @staticmethod
    def parse(spec: str) -> "Group":
        if spec.endswith("*"):
            return Group(spec[:-1], variadic=True)
        if spec.endswith("?"):
            return Group(spec[:-1], optional=True)
        return Group(spec)

    @property
    def single(self) -> bool:
        return not (self.variadic or self.optional)


class OpSignature:
    """The named operands, results and attributes of one op. (Plain classes: a dataclass
    costs half a millisecond of start-up each.)"""

    __slots__ = ("operands", "results", "attributes", "_places")

    def __init__(self, operands: tuple = (), results: tuple = (), attributes: tuple = ()):
        self.operands = operands      # of Group
        self.results = results        # of Group
        self.attributes = attributes  # names of the inherent attributes the op reads by name
        self._places = None           # see bounds()

    def bounds(self, kind: str, name: str) -> Optional[slice]:
        """Where group `name` of `kind` ("operands" or "results") sits when that does not depend
        on segment sizes: a slice from the start or, after the one variadic or optional group,
        from the end; None where the segment sizes decide. (Made on first use: start-up pays
        nothing. `Operation.operand` then costs a dict lookup and a slice, not `slice_of`.)"""
        places = self._places
        if places is None:
            places = self._places = {}
            for k in ("operands", "results"):
                groups = getattr(self, k)
                flexible = [i for i, group in enumerate(groups) if not group.single]
                for i, group in enumerate(groups):
                    if flexible and i >= flexible[0] and len(flexible) > 1:
                        break   # behind two variadic groups: the segment sizes say where
                    if flexible and i > flexible[0]:   # behind the one variadic group: from the end
                        j = i - len(groups)
                        places[k, group.name] = slice(j, j + 1 if j + 1 < 0 else None)
                    elif flexible and i == flexible[0]:
                        after = len(groups) - i - 1
                        places[k, group.name] = slice(i, -after if after else None)
                    else:
                        places[k, group.name] = slice(i, i + 1)
        return places.get((kind, name))

    @staticmethod
    def of(operands=(), results=(), attributes=()) -> "OpSignature":
        """From specs like ("memref", "indices*")."""
        return OpSignature(tuple(Group.parse(s) for s in operands), tuple(Group.parse(s) for s in results),
                           tuple(attributes))

    def slice_of(self, groups: tuple, name: str, sizes) -> slice:
        """Where group `name` sits behind the first of two or more variadic or optional groups
        (`bounds` answers for the others): by `sizes`, the segment-sizes attribute's counts."""
        if all(group.name != name for group in groups):
            raise KeyError(f"no operand or result named '{name}'")
        if sizes is None or len(sizes) != len(groups):
            raise KeyError(f"'{name}': the op needs a segment-sizes attribute with {len(groups)} counts")
        start = 0
        for group, n in zip(groups, sizes):
            if group.name == name:
                return slice(start, start + n)
            start += n


#: [fn(op name) -> its OpSignature or None]: where `signature` asks. The names are a field of
#: each op's declaration (`OpDef.names`), which a dialect registry holds; dialects/registry.py
#: installs its lookup here, so that the IR answers by name without importing the dialects (they
#: load lazily, and a pass may read the names of ops it built itself).
RESOLVER: list = []


def signature(op_name: str) -> Optional[OpSignature]:
    return RESOLVER[0](op_name) if RESOLVER else None
