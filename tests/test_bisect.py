"""`mlirtext bisect` along the lowering to llvm, checked with a fault injected at each station: a
pass that perturbs one op's result, one that crashes on one op, one that leaves IR that does not
verify; and across devices, a kernel wrong on one device. Bisect must name the pass (or dispatch),
its position and the source op, and the repro's command must show the same failure."""
from __future__ import annotations

import shlex
import tempfile
from pathlib import Path

import numpy as np
import pytest

from mlirtext import api
from mlirtext.analysis.pass_steps import explore
from mlirtext.cli import build_argparser, main
from mlirtext.cli.bisect import across_devices
from mlirtext.compiler.driver import compile_module
from mlirtext.compiler.module_writer import in_memory
from mlirtext.debugging.device_bisect import bisect_devices
from mlirtext.debugging.dispatch_trace import kernel_sources
from mlirtext.debugging.bisect import DIVERGED, bisect_pipeline
from mlirtext.debugging.equivalence import same_but_constants
from mlirtext.debugging.faults import FLOAT_NUDGE, Crash, FaultSpec, FaultSpecError, Miscompile
from mlirtext.interpreter import Interpreter
from mlirtext.syntax.printer import print_module
from mlirtext.transforms.pass_manager import PassManager
from mlirtext.transforms.passes import builtin_passes
from mlirtext.transforms.pipeline import parse_pipeline
from mlirtext.transforms.semantics_check import Tolerance, random_inputs
from mlirtext.vm.vm import LoadedModule

#: tosa -> linalg (convert, canonicalize, cse, fuse) -> loops (convert, canonicalize, cse) -> llvm (same): 10 passes.
PROGRAM = """\
func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tosa.sub %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = tosa.add %0, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
"""

INTEGER_PROGRAM = """\
func.func @g(%x: tensor<3xi32>) -> tensor<3xi32> {
  %0 = tosa.add %x, %x : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}
"""


@pytest.fixture
def program(tmp_path):
    path = tmp_path / "p.mlir"
    path.write_text(PROGRAM)
    return str(path)


def test_a_sound_lowering_has_no_finding(program, capsys):
    assert main(["bisect", program, "--input=4xf32=1 2 3 4", "--input=4xf32=0.5"]) == 0
    assert "all 10 passes of the lowering to llvm keep its results" in capsys.readouterr().out


# (switch, fault, what bisect says of the pass, its position, the kind, the source op's line:col, the op,
#  what the repro's command prints)
STATIONS = [
    ("--debug-miscompile", "canonicalize:arith.subf", "'canonicalize{max-num-rewrites=-1}'", 2, "diverged",
     "p.mlir:2:3: tosa.sub", "pass 'canonicalize' changed the results of @f"),
    ("--debug-crash", "cse:arith.addf", "'cse'", 3, "crashed", "p.mlir:3:3: tosa.add",
     "internal error in pass 'cse': RuntimeError"),
    ("--debug-unverifiable", "convert-linalg-to-loops:arith.addf", "'convert-linalg-to-loops'", 5,
     "does not verify", "p.mlir:3:8: tosa.add", "produced IR that does not verify"),
    # at the llvm level: the add of the fused loop body came from tosa.add
    ("--debug-miscompile", "canonicalize:llvm.fadd", "'canonicalize{max-num-rewrites=-1}'", 9, "diverged",
     "p.mlir:3:3: tosa.add", "pass 'canonicalize' changed the results of @f"),
]


@pytest.mark.parametrize("switch,fault,guilty,position,kind,where,replayed", STATIONS)
def test_bisect_names_the_pass_and_op_and_the_repro_replays_it(program, tmp_path, capsys, monkeypatch, switch,
                                                               fault, guilty, position, kind, where, replayed):
    repro = tmp_path / "repro"
    assert main(["bisect", program, f"{switch}={fault}", "-o", str(repro)]) == 1
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    assert f"pass {position} of 10 of the lowering to llvm" in first and first.endswith(f"{guilty}, {kind}")
    assert where in out
    assert out.count(".mlir:") == 1   # only the guilty op is named
    for name in ("before.mlir", "input_0.npy", "input_1.npy", "expected_0.npy", "README"):
        assert (repro / name).exists()
    assert (repro / "actual_0.npy").exists() == (kind == "diverged")
    command = (repro / "README").read_text().splitlines()[-1]
    words = shlex.split(command)
    assert words[:2] == ["mlirtext", "opt"] and f"{switch}={fault}" in words
    monkeypatch.chdir(repro)
    assert main(words[1:]) == 1
    assert replayed in capsys.readouterr().err
    # Without the fault the same command passes: it is the fault the repro shows.
    assert main([w for w in words[1:] if not w.startswith(switch)]) == 0


