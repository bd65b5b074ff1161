"""The run time never links the compiler (as IREE's runtime never links its compiler), and the
targets sit below both: what the code imports, read with `ast`, and what a process that loads and
runs a module file has imported."""
import ast
import json
import pathlib
import subprocess
import sys

import numpy as np

from mlirtext.compiler.driver import compile_source
from mlirtext.compiler.module_writer import in_memory, pack
from mlirtext.vm.vm import LoadedModule

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "mlirtext"

MLP = """
func.func @mlp(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = tensor.empty() : tensor<2x4xf32>
  %zero = arith.constant 0.0 : f32
  %1 = linalg.fill ins(%zero : f32) outs(%0 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %2 = linalg.matmul ins(%x, %w : tensor<2x3xf32>, tensor<3x4xf32>) outs(%1 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %bias = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %3 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>,
                                        affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%2, %bias : tensor<2x4xf32>, tensor<4xf32>) outs(%0 : tensor<2x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<2x4xf32>
  return %3 : tensor<2x4xf32>
}
"""


def _imports(path: pathlib.Path) -> set[str]:
    """The modules `path` imports, anywhere in it (inside functions too), as absolute names."""
    package = list(path.relative_to(PACKAGE.parent).parent.parts)   # (an __init__.py's is its own)
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            name = ".".join(base + ([node.module] if node.module else []))
            found.add(name)
            found |= {f"{name}.{alias.name}" for alias in node.names}
    return found


def _modules(folder: str):
    for path in sorted((PACKAGE / folder).rglob("*.py")):
        yield ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts), path


def _inside(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def test_the_vm_never_imports_the_compiler():
    offenders = {module: sorted(n for n in _imports(path) if _inside(n, "mlirtext.compiler"))
                 for module, path in _modules("vm")}
    assert not {m: names for m, names in offenders.items() if names}


def test_targets_import_neither_the_vm_nor_the_compiler():
    offenders = {module: sorted(n for n in _imports(path) if _inside(n, "mlirtext.vm") or
                                _inside(n, "mlirtext.compiler"))
                 for module, path in _modules("targets")}
    assert not {m: names for m, names in offenders.items() if names}


def test_the_import_reader_sees_relative_imports():
    """(The checks above would pass vacuously if relative imports were resolved wrongly.)"""
    assert "mlirtext.vm.modfile.ModuleFile" in _imports(PACKAGE / "vm" / "vm.py")
    assert "mlirtext.compiler.driver.Compiled" in _imports(PACKAGE / "compiler" / "module_writer.py")
    assert "mlirtext.targets.workgroups.distribute" in _imports(PACKAGE / "targets" / "gpu" / "threads.py")


def test_running_a_module_file_loads_no_compiler_code(tmp_path):
    """Every vm module imported, a module file loaded and run on the native and the reference
    devices: the process has imported nothing of mlirtext.compiler."""
    path = tmp_path / "mlp.vmpack"
    path.write_bytes(pack(compile_source(MLP, "mlp.mlir")))
    script = f"""
import json, sys
import numpy as np
import mlirtext.vm
for name in {sorted(m for m, _ in _modules("vm") if not m.endswith("__init__"))!r}:
    __import__(name)
from mlirtext.vm.vm import LoadedModule
data = open({str(path)!r}, "rb").read()
x, w = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)
out = [LoadedModule(data, d).function("mlp")(x, w)[0].tolist() for d in ("local-sync", "reference")]
print(json.dumps({{"out": out, "compiler": sorted(m for m in sys.modules if m.startswith("mlirtext.compiler"))}}))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.splitlines()[-1])
    assert got["compiler"] == []
    want = [[4.0, 5.0, 6.0, 7.0]] * 2
    assert got["out"] == [want, want]


def test_an_in_memory_module_runs_as_its_file_does():
    """`in_memory` skips the archive, the JSON, the .npy and the kernels' MLIR text: the same
    functions, the same results, on every CPU device; the reference device interprets the
    compiler's IR itself (no text parsed again)."""
    compiled = compile_source(MLP, "mlp.mlir")
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((2, 3), np.float32), rng.standard_normal((3, 4), np.float32)
    data = pack(compiled)
    for device in ("local-task", "local-sync", "reference"):
        from_file = LoadedModule(data, device).function("mlp")(x, w)[0]
        loaded = LoadedModule(in_memory(compiled), device)
        assert np.array_equal(loaded.function("mlp")(x, w)[0], from_file), device
    reference = LoadedModule(in_memory(compiled), "reference").device
    assert reference.interp.module is compiled.reference_kernels
