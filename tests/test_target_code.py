"""Each target's code for a function's dispatches (mlirtext.analysis.target_code), without the
server: what the pipeline command's `targets` and the dispatch hover are made of."""
from __future__ import annotations

import re
import threading

import pytest

from mlirtext import api
from mlirtext.analysis import target_code as tc
from mlirtext.analysis.document import Document
from mlirtext.targets.gpu import compile_gpu
from mlirtext.compiler.driver import compile_module, form_dispatches, kernel_module

from .lsp_support import ROOT

MLP = (ROOT / "examples" / "mlp_stablehlo.mlir").read_text()
GPU = [t for t in ("cuda", "rocm", "vulkan-spirv", "opencl-spirv") if t in tc.available_targets()]
#: What each GPU target's kernel code starts its entry point with.
ENTRY = {"cuda": ".visible .entry {}(", "rocm": ".amdhsa_kernel {}", "vulkan-spirv": 'OpEntryPoint GLCompute %main "{}"',
         "opencl-spirv": 'OpEntryPoint Kernel'}


def _line(text: str, needle: str) -> int:
    return next(i for i, l in enumerate(text.split("\n")) if needle in l)


def compiled(text: str) -> tc.CompiledSource:
    result = api.parse_and_verify(text, "t.mlir")
    assert result.ok, [d.message for d in result.diagnostics]
    return tc.CompiledSource.of(result.module)


MLP_SOURCE = compiled(MLP)


def _lines(text: str, kernel: tc.Kernel) -> set:
    return {text.count("\n", 0, MLP_SOURCE.span(place).start) for place in kernel.places}


@pytest.fixture(scope="module")
def mlp() -> tc.FunctionTargets:
    return tc.compute(MLP_SOURCE, ["llvm-cpu", *GPU])


def test_llvm_cpu_kernels_are_the_compiled_modules_with_their_micro_kernel(mlp):
    code = mlp.targets["llvm-cpu"]
    assert code.error is None and code.arch
    compiled = compile_module(api.parse_and_verify(MLP, "mlp.mlir").module, "llvm-cpu")
    assert [k.name for k in code.kernels] == list(compiled.kernels) == ["mlp_dispatch_0", "mlp_dispatch_2"]
    for k in code.kernels:
        # The code shown is the kernel's function in the IR `mlirtext compile` packs, its size the object's.
        assert k.code.startswith("define ") and f"@{k.name}(" in k.code.split("\n")[0]
        assert k.code in compiled.llvm_ir
        assert 0 < k.size < len(compiled.object_code)
    first, second = code.kernels
    # The first matmul's micro-kernel runs the bias and relu after it as its epilogue: one kernel
    # made from the dot_general, the add and the maximum.
    assert first.implementation.startswith("micro-kernel: matmul f32") and "addf+maximumf epilogue" in first.implementation
    assert {_line(MLP, "%0 = stablehlo.dot_general"), _line(MLP, "%h = stablehlo.maximum")} <= _lines(MLP, first)
    # The second (4 columns: one panel, masked) runs its bias add as its epilogue too.
    assert second.implementation.startswith("micro-kernel: matmul f32") and \
        "last panel 4 columns (masked), addf epilogue" in second.implementation
    assert {_line(MLP, "%3 = stablehlo.dot_general"), _line(MLP, "%y = stablehlo.add")} <= _lines(MLP, second)
    assert second.workgroups == 1 and first.dispatch == 0 and second.dispatch == 2


@pytest.mark.skipif(not GPU, reason="no GPU target can generate code here (llvmlite's NVPTX/AMDGPU, spirv-as)")
def test_gpu_kernels_are_what_compile_makes_one_per_dispatch(mlp):
    assert [d.name for d in mlp.dispatches] == [f"mlp_dispatch_{i}" for i in range(4)]
    assert [d.ops for d in mlp.dispatches][:2] == [["linalg.fill", "linalg.batch_matmul"], ["linalg.generic"]]
    module = api.parse_and_verify(MLP, "mlp.mlir").module
    form_dispatches(module)
    kernels = kernel_module(module)
    for target in GPU:
        code = mlp.targets[target]
        assert code.error is None, code.error
        exe = compile_gpu(kernels, [d.name for d in mlp.dispatches], target)
        assert [k.name for k in code.kernels] == [d.name for d in mlp.dispatches]
        for k in code.kernels:
            assert k.code == exe.assembly[k.name] and ENTRY[target].format(k.entry) in k.code
            assert k.size == len(exe.code[k.name]) and k.threads == exe.launches[k.name]["threads"]
        relu = code.kernels[1]   # relu(x @ w1 + b1)'s elementwise part: 4x16 outputs, a thread each
        assert relu.threads == 64 and relu.workgroups == 1 and relu.workgroup_size == 64
        assert relu.implementation == "one thread per output element of axes 4x16"
        assert _lines(MLP, relu) == {_line(MLP, "%h = stablehlo.maximum")}


