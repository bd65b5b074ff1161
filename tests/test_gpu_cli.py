"""`mlirtext compile --target=llvm-cpu,cuda,rocm,vulkan-spirv`, `dump` of each target, and `run`
on the GPU devices, as a user types them."""
from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from .gpu_status import need_tools

ROOT = Path(__file__).resolve().parent.parent
PROGRAM = ROOT / "examples" / "softmax_stablehlo.mlir"


def mlirtext(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "mlirtext", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/local/bin:/usr/bin:/bin",
                                        "XDG_CACHE_HOME": str(cwd or ROOT / ".venv")}, timeout=300)


@pytest.fixture(scope="module")
def packed(tmp_path_factory):
    need_tools("ptxas", "ld.lld", "llvm-readelf", "spirv-as", "spirv-val")
    out = tmp_path_factory.mktemp("gpu") / "m.vmpack"
    done = mlirtext("compile", PROGRAM, "-o", out, "--target=llvm-cpu,cuda,rocm,vulkan-spirv", "--validate",
                    "--rocm-arch", "gfx90a")
    assert done.returncode == 0, done.stderr
    return out


def test_one_executable_per_target_in_one_module_file(packed):
    names = zipfile.ZipFile(packed).namelist()
    for suffix in ("llvm-cpu/kernels.o", "cuda/", "rocm/", "vulkan-spirv/"):
        assert any(n.startswith("executables/" + suffix) for n in names), suffix
    assert any(n.endswith(".ptx") for n in names) and any(n.endswith(".spv") for n in names)


def test_dump_lists_each_targets_kernels_and_prints_their_code(packed):
    done = mlirtext("dump", packed, "--print-target-code")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "cuda (ptx) sm_80:" in out and "rocm (amdgpu-object) gfx90a:" in out and "vulkan-spirv (spirv)" in out
    assert "//----- cuda kernels (ptx, sm_80; validated: ptxas sm_80, ptxas sm_90) -----" in out
    assert "//----- rocm kernels (amdgpu-object, gfx90a; validated: ld.lld, llvm-readelf) -----" in out
    assert "entry point softmax_dispatch_0" in out
    assert ".visible .entry softmax_dispatch_0(" in out          # PTX
    assert ".amdhsa_kernel softmax_dispatch_0" in out            # AMDGPU assembly
    assert 'OpEntryPoint GLCompute %main "softmax_dispatch_0"' in out   # SPIR-V assembly


def test_run_on_vulkan_matches_local_task(packed, tmp_path):
    from mlirtext.vm.devices import DeviceError
    from mlirtext.vm.vulkan_device import context
    try:
        context()
    except DeviceError as e:
        pytest.skip(f"no Vulkan device here: {e}")
    x = np.random.default_rng(0).standard_normal((2, 8)).astype(np.float32)   # @softmax's argument
    np.save(tmp_path / "x.npy", x)
    outs = []
    for device in ("vulkan", "local-task"):
        done = mlirtext("run", packed, f"--device={device}", "--input=@x.npy", f"--output=@{device}.npy", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        outs.append(np.load(tmp_path / f"{device}.npy"))
    assert np.allclose(outs[0], outs[1], rtol=1e-4, atol=1e-6)


def test_cuda_without_a_driver_is_a_clear_error(packed):
    import ctypes
    try:
        ctypes.CDLL("libcuda.so.1")
        pytest.skip("this machine has a CUDA driver")
    except OSError:
        pass
    done = mlirtext("run", packed, "--device=cuda", "--input=2x8xf32=1")
    assert done.returncode == 1 and "no CUDA driver" in done.stderr and "Traceback" not in done.stderr


def test_a_device_whose_target_was_not_compiled_says_how_to_get_it(tmp_path):
    out = tmp_path / "cpu.vmpack"
    assert mlirtext("compile", PROGRAM, "-o", out).returncode == 0
    done = mlirtext("run", out, "--device=vulkan", "--input=2x8xf32=1")
    assert done.returncode == 1 and "no vulkan-spirv executable" in done.stderr and "--target=vulkan-spirv" in done.stderr


def test_unknown_target_is_refused(tmp_path):
    done = mlirtext("compile", PROGRAM, "-o", tmp_path / "m.vmpack", "--target=llvm-cpu,metal")
    assert done.returncode != 0 and "unknown target 'metal'" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("flag, name", [("--cuda-arch", "sm_1"), ("--cuda-arch", "80"), ("--rocm-arch", "gfx1"),
                                        ("--rocm-arch", "mi300")])
def test_a_misspelt_gpu_processor_is_refused(flag, name, tmp_path):
    # LLVM only warns about a processor it does not know and generates generic code.
    out = tmp_path / "m.vmpack"
    done = mlirtext("compile", PROGRAM, "-o", out, "--target=cuda,rocm", flag, name)
    assert done.returncode == 1 and f"'{name}' is not a" in done.stderr and "Traceback" not in done.stderr
    assert not out.exists()
