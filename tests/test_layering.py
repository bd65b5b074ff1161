"""The house's layers, read off the import graph of `mlirtext/` with `ast`.

Every import counts, the ones inside functions too (a lazy import is still a
dependency). The test fails on:

- an import of `mlirtext.cli` from any other package (the command line sits on top);
- an import from a higher layer into a lower one (the order is `LAYERS`, bottom up);
- an import of another module's underscore name (`from .x import _y`, `x._y`);
- an import cycle between modules of different packages.

Violations that an in-flight change removes are listed in `KNOWN_VIOLATIONS` with
the reason; a listed one that no longer occurs fails too, so the list only shrinks.

Run as a script (`python tests/test_layering.py`) to print every violation.
"""
from __future__ import annotations

import ast
import os
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "mlirtext"

#: Bottom up. A module may import from its own layer and the ones below it.
LAYERS = ("ir", "syntax helpers", "dialects", "syntax", "verifier", "interpreter", "transforms",
          "targets", "vm", "compiler", "front ends", "interfaces")

#: Module (or package) name -> layer; the longest matching prefix wins.
LAYER_OF = {
    "mlirtext": "ir",  # the package's __init__: a docstring and the version, nothing to depend on
    "mlirtext.ir": "ir",
    # Diagnostics are messages on spans of the source: the IR's vocabulary for problems
    # (ir/resources.py reports through them), needed by every layer above.
    "mlirtext.diagnostics": "ir",
    # The memory limit every allocation asks first (ir/arrays.py when it makes an array): stdlib only.
    "mlirtext.limits": "ir",
    # What dialect grammar callbacks build IR with, free of lark and of the dialect set:
    "mlirtext.syntax.literals": "syntax helpers",  # quoted strings, numbers, symbol references
    "mlirtext.syntax.strings": "syntax helpers",  # MLIR string escapes
    "mlirtext.syntax.lexer": "syntax helpers",  # the token a callback receives (`Tok`)
    "mlirtext.syntax.context": "syntax helpers",  # the parse state a callback builds IR in
    "mlirtext.syntax.grammar_files": "syntax helpers",  # where the .lark files are (llvm reads its own)
    "mlirtext.dialects": "dialects",
    # The rest of syntax/ is the parser and printer, over the dialect set:
    "mlirtext.syntax": "syntax",  # the package: a docstring
    "mlirtext.syntax.grammar": "syntax",  # composes the dialects' grammars, the LALR tables and their cache
    "mlirtext.syntax.callbacks": "syntax",  # Lark's tree shaping compiled per rule (from plain rule shapes)
    "mlirtext.syntax.lark_tables": "syntax",  # Lark's parser made into our tables (lark; on a cache miss only)
    "mlirtext.syntax.lalr": "syntax",  # the LALR driver: runs the tables, recovers from errors
    "mlirtext.syntax.gc_pause": "syntax",  # the collector paused while the parser builds IR
    "mlirtext.syntax.core_rules": "syntax",  # core grammar callbacks: check dialect types and attributes
    "mlirtext.syntax.parser": "syntax",  # text to IR with every dialect's rules
    "mlirtext.syntax.printer": "syntax",  # IR to text with every dialect's printers
    "mlirtext.syntax.comments": "syntax",  # where a text's comments are (stdlib only; used by the formatter)
    "mlirtext.syntax.comment_placement": "syntax",  # the source's comments written where the printer is
    "mlirtext.syntax.wrapping": "syntax",  # long printed lines wrapped at a width (stdlib only)
    "mlirtext.syntax.formatter": "syntax",  # `mlirtext format`: parse, print with comments, wrap, check
    "mlirtext.syntax.bytecode": "syntax",  # MLIR bytecode read as generic-form text (op property names)
    "mlirtext.syntax.bytecode_properties": "syntax",  # which inherent attributes bytecode holds as required
    "mlirtext.syntax.bytecode_encoding": "syntax",  # bytecode primitives: varints, sections, errors
    "mlirtext.syntax.bytecode_builtin": "syntax",  # the builtin dialect's attribute/type encodings
    "mlirtext.syntax.bytecode_ods": "syntax",  # ODS inherent attributes per op (generated data)
    "mlirtext.syntax.bytecode_stablehlo": "syntax",  # stablehlo's and chlo's own attribute/type encodings
    "mlirtext.syntax.bytecode_quant": "syntax",  # the quant dialect's own type encodings
    "mlirtext.syntax.bytecode_writer": "syntax",  # IR to MLIR bytecode (version 4, attributes as text)
    "mlirtext.verifier": "verifier",
    "mlirtext.api": "verifier",  # parse + verify + print: the entry point over the three
    "mlirtext.verify_diagnostics": "verifier",
    "mlirtext.irdl_dialects": "verifier",  # IRDL files -> dialects: parses and verifies them  # --verify-diagnostics: matches diagnostics to annotations
    "mlirtext.interpreter": "interpreter",
    # Text <-> runtime values (iree-run-module's conventions): used by the interpreter's callers.
    "mlirtext.values": "interpreter",
    "mlirtext.checking": "interpreter",  # `check` test functions run on the interpreter
    "mlirtext.transforms": "transforms",
    "mlirtext.targets": "targets",
    "mlirtext.vm": "vm",
    # The Ray connection (stdlib, and ray imported when a sweep or remote run starts): used by the
    # remote runs of `runtime` and by the sweeps.
    "mlirtext.cluster": "vm",
    "mlirtext.runtime": "compiler",
    "mlirtext.remote": "compiler",  # runtime's modules run on a device of a Ray cluster  # the iree.runtime-like API: compiles a module, then runs it on the vm
    "mlirtext.compiler": "compiler",
    "mlirtext.importers": "front ends",
    "mlirtext.bench": "front ends",
    "mlirtext.analysis": "front ends",
    "mlirtext.debugging": "front ends",
    "mlirtext.sweeps": "front ends",  # `mlirtext sweep`: suites over the importers, compiler and interpreter  # bisect, injected faults, repros: over the lowering and the interpreter
    "mlirtext.cli": "interfaces",
    "mlirtext.__main__": "interfaces",  # `python -m mlirtext`: the command line
}

