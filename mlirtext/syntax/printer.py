"""IR to MLIR text: each op's custom form where its dialect gives one, else generic.

The printer keeps the names the source used for values and block labels, so a
printed function reads like the one the user wrote. Names are unique within
each isolated-from-above op (a function), as MLIR's own printer makes them;
values without a name (created by passes) are numbered `%0, %1, ...`.
"""
from __future__ import annotations

import re
from typing import Optional

from ..dialects.base import ISOLATED, TERMINATOR
from ..dialects.registry import Registry, builtin_registry
from ..ir.attributes import Attribute, format_attr_entry, format_symbol
from ..ir.core import Block, Operation, Region, Value
from ..ir.types import Type, format_result_types
from .gc_pause import gc_paused

_VALID_NAME = re.compile(r"[A-Za-z0-9_$.\-]+\Z")


class Printer:
    def __init__(self, generic: bool = False, aliases=(), print_locations: bool = False,
                 registry: Optional[Registry] = None, comments=None):
        self.generic = generic
        # The formatter's CommentPlacer (syntax/comment_placement.py): told where each op, block
        # label, region and alias is printed, it writes the source's comments there. None: no comments.
        self.comments = comments
        self.registry = registry or builtin_registry()  # whose custom forms the printer uses
        self.lookup = self.registry.lookup
        self.print_locations = print_locations
        self.out: list[str] = []
        self.level = 0
        self.names: dict[int, str] = {}         # id(value) -> "%x" / "%x#1"
        self.block_names: dict[int, str] = {}   # id(block) -> "^bb0"
        self.aliases = list(aliases)            # [(name, value)] in source order
        self.type_alias: dict = {}
        self.attr_alias: dict = {}
        for name, value in self.aliases:
            table = self.type_alias if name.startswith("!") else self.attr_alias
            try:
                table.setdefault(value, name)
            except TypeError:  # unhashable value: no substitution
                pass

    # -- entry points ------------------------------------------------------------
    def print_top(self, op: Operation) -> str:
        """A whole top-level op (a module), with the alias definitions it may use."""
        self.alias_definitions()
        self.assign_names(op)
        self.operation(op)
        return "".join(self.out)

    def alias_definitions(self) -> None:
        """`#name = value` / `!name = value`, one a line, in source order."""
        for i, (name, value) in enumerate(self.aliases):
            if self.comments is not None:
                self.comments.before_alias(self, i)
            self.out.append(f"{name} = {value}")
            if self.comments is not None:
                self.comments.after_alias(self, i)
            self.out.append("\n")

    def assign_names(self, op: Operation) -> None:
        """Name every value and block label in `op` (before printing it, or its body's ops)."""
        self._taken = []        # (used, name, what used[name] was): to free a region's names after it
        # Paused: a tuple per name would have the collector walk the whole IR again and again
        # (printing 16,000 ops took twice the time per op of 4,000); naming frees nothing.
        with gc_paused():
            self._assign_names(op, {}, [0], [0])

    # -- pieces for custom printers ------------------------------------------------
    def write(self, *parts: str) -> None:
        self.out.extend(parts)

    def value(self, v: Value) -> str:
        name = self.names.get(id(v))
        if name is None:  # a value from outside what we print (or a detached one)
            name = f"%<<UNKNOWN {v.type}>>"
        return name

    def location(self, arg) -> str:
        """` loc(...)` after a block argument when locations are printed and it has one, else ''."""
        return f" {arg.location}" if self.print_locations and arg.location is not None else ""

    def values(self, vs) -> str:
        return ", ".join(self.value(v) for v in vs)

    def type(self, t: Type) -> str:
        alias = self.type_alias.get(t) if self.type_alias else None
        return alias if alias is not None else str(t)

    def types(self, ts) -> str:
        return ", ".join(self.type(t) for t in ts)

    def result_types(self, ts) -> str:
        if self.type_alias:
            if len(ts) == 1 and not str(ts[0]).startswith("("):
                return self.type(ts[0])
            return f"({self.types(ts)})"
        return format_result_types(ts)

    def function_type(self, inputs, results) -> str:
        return f"({self.types(inputs)}) -> {self.result_types(results)}"

    def attr(self, a: Attribute) -> str:
        if a is None:  # `op.attr(name)` of an attribute the op lacks: a custom form falls back to generic
            raise KeyError("the op lacks an attribute its custom form prints")
        alias = self.attr_alias.get(a) if self.attr_alias else None
        if alias is not None:
            return alias
        if self.type_alias and hasattr(a, "type") and type(a).__name__ == "TypeAttr":
            return self.type(a.type)
        return str(a)

    def attr_dict(self, attributes: dict, elide=(), keyword: str = "") -> str:
        """` {a = 1, b}` (or ` attributes {...}` with keyword), skipping `elide`; '' if empty."""
        items = [format_attr_entry(k, v) if v.__class__.__name__ == "UnitAttr"
                 else f"{format_attr_entry(k, v).split(' = ', 1)[0]} = {self.attr(v)}"
                 for k, v in attributes.items() if k not in elide]
        if not items:
            return ""
        prefix = f" {keyword}" if keyword else ""
        return f"{prefix} {{{', '.join(items)}}}"

    def op_attr_dict(self, op: Operation, elide=()) -> str:
        return self.attr_dict(op.attributes, elide)

    def symbol(self, name: str) -> str:
        return format_symbol(name)

    def block(self, b: Block) -> str:
        return self.block_names.get(id(b), "^<<UNKNOWN>>")

    def region(self, region: Region, print_entry_args: bool = True, print_empty_block: bool = False,
               print_terminators: bool = True) -> None:
        """`{` newline, the blocks, `}` (the caller writes what comes before and after).

        An empty entry block is only visible through its label, which the
        generic form prints (`{}` alone would be a region without blocks).
        `print_terminators=False` leaves out each block's last op when it is a
        terminator (for ops whose parser adds an implicit terminator back)."""
        self.out.append("{")
        if self.comments is not None:
            self.comments.region_open(self, region)
        self.out.append("\n")
        self.level += 1
        for i, block in enumerate(region.blocks):
            if i > 0 or (print_entry_args and block.arguments) or (print_empty_block and not block.ops):
                self._block_header(block)
            ops = block.ops
            if not print_terminators and ops:
                last = self.lookup(ops[-1].name)
                if last is not None and last.has(TERMINATOR):
                    ops = ops[:-1]
            for op in ops:
                self.operation(op)
        if self.comments is not None:
            self.comments.region_close(self, region)
        self.level -= 1
        self.out.append("  " * self.level + "}")

    # -- operations ---------------------------------------------------------------
    def operation(self, op: Operation) -> None:
        if self.comments is not None:
            self.comments.before_op(self, op)
        self.out.append("  " * self.level)
        if op.results:
            self.out.append(self._result_defs(op) + " = ")
        definition = self.lookup(op.name)
        if not self.generic and definition is not None and definition.print is not None \
                and definition.count_problem(op) is None:
            mark, level = len(self.out), self.level
            placed = self.comments.state() if self.comments is not None else None
            try:
                definition.print(self, op)
            except Exception:  # IR the custom form cannot show (it does not verify): generic form
                del self.out[mark:]
                self.level = level
                if self.comments is not None:  # the comments written inside are written again
                    self.comments.restore(placed)
                self.generic_op(op)
        else:
            self.generic_op(op)
        if self.print_locations and op.location is not None:
            self.out.append(f" {op.location}")
        if self.comments is not None:
            self.comments.after_op(self, op)
        self.out.append("\n")

    def generic_op(self, op: Operation) -> None:
        from ..ir.attributes import escape_string
        w = self.out.append
        w(f"{escape_string(op.name)}({self.values(op.operands)})")
        if op.successors:
            w("[" + ", ".join(self.block(b) for b in op.successors) + "]")
        props = generic_properties(op, self.registry)
        if props:
            w(" <" + self.attr_dict(props).strip() + ">")
        if op.regions:
            w(" (")
            for i, region in enumerate(op.regions):
                if i:
                    w(", ")
                self.region(region, print_empty_block=True)
            w(")")
        w(self.attr_dict(op.attributes, elide=props))
        w(" : " + self.function_type([v.type for v in op.operands], [r.type for r in op.results]))

    # -- names --------------------------------------------------------------------
    def _result_defs(self, op: Operation) -> str:
        parts = []
        results = op.results
        i = 0
        while i < len(results):
            name = self.names[id(results[i])]
            base, _, _ = name.partition("#")
            j = i + 1
            while j < len(results) and self.names[id(results[j])].partition("#")[0] == base:
                j += 1
            parts.append(base if j - i == 1 else f"{base}:{j - i}")
            i = j
        return ", ".join(parts)

    def _block_header(self, block: Block) -> None:
        if self.comments is not None:
            self.comments.before_block(self, block)
        line = "  " * (self.level - 1) + self.block(block)
        if block.arguments:
            line += "(" + ", ".join(f"{self.value(a)}: {self.type(a.type)}{self.location(a)}"
                                    for a in block.arguments) + ")"
        self.out.append(line + ":")
        if self.comments is not None:
            self.comments.after_block(self, block)
        self.out.append("\n")

    def _fresh(self, used: dict, wanted: Optional[str], counter: list, prefix: str = "") -> str:
        """`wanted`, else `wanted_K` with the smallest K free, else PREFIX and the counter. `used` maps
        each name taken to the K to try next after it, so that a thousand `%x` cost linear time."""
        if wanted and _VALID_NAME.match(wanted) and wanted not in used:
            self._taken.append((used, wanted, None))    # (inline: the common case, once a value)
            used[wanted] = 1
            return wanted
        if wanted and _VALID_NAME.match(wanted) and not wanted.isdigit():
            k = used[wanted]
            while f"{wanted}_{k}" in used:
                k += 1
            self._take(used, wanted, k + 1)
            self._take(used, f"{wanted}_{k}", 1)
            return f"{wanted}_{k}"
        while f"{prefix}{counter[0]}" in used:
            counter[0] += 1
        name = f"{prefix}{counter[0]}"
        counter[0] += 1
        self._take(used, name, 1)
        return name

    def _take(self, used: dict, name: str, value: int) -> None:
        self._taken.append((used, name, used.get(name)))
        used[name] = value

    def _free_since(self, mark: int) -> None:
        """Give back the names taken since `mark`: as in MLIR, a region's names are its own, so
        a sibling region (or the ops after it) may use them again (`%arg1` in two loops)."""
        taken = self._taken
        while len(taken) > mark:
            used, name, before = taken.pop()
            if before is None:
                del used[name]
            else:
                used[name] = before

    def _assign_names(self, op: Operation, used: dict, counter: list, arg_counter: list) -> None:
        """Name the results of `op` and everything inside it (new scope at isolated ops)."""
        self._name_results(op, used, counter)
        definition = self.lookup(op.name)
        isolated = definition is not None and definition.has(ISOLATED)
        if isolated:
            used, counter, arg_counter = {}, [0], [0]
        block_used, block_counter = {}, [0]
        for region in op.regions:
            mark = len(self._taken)
            for block in region.blocks:
                wanted = block.label if block.label and _VALID_NAME.match(block.label) else None
                label = self._fresh(block_used, wanted, block_counter, "bb")
                self.block_names[id(block)] = "^" + label
                for arg in block.arguments:
                    self.names[id(arg)] = "%" + self._fresh(used, arg.name, arg_counter, "arg")
                for inner in block.ops:
                    self._assign_names(inner, used, counter, arg_counter)
            if isolated and len(op.regions) == 1:     # its names go with its own `used`
                del self._taken[mark:]
            else:
                self._free_since(mark)

    def _name_results(self, op: Operation, used: dict, counter: list) -> None:
        results = op.results
        if not results:
            return
        i = 0
        while i < len(results):
            wanted = results[i].name
            j = i + 1
            while j < len(results) and results[j].name == wanted and wanted is not None:
                j += 1
            if wanted is None:
                j = len(results) if all(r.name is None for r in results[i:]) else i + 1
            base = self._fresh(used, wanted, counter)
            if j - i == 1:
                self.names[id(results[i])] = "%" + base
            else:
                for k in range(i, j):
                    self.names[id(results[k])] = f"%{base}#{k - i}"
            i = j


def generic_properties(op: Operation, registry: Optional[Registry] = None) -> dict:
    """The attributes the generic form puts in `<{...}>`: an op read in generic form keeps the
    source's split between properties and attributes (a tool without the dialect treats them
    differently), others have their declared inherent attributes there."""
    definition = (registry or builtin_registry()).lookup(op.name)
    if definition is None or _read_generic(op):
        inherent = set(op.property_names)
    else:
        inherent = set(definition.properties)
    return {k: v for k, v in op.attributes.items() if k in inherent}


def _read_generic(op: Operation) -> bool:
    """Was `op` written in the generic form (its name span is the quoted name)?"""
    span = op.name_span
    return span is not None and span.source.text.startswith('"', span.start)


def print_module(op: Operation, generic: bool = False, aliases=(), print_locations: bool = False,
                 registry: Optional[Registry] = None) -> str:
    return Printer(generic, aliases, print_locations, registry).print_top(op)