def test_without_o_nothing_is_written(program, tmp_path, capsys, monkeypatch):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    monkeypatch.chdir(scratch)
    assert main(["bisect", program, "--debug-miscompile=canonicalize:arith.subf"]) == 1
    assert "repro" not in capsys.readouterr().out and list(scratch.iterdir()) == []


def test_the_repro_holds_the_results_before_and_after(program, tmp_path, capsys):
    repro = tmp_path / "repro"
    assert main(["bisect", program, "--input=4xf32=1 2 3 4", "--input=4xf32=0.5",
                 "--debug-miscompile=canonicalize:arith.subf", "-o", str(repro)]) == 1
    expected, actual = np.load(repro / "expected_0.npy"), np.load(repro / "actual_0.npy")
    np.testing.assert_array_equal(expected, np.array([1.5, 3.5, 5.5, 7.5], np.float32))
    np.testing.assert_array_equal(actual - expected, np.full(4, FLOAT_NUDGE, np.float32))
    np.testing.assert_array_equal(np.load(repro / "input_1.npy"), np.full(4, 0.5, np.float32))
    assert "max |diff| 0.000977" in capsys.readouterr().out


def test_an_integer_result_is_nudged_by_one(tmp_path, capsys):
    path = tmp_path / "g.mlir"
    path.write_text(INTEGER_PROGRAM)
    assert main(["bisect", str(path), "--input=3xi32=1 2 3", "--debug-miscompile=canonicalize:arith.addi"]) == 1
    out = capsys.readouterr().out
    assert "pass 2 of 10" in out and "max |diff| 1," in out and "g.mlir:2:3: tosa.add" in out


def test_the_miscompile_nudges_exactly_one_op_of_a_plain_function():
    result = api.parse_and_verify("func.func @h(%a: f32, %b: f32) -> f32 {\n"
                                  "  %0 = arith.mulf %a, %b : f32\n  %1 = arith.mulf %0, %a : f32\n"
                                  "  return %1 : f32\n}\n", "h.mlir")
    fault = Miscompile(FaultSpec.parse("cse:arith.mulf", builtin_passes()))
    assert PassManager(parse_pipeline("cse"), instrumentations=[fault]).run(result.module) == []
    got = Interpreter(result.module).call("h", [np.float32(2.0), np.float32(3.0)])[0]
    assert got == np.float32((6.0 + FLOAT_NUDGE) * 2.0)   # the first mulf only, every use of it


def test_a_crash_names_the_op_the_pass_was_on():
    result = api.parse_and_verify("func.func @h(%a: i32) -> i32 {\n  %0 = arith.addi %a, %a : i32\n"
                                  "  return %0 : i32\n}\n", "h.mlir")
    fault = Crash(FaultSpec.parse("cse:arith.addi", builtin_passes()))
    [problem] = PassManager(parse_pipeline("cse"), instrumentations=[fault]).run(result.module)
    assert problem.message.startswith("internal error in pass 'cse'") and problem.span.line_col == (2, 3)


def test_library_finding_carries_the_numbers(program):
    result = api.parse_and_verify(open(program).read(), program)
    inputs = [np.arange(4, dtype=np.float32), np.ones(4, np.float32)]
    told = []
    found = bisect_pipeline(result.module, "f", inputs,
                            faults=[Miscompile(FaultSpec.parse("canonicalize:arith.subf", builtin_passes()))],
                            progress=lambda *seen: told.append(seen))
    # the whole step to linalg is lowered before the function runs; it stops at that step's end
    assert told == [(1, 10, "convert-tosa-to-linalg"), (2, 10, "canonicalize"), (3, 10, "cse"),
                    (4, 10, "linalg-fuse-elementwise-ops")]
    f = found.finding
    assert (f.kind, f.position, f.level, found.total) == (DIVERGED, 2, "linalg", 10)
    assert f.difference.max_abs == pytest.approx(FLOAT_NUDGE) and f.difference.max_ulp > 8
    assert [name for name, _ in f.ops] == ["tosa.sub"]


