"""The dialect registry passed in (mlirtext/dialects/registry.py): lazy loading of built-in
dialects, per-registry checks, and the defaults that callers passing none get."""
from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from mlirtext.api import parse_and_verify, to_text
from mlirtext.dialects import lookup
from mlirtext.dialects.base import Dialect, VerifyError
from mlirtext.dialects.registry import BUILTIN_MODULES, Registry, builtin_registry, namespace_of
from mlirtext.cli import main
from mlirtext.syntax.parser import builtin_grammar
from mlirtext.transforms.passes import PASS_MODULES, Pass, PassRegistry, builtin_passes

ROOT = Path(__file__).resolve().parent.parent

ARITH_ONLY = """func.func @f(%a: i32, %x: f32) -> (i32, f32) {
  %c = arith.constant 3 : i32
  %s = arith.addi %a, %c : i32
  %y = arith.mulf %x, %x : f32
  return %s, %y : i32, f32
}
"""


def test_opt_on_a_func_arith_file_imports_no_other_dialect(tmp_path):
    """`mlirtext opt`: a dialect's module is imported the first time its namespace is met, not at
    start-up, and a pass module (with the dialects it uses) only when a pipeline names it (once
    the parser's tables are cached: building them imports every dialect)."""
    builtin_grammar()
    block = ("import sys\n"
             "from mlirtext.cli import main\n"
             "assert main(['opt', sys.argv[1], '-o', sys.argv[2]]) == 0\n"
             "loaded = sorted(m for m in sys.modules if m.startswith('mlirtext.dialects.'))\n"
             "print(' '.join(loaded))\n")
    (tmp_path / "in.mlir").write_text(ARITH_ONLY)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    run = subprocess.run([sys.executable, "-c", block, str(tmp_path / "in.mlir"), str(tmp_path / "out.mlir")],
                         env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    loaded = set(run.stdout.split())
    assert {"mlirtext.dialects.arith", "mlirtext.dialects.func"} <= loaded
    for heavy in ("stablehlo", "mhlo", "chlo", "hlo", "hlo_attrs", "tosa", "llvm", "linalg", "memref", "scf"):
        assert f"mlirtext.dialects.{heavy}" not in loaded


def test_a_namespace_is_loaded_on_first_use():
    registry = Registry()
    assert registry.knows("tosa") and registry.knows("quant") and not registry.knows("foo")
    assert registry.lookup("tosa.add") is not None
    assert registry.lookup("tosa.no_such_op") is None
    assert registry.lookup("foo.bar") is None
    assert [d.name for d in registry.dialects()] == list(BUILTIN_MODULES)


def test_a_registry_without_a_dialect_does_not_check_its_ops():
    """tosa's rules apply only where the registry has tosa: elsewhere its ops are unknown."""
    text = ('func.func @f(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<2xf32> {\n'
            '  %0 = "tosa.add"(%a, %b) : (tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>\n'
            '  return %0 : tensor<2xf32>\n}\n')
    assert not parse_and_verify(text, "in.mlir").ok
    without = Registry(builtin=[ns for ns in BUILTIN_MODULES if ns != "tosa"])
    assert parse_and_verify(text, "in.mlir", registry=without).ok


def test_a_registered_dialect_verifies_and_prints_its_ops():
    def verify_answer(op):
        if op.attributes.get("value") is None:
            raise VerifyError("requires attribute 'value'")
    test = Dialect("test")
    test.op("test.answer", summary="The answer.", verify=verify_answer, operands=0, results=1)
    registry = Registry(dialects=[test])
    bad = parse_and_verify('%0 = "test.answer"() : () -> i32\n', "in.mlir", registry=registry)
    assert [d.message for d in bad.diagnostics] == ["'test.answer' op requires attribute 'value'"]
    good = parse_and_verify('%0 = "test.answer"() {value = 42 : i32} : () -> i32\n', "in.mlir",
                            registry=registry)
    assert good.ok
    assert '"test.answer"() {value = 42 : i32} : () -> i32' in to_text(good, registry=registry)
    assert lookup("test.answer") is None  # the built-in registry is untouched


def test_dialect_checks_are_fields_of_the_dialect():
    """The parse-time checks of dialect attributes and types come from the registry's dialects."""
    registry = builtin_registry()
    assert registry.type_check("quant.uniform<i8:f32, 1.0>") is not None
    assert registry.attr_check("#stablehlo.dot<lhs_batching_dimensions = [0]>") is not None
    assert registry.discardable_check("mhlo.result_alias") is not None
    assert registry.discardable_check("foo.bar") is None
    assert namespace_of("#stablehlo.dot<x>") == "stablehlo" and namespace_of("!quant.uniform<x>") == "quant"
    bad_type = 'func.func private @f(tensor<2x!quant.uniform<i8:f32:-1, {1.0, 2.0}>>)\n'
    [d] = parse_and_verify(bad_type, "in.mlir").diagnostics
    assert d.message == "illegal quantized dimension: -1"


def test_dialect_types_are_made_by_the_registrys_dialects():
    """A dialect's type classes come from its `type_parser`, asked for through the parser's
    registry: where the registry has no llvm dialect, `!llvm.array<4xi32>` stays verbatim text."""
    from mlirtext.dialects.llvm_types import LLVMArrayType

    text = "func.func private @f(!llvm.array<4xi32>, tensor<2x!quant.uniform<i8:f32, 1.0>>)\n"
    with_llvm = parse_and_verify(text, "in.mlir")
    fn = with_llvm.module.regions[0].blocks[0].ops[0]
    array, quantized = fn.attributes["function_type"].type.inputs
    assert isinstance(array, LLVMArrayType) and array.text == "llvm.array<4 x i32>"
    assert quantized.element.text == "quant.uniform<i8:f32, 1.000000e+00>"  # quant's spelling
    assert builtin_registry().type_parser("llvm.ptr") is not None
    without = Registry(builtin=[ns for ns in BUILTIN_MODULES if ns not in ("llvm", "quant")])
    assert without.type_parser("llvm.ptr") is None
    fn = parse_and_verify(text, "in.mlir", registry=without).module.regions[0].blocks[0].ops[0]
    array, quantized = fn.attributes["function_type"].type.inputs
    assert type(array).__name__ == "DialectType" and array.text == "llvm.array<4xi32>"
    assert quantized.element.text == "quant.uniform<i8:f32, 1.0>"


def test_the_pass_manifest_names_every_pass_where_it_is_defined():
    ours = {name: cls for name, cls in builtin_passes().all().items() if cls.__module__.startswith("mlirtext.")}
    assert set(PASS_MODULES) == set(ours)  # (tests may register passes of their own)
    for name, cls in ours.items():
        assert cls.name == name and cls.__module__ == f"mlirtext.transforms.{PASS_MODULES[name]}"
    import importlib
    import inspect
    defined = {cls.name for module in set(PASS_MODULES.values())
               for _, cls in inspect.getmembers(importlib.import_module(f"mlirtext.transforms.{module}"), inspect.isclass)
               if issubclass(cls, Pass) and cls.name and cls.__module__ == f"mlirtext.transforms.{module}"}
    assert defined <= set(PASS_MODULES)  # every pass those modules define has a name in the manifest


def test_a_pipeline_is_read_against_the_pass_registry_passed_in():
    """Passes are found through the registry passed in (the built-in one by default), and only
    the modules of the passes a pipeline names are imported."""
    import dataclasses

    from mlirtext.transforms.pipeline import PipelineError, parse_pipeline

    @dataclasses.dataclass(frozen=True)
    class Shout(Pass):
        name = "shout"
        summary = "A test pass."
        loud: bool = False

        def run(self, op) -> None:
            pass

    mine = PassRegistry(passes=[Shout])
    [item] = parse_pipeline("shout{loud=true}", mine)
    assert item == Shout(loud=True) and "cse" in mine and mine.get("cse").__name__ == "CSE"
    with pytest.raises(PipelineError):
        parse_pipeline("shout")  # not a built-in pass
    alone = PassRegistry(builtin=False)
    assert alone.register(Shout) is Shout
    assert alone.names() == ["shout"] and alone.get("cse") is None
    block = ("import sys\n"
             "from mlirtext.transforms.pipeline import parse_pipeline\n"
             "parse_pipeline('builtin.module(func.func(cse))')\n"
             "print(' '.join(sorted(m for m in sys.modules if m.startswith('mlirtext.transforms.'))))\n")
    run = subprocess.run([sys.executable, "-c", block], env=dict(os.environ, PYTHONPATH=str(ROOT)),
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    loaded = set(run.stdout.split())
    assert "mlirtext.transforms.cse" in loaded and "mlirtext.transforms.canonicalize" not in loaded


def test_pass_flags_still_run_in_order_and_show_in_help(tmp_path, capsys):
    path = tmp_path / "in.mlir"
    path.write_text(ARITH_ONLY)
    assert main(["opt", str(path), "--canonicalize", "--pass-pipeline=cse", "--dce", "--print-ir-after-all",
                 "-o", str(tmp_path / "out.mlir")]) == 0
    dumps = [line for line in capsys.readouterr().err.splitlines() if "IR Dump After" in line]
    assert [line.split("(")[1].split(")")[0] for line in dumps] == ["canonicalize", "cse", "dce"]
    with pytest.raises(SystemExit):
        main(["opt", "--help"])
    assert "--linalg-fuse-elementwise-ops" in capsys.readouterr().out


def test_threads_sharing_a_registry_all_find_the_dialects():
    """The editor's analysis threads share one registry: none may see a dialect that is being
    loaded as unknown."""
    for _ in range(20):
        registry = Registry()
        names = ["tosa.add", "stablehlo.add", "linalg.generic", "memref.load", "scf.for", "mhlo.add"] * 4
        with ThreadPoolExecutor(8) as pool:
            assert all(d is not None for d in pool.map(registry.lookup, names))
