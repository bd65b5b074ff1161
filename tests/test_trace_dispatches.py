"""`mlirtext run --trace-dispatches` and `mlirtext compare`: on the benchmark workloads the traces of
local-task and the reference device agree within tolerance, and a seeded difference is found at
the right dispatch."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mlirtext import api
from mlirtext.cli import main
from mlirtext.transforms.semantics_check import random_inputs

PROGRAMS = Path(__file__).resolve().parent.parent / "benchmarks" / "programs"
WORKLOADS = sorted(p.stem for p in PROGRAMS.glob("*.mlir"))


def _inputs(program: Path, directory: Path) -> list[str]:
    module = api.parse_and_verify(program.read_text(), str(program)).module
    [fn] = [op for op in module.regions[0].blocks[0].ops if op.name == "func.func"]
    flags = []
    for i, value in enumerate(random_inputs(fn, np.random.default_rng(0))):
        np.save(directory / f"arg{i}.npy", value)
        flags.append(f"--input=@{directory / f'arg{i}.npy'}")
    return flags


def _trace(program: Path, device: str, directory: Path, inputs: list[str], capsys) -> dict:
    out = directory.parent / f"{directory.name}.result.npy"
    assert main(["run", str(program), f"--device={device}", f"--trace-dispatches={directory}", *inputs,
                 f"--output=@{out}"]) == 0, capsys.readouterr().err
    return json.loads((directory / "dispatches.json").read_text())


@pytest.mark.parametrize("workload", WORKLOADS)
def test_local_task_and_reference_traces_agree(workload, tmp_path, capsys):
    program = PROGRAMS / f"{workload}.mlir"
    inputs = _inputs(program, tmp_path)
    ref = _trace(program, "reference", tmp_path / "ref", inputs, capsys)
    task = _trace(program, "local-task", tmp_path / "task", inputs, capsys)
    assert ref["device"] == "reference" and task["device"] == "local-task" and ref["function"] == "main"
    assert ref["dispatches"] and [d["kernel"] for d in ref["dispatches"]] == [d["kernel"] for d in task["dispatches"]]
    for record in ref["dispatches"]:
        assert record["name"] == f"main#{record['index']}" and record["seconds"] >= 0
        assert record["sources"] and all(s["at"].startswith(f"{program}:") for s in record["sources"])
        for tensor in record["inputs"] + record["outputs"]:
            saved = np.load(tmp_path / "ref" / tensor["file"])
            assert list(saved.shape) == tensor["shape"] and saved.dtype.name == tensor["dtype"]
    # The last dispatch's output is the function's result.
    last = ref["dispatches"][-1]["outputs"][0]["file"]
    np.testing.assert_array_equal(np.load(tmp_path / "ref" / last).reshape(-1),
                                  np.load(tmp_path / "ref.result.npy").reshape(-1))
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "ref"), str(tmp_path / "task"), "--tolerance=1e-5"]) == 0
    assert "dispatches agree" in capsys.readouterr().out

    # A seeded difference in the last dispatch's output is found there, with its source ops.
    record = task["dispatches"][-1]
    path = tmp_path / "task" / record["outputs"][0]["file"]
    seeded = np.load(path)
    seeded.reshape(-1)[seeded.size // 2] += 1
    np.save(path, seeded)
    assert main(["compare", str(tmp_path / "ref"), str(tmp_path / "task"), "--tolerance=1e-5"]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"compare: dispatch {record['index']} ({record['name']}, kernel @{record['kernel']}): "
                          "output 0 differs: max |diff| 1")
    assert f"{program}:" in out


def test_compare_refuses_what_is_not_a_trace(tmp_path, capsys):
    assert main(["compare", str(tmp_path), str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "not a dispatch trace" in err and "Traceback" not in err


def test_a_vulkan_trace_compares_with_the_reference_trace_of_the_same_module_file(tmp_path, capsys):
    from mlirtext.vm.devices import DeviceError
    from mlirtext.vm.vulkan_device import context
    try:
        context()
    except DeviceError as e:
        pytest.skip(f"no Vulkan device here: {e}")
    program = PROGRAMS / "softmax.mlir"
    inputs = _inputs(program, tmp_path)
    module = tmp_path / "m.vmpack"
    assert main(["compile", str(program), "--target=vulkan-spirv", "-o", str(module)]) == 0
    ref = _trace(module, "reference", tmp_path / "ref", inputs, capsys)
    gpu = _trace(module, "vulkan", tmp_path / "vk", inputs, capsys)
    assert gpu["device"] == "vulkan" and len(gpu["dispatches"]) == len(ref["dispatches"])
    capsys.readouterr()
    # (GPU kernels round differently: test_gpu_vulkan's bound)
    assert main(["compare", str(tmp_path / "ref"), str(tmp_path / "vk"), "--tolerance=1e-4"]) == 0
