"""The dialects one parse, print or verification knows: a `Registry` passed in.

Like MLIR's DialectRegistry + MLIRContext (or xDSL's Context): a registry maps a
dialect namespace (`arith`) to its `Dialect`. Built-in dialects are named here by
module and imported the first time something asks for their namespace, so a
func/arith file never imports the HLO, TOSA, LLVM or linalg modules. Dialects
made at run time (IRDL files, `irdl.py`) are registered whole with `register`.

An op, type or attribute whose namespace no registry entry names belongs to an
*unregistered* dialect: the parser and verifier treat it structurally (see
`syntax/parser.py` for MLIR's `--allow-unregistered-dialect`).
"""
from __future__ import annotations

import importlib
import itertools
import threading
import weakref
from functools import lru_cache
from typing import Callable, Iterable, Optional

from ..ir.signatures import RESOLVER, OpSignature
from .base import Dialect, OpDef

#: namespace -> module of `mlirtext.dialects` that defines it (its `dialect`), in the order the
#: grammar composes them. `quant` has types only.
BUILTIN_MODULES: dict[str, str] = {
    "builtin": "builtin", "func": "func", "arith": "arith", "math": "math", "tensor": "tensor",
    "stablehlo": "stablehlo", "mhlo": "mhlo", "chlo": "chlo", "tosa": "tosa", "linalg": "linalg",
    "llvm": "llvm", "scf": "scf", "memref": "memref", "cf": "cf", "check": "check", "util": "util",
    "flow": "flow", "interpreter": "interpreter", "transform": "transform", "quant": "quant", "irdl": "irdl",
    "bufferization": "bufferization",
}


_SERIALS = itertools.count(1)


def namespace_of(name: str) -> str:
    """`arith` of `arith.addi`, of `#arith.fastmath<...>` and of `!quant.uniform<...>`."""
    return name.lstrip("#!").split("<", 1)[0].split(".", 1)[0]


