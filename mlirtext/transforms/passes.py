"""Passes: small frozen dataclasses whose fields are their options (as xDSL's).

A pass has a `name` (its pipeline spelling), a `summary`, and optionally an
`anchor`: the op it runs on (`func.func`); anchor-free passes run on whatever
op the pass manager hands them. Options in pipeline text (`name{max-num-rewrites=5}`)
are the fields, with `-` for `_`.
"""
from __future__ import annotations

import dataclasses
import importlib
from functools import lru_cache
from typing import ClassVar, Iterable, Optional

from ..ir.core import Operation


class PassFailure(Exception):
    """A pass could not do its job: one diagnostic (`message` at `span`), or several."""

    def __init__(self, message: str, span=None, notes=(), diagnostics=()):
        super().__init__(message)
        from ..diagnostics import Diagnostic
        if diagnostics:
            self.diagnostics = list(diagnostics)
        else:
            first = Diagnostic("error", message, span)
            first.notes.extend(notes)
            self.diagnostics = [first]


@dataclasses.dataclass(frozen=True)
class Pass:
    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    anchor: ClassVar[Optional[str]] = None

    def run(self, op: Operation) -> None:
        raise NotImplementedError

    @classmethod
    def from_options(cls, options: dict[str, str]) -> "Pass":
        fields = {f.name.replace("_", "-"): f for f in dataclasses.fields(cls)}
        values = {}
        for key, text in options.items():
            field = fields.get(key)
            if field is None:
                known = ", ".join(sorted(fields)) or "none"
                raise ValueError(f"pass '{cls.name}' has no option '{key}' (options: {known})")
            values[field.name] = _convert(text, field.type, f"option '{key}' of pass '{cls.name}'")
        return cls(**values)

    def spelling(self) -> str:
        """The pass as pipeline text, options included."""
        opts = [f"{f.name.replace('_', '-')}={_text(getattr(self, f.name))}" for f in dataclasses.fields(self)]
        return self.name + ("{" + " ".join(opts) + "}" if opts else "")


def _convert(text: str, type_name, what: str):
    kind = type_name if isinstance(type_name, str) else getattr(type_name, "__name__", str(type_name))
    if kind == "bool":
        if text in ("true", "1", ""):
            return True
        if text in ("false", "0"):
            return False
        raise ValueError(f"{what} expects true or false, got '{text}'")
    if kind == "int":
        try:
            return int(text)
        except ValueError:
            raise ValueError(f"{what} expects an integer, got '{text}'") from None
    return text


def _text(value) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


#: pass name -> the module of `mlirtext.transforms` that defines it: a `PassRegistry` knows the names
#: without importing the passes (and the dialects they use) until one is asked for.
PASS_MODULES = {
    "canonicalize": "canonicalize", "refine-static-shapes": "canonicalize", "cse": "cse", "dce": "dce",
    "symbol-dce": "symbol_dce", "inline": "inline", "form-dispatch-regions": "dispatch",
    "linalg-fuse-elementwise-ops": "fusion", "linalg-interchange-for-vectors": "interchange",
    "convert-conv-to-channels-last": "channels_last", "fold-dot-general-broadcasts": "dot_broadcasts",
    "fold-static-gathers": "static_gathers",
    "math-polynomial-approximation": "polynomial_approximation",
    "convert-hlo-to-tosa": "conversions.hlo_to_tosa", "convert-tosa-to-linalg": "conversions.tosa_to_linalg",
    "convert-linalg-to-loops": "conversions.linalg_to_loops", "convert-loops-to-llvm": "conversions.loops_to_llvm",
    "hlo-legalize-to-stablehlo": "conversions.mhlo_to_stablehlo", "results-to-out-params": "conversions.out_params",
}


class PassRegistry:
    """Passes by name (MLIR's PassRegistry), which pipelines are read against: a built-in pass's
    module (`PASS_MODULES`) is imported the first time that pass is asked for; further passes
    are registered whole (`PassRegistry(passes=[MyPass])`)."""

    def __init__(self, passes: Iterable[type[Pass]] = (), builtin: bool = True):
        self._modules = dict(PASS_MODULES) if builtin else {}
        self._passes: dict[str, type[Pass]] = {cls.name: cls for cls in passes}

    def register(self, cls: type[Pass]) -> type[Pass]:
        """Add pass `cls` (under `cls.name`); returns it, so that it can decorate the class."""
        self._passes[cls.name] = cls
        return cls

    def get(self, name: str) -> Optional[type[Pass]]:
        """The pass class spelt `name` in pipelines, its module imported now if need be; None if unknown."""
        cls = self._passes.get(name)
        if cls is None and name in self._modules:
            module = importlib.import_module(f"{__package__}.{self._modules[name]}")
            cls = next(v for v in vars(module).values()
                       if isinstance(v, type) and issubclass(v, Pass) and v.name == name)
            self._passes.setdefault(name, cls)
        return cls

    def __contains__(self, name: str) -> bool:
        return name in self._passes or name in self._modules

    def names(self) -> list[str]:
        return sorted(set(self._passes) | set(self._modules))

    def all(self) -> dict[str, type[Pass]]:
        """Every pass by name (each built-in pass's module imported)."""
        return {name: self.get(name) for name in self.names()}


@lru_cache(maxsize=None)
def builtin_passes() -> PassRegistry:
    """The built-in passes: the registry of callers that pass none."""
    return PassRegistry()