def test_a_target_whose_tool_is_missing_says_so_and_the_others_still_show(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))   # no spirv-as
    found = tc.compute(compiled(MLP + "// without tools\n"), ["llvm-cpu", "vulkan-spirv", "tpu"])
    assert re.match(r"spirv-as not found \(Debian spirv-tools", found.targets["vulkan-spirv"].error)
    assert found.targets["tpu"].error.startswith("unknown target 'tpu'")
    assert found.targets["llvm-cpu"].error is None and len(found.targets["llvm-cpu"].kernels) == 2
    assert list(found.targets) == ["llvm-cpu", "vulkan-spirv", "tpu"]


def test_a_function_that_does_not_compile_is_a_message_for_every_target():
    text = ("func.func @f(%x: tensor<?xf32>) -> tensor<?xf32> {\n"
            "  %0 = stablehlo.add %x, %x : tensor<?xf32>\n  return %0 : tensor<?xf32>\n}\n")
    found = tc.compute(compiled(text), ["llvm-cpu", *GPU])
    for target in ["llvm-cpu", *GPU]:
        assert found.targets[target].error and not found.targets[target].kernels, target
    from mlirtext.analysis.commands import target_code_command
    broken = Document("file:///bad.mlir", "func.func @f(%x: i32) {\n  %0 = arith.addi %x, : i32\n}\n", 1)
    (cpu,) = target_code_command(broken, "f", targets=["llvm-cpu"])["targets"]
    assert "expected SSA value" in cpu["error"] and cpu["kernels"] == []


def test_hover_reads_what_the_pipeline_command_computed():
    from mlirtext.analysis.commands import pipeline
    text = "// header line\n" + MLP
    doc = Document("file:///mlp.mlir", text, 1)
    cache = tc.TargetCache()
    add = text.index("stablehlo.add %0") + 3        # fused into the maximum after it
    bias = text.index("stablehlo.add %3") + 3
    assert tc.hover_section(doc, add, cache) == ""     # not computed: the hover's link opens the pipeline view
    assert cache.entries == {}                          # hover computes nothing
    assert tc.hover_section(doc, text.index("%zero") + 1, cache) == ""   # a value, not an op
    result = pipeline(doc, "mlp", cache=cache)
    assert [t["target"] for t in result["targets"]] == list(tc.available_targets())
    section = tc.hover_section(doc, add, cache)
    first = section.split("\n")[0]
    assert first == "**Dispatch 0 of @mlp**: kernel `mlp_dispatch_0` (targets: llvm-cpu)"
    if GPU:   # the GPU targets have no epilogues: the add and relu are their own dispatch there
        assert f"**Dispatch 1 of @mlp**: kernel `mlp_dispatch_1` (targets: {', '.join(GPU)})" in section
    assert "micro-kernel: matmul f32" in section and "entry `mlp_dispatch_0`" in section
    assert "```" not in section                         # the code is in the pipeline view, not the hover
    section = tc.hover_section(doc, bias, cache)
    # (on llvm-cpu the bias add is the second matmul's epilogue: dispatch 2)
    assert section.startswith("**Dispatch 2 of @mlp**: kernel `mlp_dispatch_2` (targets: llvm-cpu")
    # An edit elsewhere in the file leaves the function's text, so its entry, as it was; so does
    # an edit to the comments and spaces of the function itself (a new parse, the same module).
    edited = Document("file:///mlp.mlir", "// another header\n// and one more line\n" + MLP, 2)
    at = edited.text.index("stablehlo.add %3") + 3
    assert tc.hover_section(edited, at, cache) == section
    respaced = doc.updated(text.replace("%y = stablehlo.add", "%y =   stablehlo.add") + "// the end\n", 3)
    assert tc.hover_section(respaced, respaced.text.index("stablehlo.add %3") + 3, cache) == section
    # The command asks again: everything comes from the cache (the same objects).
    (key,) = cache.dispatches
    before = cache.get(key).targets["llvm-cpu"]
    source, _ = tc.compiled_source(doc, doc.chunks[0], *doc.chunks[0].symbols["mlp"])
    assert source.text == key and cache.compute(source, ["llvm-cpu"]).targets["llvm-cpu"] is before