def _changed_passes(text: str) -> list:
    """The positions of the passes of the lowering to llvm that change the function's text (what a
    bisect pass by pass runs it after)."""
    _, steps = explore(api.parse_and_verify(text, "p.mlir").module, "llvm")
    return [s.index for s in steps if s.pass_name is not None and s.changed]


@pytest.mark.parametrize("fault,position,runs", [
    (None, None, 3),                        # one run per level: linalg, loops, llvm
    ("canonicalize:llvm.fadd", 9, 3 + 2),   # then, inside the llvm step, after passes 8 and 9
    ("canonicalize:arith.subf", 2, 1 + 2),  # the linalg step, then after passes 1 (convert) and 2 (it)
])
def test_bisect_runs_the_function_per_level_then_per_pass_of_one_level(fault, position, runs):
    result = api.parse_and_verify(PROGRAM, "p.mlir")
    faults = [Miscompile(FaultSpec.parse(fault, builtin_passes()))] if fault else []
    found = bisect_pipeline(result.module, "f", [np.arange(4, dtype=np.float32), np.ones(4, np.float32)],
                            faults=faults)
    assert (found.finding.position if found.finding else None) == position
    assert found.runs == runs
    # A bisect pass by pass runs it after every pass up to the guilty one that changed the text: more,
    # unless the guilty pass is in the first step (then the step's own run is the one more).
    per_pass = [p for p in _changed_passes(PROGRAM) if position is None or p < position] + ([position] if position else [])
    assert found.runs < len(per_pass) or position == 2


def test_a_clean_bisect_of_the_perceptron_runs_it_once_per_level():
    text = MLP.read_text()
    result = api.parse_and_verify(text, str(MLP))
    fn = result.module.regions[0].blocks[0].ops[0]
    found = bisect_pipeline(result.module, "mlp", random_inputs(fn, np.random.default_rng(0)))
    assert found.finding is None and found.total == 13
    assert found.runs == 4 < len(_changed_passes(text)) == 9   # tosa, linalg, loops, llvm


#: Softmax over rows of 8 (benchmarks/programs/softmax.mlir, shrunk): its loop nests each get index
#: constants of their own from convert-linalg-to-loops, which the cse after it merges.
SOFTMAX = (Path(__file__).resolve().parent.parent / "benchmarks" / "programs" / "softmax.mlir").read_text() \
    .replace("256x1024", "2x8").replace("tensor<256xf32>", "tensor<2xf32>")


def test_a_pass_that_only_merged_constants_is_not_run_after():
    # The step to loops: convert-linalg-to-loops (to blame), canonicalize (nothing), cse (constants merged).
    # The function runs at the step's end and that run is the conversion's: one run at the loops level, as
    # a bisect pass by pass needs (before, the step's end and then the conversion: two).
    module = api.parse_and_verify(SOFTMAX, "softmax.mlir").module
    fn = module.regions[0].blocks[0].ops[0]
    fault = Miscompile(FaultSpec.parse("convert-linalg-to-loops:arith.divf", builtin_passes()))
    found = bisect_pipeline(module, "main", random_inputs(fn, np.random.default_rng(0)), faults=[fault])
    assert (found.finding.position, found.finding.pass_spelling) == (8, "convert-linalg-to-loops")
    assert found.runs == 3   # tosa, linalg, loops
    assert ("loops", "cse") in found.passes


def test_hlo_to_tosa_is_narrowed_too():
    # softmax's divide has no exact TOSA form: convert-hlo-to-tosa takes it to a linalg.generic's divf
    module = api.parse_and_verify(SOFTMAX, "softmax.mlir").module
    fn = module.regions[0].blocks[0].ops[0]
    fault = Miscompile(FaultSpec.parse("convert-hlo-to-tosa:arith.divf", builtin_passes()))
    found = bisect_pipeline(module, "main", random_inputs(fn, np.random.default_rng(0)), faults=[fault]).finding
    assert (found.position, found.kind, found.rewrote) == (1, DIVERGED, 9)
    assert [(name, span.line_col) for name, span in found.ops] == [("stablehlo.divide", (11, 3))]


def test_functions_alike_but_for_their_constants():
    module = api.parse_and_verify(SOFTMAX, "softmax.mlir").module
    lowered = PassManager(parse_pipeline("convert-hlo-to-tosa,convert-tosa-to-linalg,convert-linalg-to-loops"))
    assert lowered.run(module) == []
    merged = module.clone()
    assert PassManager(parse_pipeline("cse")).run(merged) == []
    assert print_module(merged) != print_module(module) and same_but_constants(module, merged)
    # an op rewritten, or a constant's value changed: not alike
    for old, new in [("arith.divf", "arith.mulf"), ("0xFF800000 : f32", "0xFF800001 : f32")]:
        text = print_module(merged)
        assert old in text
        other = api.parse_and_verify(text.replace(old, new, 1), "x.mlir").module
        assert not same_but_constants(module, other)