class Registry:
    """Dialects by namespace: built-in ones loaded on first use, others registered whole."""

    def __init__(self, builtin: Iterable[str] = BUILTIN_MODULES, dialects: Iterable[Dialect] = ()):
        """`builtin`: the namespaces of `BUILTIN_MODULES` this registry offers (all by default);
        `dialects`: further dialects, registered now."""
        self.serial = next(_SERIALS)  # tells registries apart in caches (a new one per change)
        self._modules = {ns: BUILTIN_MODULES[ns] for ns in builtin}
        self._order = list(self._modules)  # namespaces in the order they were offered
        self._loaded: dict[str, Dialect] = {}
        self._ops: dict[str, Optional[OpDef]] = {}
        self._discardable: dict[str, Callable] = {}
        self._lock = threading.RLock()  # held while a built-in dialect is imported
        for dialect in dialects:
            self.register(dialect)

    # ---- what it holds -------------------------------------------------------------------
    def register(self, dialect: Dialect) -> None:
        """Add (or replace) `dialect` under its namespace."""
        self._modules.pop(dialect.name, None)
        if dialect.name not in self._order:
            self._order.append(dialect.name)
        self._loaded[dialect.name] = dialect
        self._ops = {k: v for k, v in self._ops.items() if namespace_of(k) != dialect.name}
        self._discardable.update(dialect.discardable_attrs)
        self.serial = next(_SERIALS)
        _EXTENDED.add(self)

    def knows(self, namespace: str) -> bool:
        """Whether `namespace` is a registered dialect (without loading it)."""
        return namespace in self._loaded or namespace in self._modules

    def dialect(self, namespace: str) -> Optional[Dialect]:
        """The dialect of `namespace`, imported now if it is a built-in not loaded yet. (The
        editor's threads share a registry: a dialect is in `_loaded` before it leaves `_modules`,
        so a reader without the lock never finds it in neither.)"""
        found = self._loaded.get(namespace)
        if found is None and namespace in self._modules:
            with self._lock:
                found = self._loaded.get(namespace)
                if found is None and namespace in self._modules:
                    module = importlib.import_module(f"{__package__}.{self._modules[namespace]}")
                    found = self._loaded[namespace] = module.dialect
                    self._discardable.update(found.discardable_attrs)
                    del self._modules[namespace]
        return found

    def dialects(self) -> tuple[Dialect, ...]:
        """Every dialect, all loaded (completion, grammar building), in the order offered."""
        return tuple(self.dialect(namespace) for namespace in self._order)

    def namespaces(self) -> tuple[str, ...]:
        return tuple(self._order)

    # ---- what parsing, printing and verifying ask ----------------------------------------
    def lookup(self, name: str) -> Optional[OpDef]:
        """The declaration of op `name`, or None for an op of no registered dialect or one its
        dialect does not declare."""
        try:
            return self._ops[name]
        except KeyError:
            pass
        dialect = self.dialect(name.split(".", 1)[0])
        found = self._ops[name] = dialect.ops.get(name) if dialect is not None else None
        return found

    def signature(self, op_name: str) -> Optional[OpSignature]:
        """The names of op `op_name`'s operands, results and attributes, or None."""
        try:  # the lookup's own cache, read here: printers and passes ask once per op
            definition = self._ops[op_name]
        except KeyError:
            definition = self.lookup(op_name)
        return definition.names if definition is not None else None

    def attr_check(self, text: str) -> Optional[Callable]:
        """The parse-time check of dialect attribute text `#d.x<...>`, or None."""
        dialect = self.dialect(namespace_of(text))
        return dialect.attr_check if dialect is not None else None

    def attr_canonical(self, text: str) -> Optional[Callable]:
        """fn(text) -> the spelling MLIR prints for dialect attribute `text`, or None."""
        dialect = self.dialect(namespace_of(text))
        return dialect.attr_canonical if dialect is not None else None

    def type_check(self, text: str) -> Optional[Callable]:
        """The parse-time check of dialect type text `d.t<...>` (after the `!`), or None."""
        dialect = self.dialect(namespace_of(text))
        return dialect.type_check if dialect is not None else None

    def type_parser(self, text: str) -> Optional[Callable]:
        """fn(text) -> Type or None: the type parser of dialect type text `d.t<...>`'s dialect, or None."""
        dialect = self.dialect(namespace_of(text))
        return dialect.type_parser if dialect is not None else None

    def attr_check_after_parse(self, text: str) -> Optional[Callable]:
        """The check of dialect attribute text `#d.x<...>` that runs once the parse is done, or None."""
        dialect = self.dialect(namespace_of(text))
        return dialect.attr_check_after_parse if dialect is not None else None

    def type_check_after_parse(self, text: str) -> Optional[Callable]:
        """The check of dialect type text `d.t<...>` that runs once the parse is done, or None."""
        dialect = self.dialect(namespace_of(text))
        return dialect.type_check_after_parse if dialect is not None else None

    def encoding_check(self, namespace: Optional[str]) -> Optional[Callable]:
        """The check of a ranked tensor's encoding attribute of dialect `namespace`, or None."""
        dialect = self.dialect(namespace) if namespace else None
        return dialect.encoding_check if dialect is not None else None

    def discardable_check(self, key: str) -> Optional[Callable]:
        """The check of discardable attribute `key` (`mhlo.result_alias`), or None."""
        if "." not in key:
            return None
        check = self._discardable.get(key)
        if check is None and key.split(".", 1)[0] in self._modules:
            self.dialect(key.split(".", 1)[0])
            check = self._discardable.get(key)
        return check


@lru_cache(maxsize=None)
def builtin_registry() -> Registry:
    """The process's registry of every built-in dialect, for callers that pass none."""
    return Registry()


#: The registries that dialects were registered into (IRDL files, tests), whose op names
#: `op.operand(name)` finds too; weak, so a dropped registry leaves.
_EXTENDED: "weakref.WeakSet[Registry]" = weakref.WeakSet()


def _names_from(builtin: Registry) -> Callable[[str], Optional[OpSignature]]:
    """fn(op name) -> the names of the op as `builtin` declares them, else as a registry with
    dialects registered at run time does: what the IR asks through `ir.signatures.RESOLVER`
    (a closure over the registry: `op.operand(name)` pays one call per op it reads)."""
    def signature_of(op_name: str) -> Optional[OpSignature]:
        found = builtin.signature(op_name)
        if found is None and _EXTENDED:
            for registry in tuple(_EXTENDED):
                found = registry.signature(op_name)
                if found is not None:
                    break
        return found
    return signature_of


RESOLVER[:] = [_names_from(builtin_registry())]