def test_a_cancelled_computation_is_not_cached():
    cache = tc.TargetCache()
    cancelled = threading.Event()
    cancelled.set()
    assert cache.compute(MLP_SOURCE, ["llvm-cpu"], cancelled).error == "cancelled"
    assert cache.get(MLP_SOURCE.text) is None


def test_function_sizes_reads_the_symbol_table():
    compiled = compile_module(api.parse_and_verify(MLP, "mlp.mlir").module, "llvm-cpu")
    sizes = tc.function_sizes(compiled.object_code)
    assert set(compiled.kernels) <= set(sizes) and all(sizes[k] > 0 for k in compiled.kernels)
    assert tc.function_sizes(b"not an object") == {}


CALLS_A_HELPER = """\
func.func private @relu(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<4x8xf32>
  %0 = stablehlo.maximum %x, %zero : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

func.func @main(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = stablehlo.multiply %a, %b : tensor<4x8xf32>
  %1 = call @relu(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = stablehlo.exponential %1 : tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}
"""


def test_a_function_that_calls_a_private_helper_compiles_with_its_chunk():
    """As JAX exports: @main calls @relu. Compile inlines the helper, so the whole chunk is
    compiled (a declaration of @relu would leave nothing to inline)."""
    from mlirtext.analysis.commands import pipeline
    doc = Document("file:///jax.mlir", "// exported\n" + CALLS_A_HELPER, 1)
    cache = tc.TargetCache()
    result = pipeline(doc, "main", targets=["llvm-cpu"], cache=cache)
    (cpu,) = result["targets"]
    assert cpu["error"] is None and [k["name"] for k in cpu["kernels"]] == ["main_dispatch_0"]
    lines = doc.text.split("\n")
    # Elementwise fusion makes the multiply, the helper's maximum and the exponential one generic,
    # with the span of the last; the multiply is found through the call and the exponential.
    assert cpu["kernels"][0]["lines"] == [next(i for i, l in enumerate(lines) if "stablehlo.exponential" in l)]
    for needle in ("stablehlo.multiply", "stablehlo.exponential"):
        section = tc.hover_section(doc, doc.text.index(needle) + 3, cache)
        assert section.startswith("**Dispatch 0 of @main**: kernel `main_dispatch_0` (targets: llvm-cpu)"), needle
    # The helper's own pipeline: compiled alone it exports nothing (it is private); its op is in
    # main's kernel, which the pipeline of @main shows.
    assert tc.hover_section(doc, doc.text.index("stablehlo.maximum") + 3, cache) == ""   # not computed yet
    assert pipeline(doc, "relu", targets=["llvm-cpu"], cache=cache)["targets"][0]["error"] \
        == "the module has no public function to export"
    assert tc.hover_section(doc, doc.text.index("stablehlo.maximum") + 3, cache) \
        == "*no target code for @relu: llvm-cpu: the module has no public function to export*"


def test_how_a_gpu_kernel_runs_is_said_from_its_launch():
    from types import SimpleNamespace
    launches = {
        "tiled": {"threads": 1024, "workgroup_size": 256, "workgroups": 4, "split": False, "axes": [],
                  "workgroup": [16, 16], "grid": [2, 2, 1], "block": [64, 64], "tiling": "matmul"},
        "split": {"threads": 800, "workgroup_size": 64, "workgroups": 13, "split": True, "axes": [100, 8]},
        "total": {"threads": 1, "workgroup_size": 64, "workgroups": 1, "split": False, "axes": []},
    }
    exe = SimpleNamespace(launches=launches, assembly={n: f"; {n}\n" for n in launches},
                          code={n: b"\0" * 10 for n in launches})
    kernels = {n: tc._gpu_kernel(exe, n, frozenset({3})) for n in launches}
    assert kernels["tiled"].implementation == ("tiled (matmul): a 2x2x1 grid of 16x16-thread workgroups, "
                                               "each computing a 64x64 block of the output")
    assert kernels["split"].implementation == "one thread per output element of axes 100x8"
    assert kernels["total"].implementation == "serial: one thread runs the whole kernel"
    assert (kernels["split"].threads, kernels["split"].workgroups, kernels["split"].size) == (800, 13, 10)
    assert tc._describe(kernels["split"]).endswith("800 threads (13 workgroups of 64), 10 B of code")