#: The modules that may import `mlirtext.cli`: the package itself and `python -m mlirtext`.
CLI_DOORS = ("mlirtext.cli", "mlirtext.__main__")

#: (kind, importer, what) -> why it is allowed for now, for a violation that a change in
#: flight removes; the test fails when one no longer occurs, so the list only shrinks.
KNOWN_VIOLATIONS: dict = {}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer(module: str) -> str:
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        found = LAYER_OF.get(".".join(parts[:n]))
        if found is not None:
            return found
    raise KeyError(f"{module} has no layer: add it to LAYER_OF")


def package(module: str) -> str:
    """The package a module belongs to: `mlirtext.x` for everything below mlirtext/x/."""
    return ".".join(module.split(".")[:2])


@lru_cache(maxsize=None)
def sources() -> dict:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _resolve(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    if node.level == 0:
        return node.module
    base = module.split(".")
    base = base[:len(base) - node.level + (1 if is_package else 0)]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(module: str) -> tuple:
    """(edges, private uses) of one module: edges are (imported module, line); private uses
    are (module, name, line) for each underscore name taken from another module."""
    path = sources()[module]
    tree = ast.parse(path.read_text(), str(path))
    modules = sources()
    edges, private, aliases = [], [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("mlirtext"):
                    edges.append((a.name, node.lineno))
                    aliases[a.asname or a.name.split(".")[0]] = a.asname and a.name or "mlirtext"
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(module, node, path.name == "__init__.py")
            if not base.startswith("mlirtext"):
                continue
            for a in node.names:
                sub = f"{base}.{a.name}"
                if sub in modules:
                    edges.append((sub, node.lineno))
                    aliases[a.asname or a.name] = sub
                else:
                    edges.append((base, node.lineno))
                    if _is_private(a.name):
                        private.append((base, a.name, node.lineno))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _is_private(node.attr):
            target = _dotted(node.value, aliases)
            if target is not None and target != module:
                private.append((target, node.attr, node.lineno))
    return edges, private


def _dotted(node, aliases: dict):
    """The module an expression like `api` or `mlirtext.vm.vm` names, if it names one."""
    if isinstance(node, ast.Name):
        return aliases.get(node.id)
    if isinstance(node, ast.Attribute):
        outer = _dotted(node.value, aliases)
        inner = f"{outer}.{node.attr}" if outer else None
        return inner if inner in sources() else None
    return None


@lru_cache(maxsize=None)
def graph() -> tuple:
    """(edges, private uses) of the whole package: module -> {imported module: first line}."""
    edges, private = {}, []
    for module in sources():
        found, names = imports_of(module)
        edges[module] = {}
        for target, line in found:
            if target != module and target in sources():
                edges[module].setdefault(target, line)
        private += [(module, m, n, line) for m, n, line in names]
    return edges, private


def _cycles(edges: dict) -> list:
    """Strongly connected components (Tarjan) with modules of more than one package."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    sys.setrecursionlimit(max(10000, sys.getrecursionlimit()))

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len({package(m) for m in component}) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def violations() -> dict:
    """(kind, importer, what) -> a readable line, for every violation in the package."""
    edges, private = graph()
    found = {}
    rank = {name: i for i, name in enumerate(LAYERS)}
    for module, targets in edges.items():
        for target, line in targets.items():
            where = f"{sources()[module].relative_to(ROOT)}:{line}"
            if package(target) == "mlirtext.cli" and package(module) not in CLI_DOORS:
                found[("cli", module, target)] = f"{where}: {module} imports the command line ({target})"
            elif rank[layer(target)] > rank[layer(module)]:
                found[("layer", module, target)] = (f"{where}: {module} ({layer(module)}) imports "
                                                    f"{target} ({layer(target)}), a higher layer")
    for module, target, name, line in private:
        where = f"{sources()[module].relative_to(ROOT)}:{line}"
        found[("private", module, f"{target}.{name}")] = f"{where}: {module} uses {target}'s private {name}"
    for component in _cycles(edges):
        key = ("cycle", component[0], " ".join(component))
        found[key] = f"an import cycle across packages, through: {', '.join(component)}"
    return found


def test_every_module_has_a_layer():
    for module in sources():
        assert layer(module) in LAYERS
    # syntax/ spans two layers: each of its modules is placed on purpose
    unplaced = [m for m in sources() if m.startswith("mlirtext.syntax.") and m not in LAYER_OF]
    assert not unplaced, f"place these in LAYER_OF (syntax helper or parser/printer): {unplaced}"


def test_no_violations_but_the_known_ones():
    found = violations()
    new = [line for key, line in sorted(found.items()) if key not in KNOWN_VIOLATIONS]
    assert not new, f"{len(new)} layering violations:\n" + "\n".join(new)


def test_dialects_import_without_lark():
    """The dialects (op declarations, their callbacks and printers) need no parser generator:
    tools that only build or inspect IR load them without lark."""
    block = ("import sys\n"
             "class NoLark:\n"
             "    def find_spec(self, name, path=None, target=None):\n"
             "        if name.split('.')[0] == 'lark':\n"
             "            raise ImportError('lark is not installed')\n"
             "sys.meta_path.insert(0, NoLark())\n"
             "import mlirtext.dialects\n"
             "assert mlirtext.dialects.lookup('arith.addi') is not None\n"
             "assert 'lark' not in sys.modules\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    run = subprocess.run([sys.executable, "-c", block], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr


def test_known_violations_still_occur():
    gone = [key for key in KNOWN_VIOLATIONS if key not in violations()]
    assert not gone, f"fixed, so drop them from KNOWN_VIOLATIONS: {gone}"


if __name__ == "__main__":
    for key, line in sorted(violations().items()):
        print(("KNOWN " if key in KNOWN_VIOLATIONS else "") + line)