@pytest.mark.parametrize("text", ["canonicalize", "nosuchpass:arith.addf", ":arith.addf", "cse:addf"])
def test_a_bad_fault_is_refused(text):
    with pytest.raises(FaultSpecError):
        FaultSpec.parse(text, builtin_passes())


def test_bad_requests_get_one_line(program, capsys):
    assert main(["bisect", program, "--debug-miscompile=cse"]) == 1
    assert main(["bisect", program, "--function=nope"]) == 1
    assert main(["bisect", program, "--input=4xf32=1"]) == 1
    assert main(["opt", program, "--input=4xf32=1"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 4


def test_a_fault_that_never_strikes_is_warned_of(program, capsys):
    assert main(["bisect", program, "--debug-miscompile=cse:tosa.add"]) == 0
    assert "never struck" in capsys.readouterr().err


# -- inside a conversion -----------------------------------------------------------------------------
#: Five ops in a chain, each nudge carried to the result; convert-tosa-to-linalg rewrites them all.
CONVERSION_PROGRAM = """\
func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tosa.add %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = tosa.sub %0, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = tosa.maximum %1, %1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = tosa.abs %2 : (tensor<4xf32>) -> tensor<4xf32>
  %4 = tosa.minimum %3, %3 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %4 : tensor<4xf32>
}
"""


@pytest.mark.parametrize("op,line,source", [("arith.subf", 3, "tosa.sub"), ("math.absf", 5, "tosa.abs"),
                                            ("arith.addf", 2, "tosa.add"), ("arith.minimumf", 6, "tosa.minimum")])
def test_a_conversion_is_narrowed_to_the_op_whose_rewrite_changed_the_numbers(tmp_path, capsys, op, line, source):
    path = tmp_path / "c.mlir"
    path.write_text(CONVERSION_PROGRAM)
    repro = tmp_path / "repro"
    assert main(["bisect", str(path), f"--debug-miscompile=convert-tosa-to-linalg:{op}", "-o", str(repro)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert "'convert-tosa-to-linalg', diverged" in out[0]
    assert [l.strip() for l in out if "c.mlir:" in l] == [f"{path}:{line}:3: {source}"]   # exactly the perturbed op
    assert "converting some of the 5 ops it rewrote" in out[3]
    assert f"Of the 5 ops it rewrote, the one whose rewrite alone changes the results: {source} " \
        in (repro / "README").read_text()


def test_a_pass_that_is_no_conversion_keeps_the_ops_it_rewrote(tmp_path):
    # canonicalize is no conversion: the partial conversion is never consulted, nothing is narrowed.
    module = api.parse_and_verify(CONVERSION_PROGRAM, "c.mlir").module
    inputs = [np.array([1, 2, 3, 4], np.float32), np.array([0.5] * 4, np.float32)]
    fault = Miscompile(FaultSpec.parse("canonicalize:arith.subf", builtin_passes()))
    found = bisect_pipeline(module, "f", inputs, faults=[fault]).finding
    assert found.kind == DIVERGED and found.rewrote is None and [n for n, _ in found.ops] == ["tosa.sub"]


# -- across devices ---------------------------------------------------------------------------------
MLP = Path(__file__).resolve().parent.parent / "examples" / "mlp_stablehlo.mlir"


def _compiled_mlp():
    result = api.parse_and_verify(MLP.read_text(), str(MLP))
    fn = result.module.regions[0].blocks[0].ops[0]
    inputs = random_inputs(fn, np.random.default_rng(0))
    return compile_module(result.module, "llvm-cpu"), inputs


def test_a_kernel_wrong_on_one_device_is_named_with_its_source_ops():
    compiled, inputs = _compiled_mlp()
    sources = kernel_sources(compiled.reference_kernels)
    kernels = list(sources)
    guilty = kernels[1]

    def wrong(name, kernel):
        if name != guilty:
            return kernel

        def run(ins, outs):
            kernel(ins, outs)
            outs[0].reshape(-1)[3] += 0.25
        return run

    for device in ("local-task", "local-sync"):
        total, clean = bisect_devices(in_memory(compiled), "mlp", inputs, device, sources)
        assert clean is None and total == len(kernels)
        total, found = bisect_devices(in_memory(compiled), "mlp", inputs, device, sources, kernel_fault=wrong)
        assert (found.index, found.kernel, found.device) == (1, guilty, device)
        assert found.difference.max_abs == pytest.approx(0.25, abs=1e-5)   # (f32 rounding of the sum)
        assert found.sources == sources[guilty] and all(s["at"].startswith(f"{MLP}:") for s in found.sources)
        # fed the reference's inputs: the dispatches after it are not blamed, and the actual differs at one element
        assert np.count_nonzero(np.abs(found.actual[0] - found.expected[0]) > 1e-3) == 1


def test_dispatches_replayed_elsewhere_are_compared_in_order_and_the_first_wrong_one_named():
    """bisect --cluster's path: every dispatch's inputs go out at once (to a cluster node), their
    outputs come back, and the first that differs from the reference is the finding."""
    compiled, inputs = _compiled_mlp()
    sources = kernel_sources(compiled.reference_kernels)
    tested = LoadedModule(in_memory(compiled), "local-sync").entry_function("mlp")
    shipped = []

    def replay_all(dispatch_inputs, wrong_at=None):
        shipped.append(len(dispatch_inputs))
        outputs = [tested.replay(i, ins) for i, ins in enumerate(dispatch_inputs)]
        if wrong_at is not None:
            outputs[wrong_at][0].reshape(-1)[0] += 0.5
        return outputs

    total, clean = bisect_devices(in_memory(compiled), "mlp", inputs, "local-sync", sources, replay_all=replay_all)
    assert clean is None and shipped == [total] == [len(sources)]
    total, found = bisect_devices(in_memory(compiled), "mlp", inputs, "local-sync", sources,
                                  replay_all=lambda ins: replay_all(ins, wrong_at=1))
    assert (found.index, found.kernel) == (1, list(sources)[1])
    assert found.difference.max_abs == pytest.approx(0.5, abs=1e-5)


def test_bisect_across_devices_on_the_command_line(capsys):
    assert main(["bisect", str(MLP), "--devices=local-task,local-sync"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in out] == ["bisect", "bisect"]
    assert "on local-task: all 2 dispatches agree with the reference" in out[0]   # (each matmul with its epilogue)
    with pytest.raises(SystemExit) as exit_:
        main(["bisect", str(MLP), "--devices=reference"])
    assert exit_.value.code == 1 and "not a device to check against the reference" in capsys.readouterr().err


def test_a_kernel_made_wrong_on_one_device_from_the_command_line(capsys):
    assert main(["bisect", str(MLP), "--devices=local-task,local-sync",
                 "--debug-wrong-kernel=local-sync:mlp_dispatch_2"]) == 1
    out = capsys.readouterr().out
    assert "on local-task: all 2 dispatches agree" in out
    assert "on local-sync: dispatch 1 of 2 (kernel @mlp_dispatch_2) differs from the reference" in out
    assert main(["bisect", str(MLP), "--devices=local-task", "--debug-wrong-kernel=local-task:nope"]) == 0
    assert "there is no kernel @nope (the kernels: mlp_dispatch_0, mlp_dispatch_2)" in capsys.readouterr().err
    assert main(["bisect", str(MLP), "--devices=local-task", "--debug-wrong-kernel=vulkan:mlp_dispatch_2"]) == 1
    assert main(["bisect", str(MLP), "--debug-wrong-kernel=local-task:mlp_dispatch_2"]) == 1
    assert main(["bisect", str(MLP), "--devices=local-task", "--debug-wrong-kernel=local-task"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 3 and "give --devices" in err


def test_the_dispatch_repro_holds_the_kernel_alone(tmp_path, capsys, monkeypatch):
    compiled, inputs = _compiled_mlp()
    guilty = list(kernel_sources(compiled.reference_kernels))[1]

    def wrong(name, kernel):
        def run(ins, outs):
            kernel(ins, outs)
            outs[0].reshape(-1)[0] -= 1.0
        return run if name == guilty else kernel

    args = build_argparser().parse_args(["bisect", str(MLP), "--devices=local-task", "-o", str(tmp_path / "r")])
    assert across_devices(args, "mlp", inputs, Tolerance(), kernel_fault=wrong) == 1
    out = capsys.readouterr().out
    assert f"dispatch 1 of 2 (kernel @{guilty}) differs from the reference" in out
    repro = tmp_path / "r" / "local-task"
    expected, actual = np.load(repro / "expected_0.npy"), np.load(repro / "actual_0.npy")
    assert np.abs(actual - expected).max() == pytest.approx(1.0, abs=1e-5)
    assert f"func.func @{guilty}(" in (repro / "dispatch.mlir").read_text()
    # The command checks the kernel alone on the device (the injected fault is not in it: it agrees).
    words = shlex.split((repro / "README").read_text().splitlines()[-1])
    monkeypatch.chdir(repro)
    assert main(words[1:]) == 0
    assert "agree with the reference" in capsys.readouterr().out


def test_opt_injects_the_fault_too(program, capsys):
    assert main(["opt", program, "--lower-to=linalg", "--check-semantics",
                 "--debug-miscompile=canonicalize:arith.subf"]) == 1
    assert "pass 'canonicalize' changed the results of @f" in capsys.readouterr().err
    assert main(["opt", program, "--lower-to=linalg", "--debug-miscompile=cse:tosa.add"]) == 0
    assert "never struck" in capsys.readouterr().err
    assert main(["opt", program, "--debug-miscompile=cse:arith.addf"]) == 1
    assert "give passes or --lower-to" in capsys.readouterr().err


@pytest.mark.parametrize("device", ["reference", "local-task"])
def test_run_injects_the_fault_into_the_compilers_passes(program, tmp_path, capsys, device):
    inputs = ["--input=4xf32=1 2 3 4", "--input=4xf32=0.5"]
    assert main(["run", program, *inputs, f"--output=@{tmp_path / 'clean.npy'}"]) == 0
    assert main(["run", program, *inputs, f"--device={device}", "--debug-miscompile=canonicalize:arith.subf",
                 f"--output=@{tmp_path / 'faulty.npy'}"]) == 0
    np.testing.assert_array_equal(np.load(tmp_path / "faulty.npy") - np.load(tmp_path / "clean.npy"),
                                  np.full(4, FLOAT_NUDGE, np.float32))
    assert "never struck" not in capsys.readouterr().err


def test_the_tolerance_decides_and_travels_into_the_repro(program, tmp_path, capsys, monkeypatch):
    fault = "--debug-miscompile=canonicalize:arith.subf"   # moves the results by 2**-10, ~1e-3 relative
    assert main(["bisect", program, fault, "--tolerance=0.01"]) == 0
    repro = tmp_path / "repro"
    assert main(["bisect", program, fault, "--tolerance=1e-05", "--tolerance-ulp=16", "-o", str(repro)]) == 1
    words = shlex.split((repro / "README").read_text().splitlines()[-1])
    assert "--tolerance=1e-05" in words and "--tolerance-ulp=16" in words
    monkeypatch.chdir(repro)
    capsys.readouterr()
    assert main(words[1:]) == 1
    assert "the bound is 16 ulp or 1e-05 relative" in capsys.readouterr().err


def test_run_refuses_a_fault_for_a_module_file(program, tmp_path, capsys):
    module = tmp_path / "p.vmpack"
    assert main(["compile", program, "-o", str(module)]) == 0
    assert main(["run", str(module), "--debug-miscompile=cse:arith.addf", "--input=4xf32=1", "--input=4xf32=1"]) == 1
    assert "a module file is already compiled" in capsys.readouterr().err


def test_a_fault_in_a_callee_is_found_and_the_repro_takes_the_callee_along(tmp_path, capsys, monkeypatch):
    path = tmp_path / "two.mlir"
    path.write_text("func.func private @g(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
                    "  %0 = tosa.sub %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n"
                    "  return %0 : tensor<4xf32>\n}\n"
                    "func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
                    "  %0 = call @g(%x) : (tensor<4xf32>) -> tensor<4xf32>\n"
                    "  %1 = tosa.add %0, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n"
                    "  return %1 : tensor<4xf32>\n}\n")
    repro = tmp_path / "repro"
    assert main(["bisect", str(path), "--debug-miscompile=cse:arith.subf", "-o", str(repro)]) == 1
    out = capsys.readouterr().out
    assert "pass 3 of 10" in out and "two.mlir:2:3: tosa.sub" in out
    assert "func.func private @g(" in (repro / "before.mlir").read_text()
    monkeypatch.chdir(repro)
    assert main(shlex.split((repro / "README").read_text().splitlines()[-1])[1:]) == 1
    assert "pass 'cse' changed the results of @f" in capsys.readouterr().err
