"""Huge shapes, out-of-range inputs and long outputs through the real command (issue 22): each a
one-line error (MLIR-style, with the source line and a caret when it has a place) and exit status 1,
never a traceback; long results elided as iree-run-module elides them."""
from __future__ import annotations

import hashlib
import os
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mlirtext import limits

from .test_vm_module_file import rewritten

ROOT = Path(__file__).resolve().parent.parent
HUGE = "tensor<100000000000xf32>"
NEEDS = f"{HUGE} needs 373 GiB, above the 1 GiB limit (--max-memory)"

SPLAT = f"""func.func @main() -> {HUGE} {{
  %0 = arith.constant dense<1.0> : {HUGE}
  return %0 : {HUGE}
}}
"""
ALLOC = """func.func @main() -> memref<100000000000xf32> {
  %0 = memref.alloc() : memref<100000000000xf32>
  return %0 : memref<100000000000xf32>
}
"""
EMPTY = f"""func.func @main() -> {HUGE} {{
  %0 = tensor.empty() : {HUGE}
  return %0 : {HUGE}
}}
"""
DYNAMIC_EMPTY = """func.func @main(%n: index) -> tensor<?xf32> {
  %0 = tensor.empty(%n) : tensor<?xf32>
  return %0 : tensor<?xf32>
}
"""
#: Ops whose result's size comes from a value at run time (the size an `index` argument, %n).
GENERATE = """func.func @main(%n: index) -> tensor<?xf32> {
  %0 = tensor.generate %n {
  ^bb0(%i: index):
    %c = arith.constant 1.0 : f32
    tensor.yield %c : f32
  } : tensor<?xf32>
  return %0 : tensor<?xf32>
}
"""
SPLAT_DYNAMIC = """func.func @main(%n: index) -> tensor<?xf32> {
  %one = arith.constant 1.0 : f32
  %0 = tensor.splat %one[%n] : tensor<?xf32>
  return %0 : tensor<?xf32>
}
"""
ALLOCA = """func.func @main(%n: index) -> memref<?xf32> {
  %0 = memref.alloca(%n) : memref<?xf32>
  return %0 : memref<?xf32>
}
"""
PAD = """func.func @main(%n: index) -> tensor<?xf32> {
  %a = arith.constant dense<1.0> : tensor<1xf32>
  %0 = tensor.pad %a low[0] high[%n] {
  ^bb0(%i: index):
    %z = arith.constant 0.0 : f32
    tensor.yield %z : f32
  } : tensor<1xf32> to tensor<?xf32>
  return %0 : tensor<?xf32>
}
"""
DYNAMIC_BROADCAST = """func.func @main(%n: index) -> tensor<?xf32> {
  %a = stablehlo.constant dense<1.0> : tensor<f32>
  %s = tensor.from_elements %n : tensor<1xindex>
  %0 = stablehlo.dynamic_broadcast_in_dim %a, %s, dims = [] : (tensor<f32>, tensor<1xindex>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
"""
IDENTITY = f"func.func @main(%a: {HUGE}) -> {HUGE} {{\n  return %a : {HUGE}\n}}\n"
INTS = """func.func @main(%a: tensor<4xi32>, %b: i8) -> (tensor<4xi32>, i8) {
  return %a, %b : tensor<4xi32>, i8
}
"""
WIDE = "func.func @main() -> i16777215 {\n  %0 = arith.constant 1 : i16777215\n  return %0 : i16777215\n}\n"
BROADCAST = """func.func @main(%a: tensor<f32>) -> tensor<{n}xf32> {{
  %0 = stablehlo.broadcast_in_dim %a, dims = [] : (tensor<f32>) -> tensor<{n}xf32>
  return %0 : tensor<{n}xf32>
}}
"""
MALLOC = """llvm.func @malloc(i64) -> !llvm.ptr
llvm.func @main() -> i32 {
  %n = llvm.mlir.constant(100000000000 : i64) : i64
  %p = llvm.call @malloc(%n) : (i64) -> !llvm.ptr
  %c = llvm.mlir.constant(0 : i32) : i32
  llvm.return %c : i32
}
"""


def mlirtext(*args, env=None):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "server")]), **(env or {}))
    env.pop("MLIRTEXT_MAX_MEMORY", None) if "MLIRTEXT_MAX_MEMORY" not in (env or {}) else None
    return subprocess.run([sys.executable, "-m", "mlirtext", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=300)


def assert_error(done, message: str, line: int | None = None) -> None:
    """Exit status 1 and one error on stderr: `message` in its first line, then at most the source
    line and the caret; `line`: the source line it points at."""
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 1, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) in (1, 3), done.stderr
    assert message in lines[0], done.stderr
    assert lines[0].count("error:") == 1
    if line is not None:
        assert f".mlir:{line}:" in lines[0], lines[0]


@pytest.fixture
def write(tmp_path):
    def write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path
    return write


@pytest.mark.parametrize("text", [SPLAT, ALLOC, EMPTY], ids=["dense-splat", "memref.alloc", "tensor.empty"])
def test_huge_results_are_refused_at_the_op(write, text):
    needs = NEEDS.replace("tensor", "memref") if text is ALLOC else NEEDS
    assert_error(mlirtext("run", write("huge.mlir", text), "--max-memory=1GiB"), needs, line=2)


def test_the_default_limit_comes_from_the_environment(write):
    done = mlirtext("run", write("huge.mlir", SPLAT), env={"MLIRTEXT_MAX_MEMORY": "12GiB"})
    assert_error(done, f"{HUGE} needs 373 GiB, above the 12 GiB limit (--max-memory)", line=2)


def test_a_malformed_environment_limit_is_an_error(write):
    done = mlirtext("run", write("huge.mlir", SPLAT), env={"MLIRTEXT_MAX_MEMORY": "lots"})
    assert_error(done, "MLIRTEXT_MAX_MEMORY: 'lots' is not a size")


def test_a_dynamic_size_is_checked_when_it_is_known(write):
    done = mlirtext("run", write("dyn.mlir", DYNAMIC_EMPTY), "--input=index=100000000000", "--max-memory=1GiB")
    assert_error(done, "tensor<?xf32> of shape 100000000000 needs 373 GiB, above the 1 GiB limit", line=2)
    done = mlirtext("run", write("dyn.mlir", DYNAMIC_EMPTY), "--input=index=3", "--max-memory=1GiB")
    assert done.returncode == 0 and "3xf32=0 0 0" in done.stdout, done.stderr


@pytest.mark.parametrize("text, line, size", [
    (GENERATE, 2, 100000000000), (SPLAT_DYNAMIC, 3, 100000000000), (ALLOCA, 2, 100000000000),
    (PAD, 3, 100000000001), (DYNAMIC_BROADCAST, 4, 100000000000)],
    ids=["tensor.generate", "tensor.splat", "memref.alloca", "tensor.pad", "stablehlo.dynamic_broadcast_in_dim"])
def test_sizes_known_at_run_time_are_checked_before_the_op_allocates(write, text, line, size):
    kind = "memref" if text is ALLOCA else "tensor"
    done = mlirtext("run", write("dyn.mlir", text), "--input=index=100000000000", "--max-memory=1GiB")
    assert_error(done, f"{kind}<?xf32> of shape {size} needs 373 GiB, above the 1 GiB limit (--max-memory)",
                 line=line)
    done = mlirtext("run", write("dyn.mlir", text), "--input=index=2", "--max-memory=1GiB")
    assert done.returncode == 0 and "xf32=" in done.stdout, done.stderr


ALLOC_TENSOR = f"""func.func @main() -> {HUGE} {{
  %0 = bufferization.alloc_tensor() : {HUGE}
  return %0 : {HUGE}
}}
"""
ALLOC_TENSOR_DYNAMIC = """func.func @main(%n: index) -> tensor<?xf32> {
  %0 = bufferization.alloc_tensor(%n) : tensor<?xf32>
  return %0 : tensor<?xf32>
}
"""
ALLOC_TENSOR_COPY = """func.func @main(%t: tensor<3xf32>) -> tensor<3xf32> {
  %0 = bufferization.alloc_tensor() copy(%t) : tensor<3xf32>
  return %0 : tensor<3xf32>
}
"""


def test_bufferization_alloc_tensor_is_held_to_the_limit(write, tmp_path):
    """Static and dynamic sizes on the interpreter, and a compiled module's result buffer on the VM."""
    assert_error(mlirtext("run", write("a.mlir", ALLOC_TENSOR), "--max-memory=1GiB"), NEEDS, line=2)
    dynamic = write("d.mlir", ALLOC_TENSOR_DYNAMIC)
    assert_error(mlirtext("run", dynamic, "--input=index=100000000000", "--max-memory=1GiB"),
                 "tensor<?xf32> of shape 100000000000 needs 373 GiB, above the 1 GiB limit (--max-memory)", line=2)
    done = mlirtext("run", dynamic, "--input=index=3", "--max-memory=1GiB")
    assert done.returncode == 0 and "3xf32=0 0 0" in done.stdout, done.stderr
    done = mlirtext("run", write("c.mlir", ALLOC_TENSOR_COPY), "--input=3xf32=1,2,3", "--max-memory=12B")
    assert done.returncode == 0 and "3xf32=1 2 3" in done.stdout, done.stderr
    assert_error(mlirtext("run", write("c.mlir", ALLOC_TENSOR_COPY), "--input=3xf32=1,2,3", "--max-memory=8B"),
                 "tensor<3xf32> needs 12 B, above the 8 B limit (--max-memory)")
    module = tmp_path / "a.vmpack"
    done = mlirtext("compile", write("a.mlir", ALLOC_TENSOR), "-o", module, "--target=reference")
    assert done.returncode == 0, done.stderr
    assert_error(mlirtext("run", module, "--device=reference", "--max-memory=1GiB"), NEEDS)


def test_a_broadcast_above_the_limit_is_refused_before_it_is_made(write):
    done = mlirtext("run", write("b.mlir", BROADCAST.format(n=1500000000)), "--input=f32=1", "--max-memory=4GiB")
    assert_error(done, "tensor<1500000000xf32> needs 5.59 GiB, above the 4 GiB limit (--max-memory)", line=2)


def test_an_llvm_level_allocation_above_the_limit(write):
    done = mlirtext("run", write("m.mlir", MALLOC), "--function=main", "--max-memory=1GiB")
    assert_error(done, "a heap allocation (100000000000 bytes) needs 93.1 GiB, above the 1 GiB limit", line=4)


def test_a_huge_input_is_refused_before_it_is_made(write):
    done = mlirtext("run", write("id.mlir", IDENTITY), "--input=100000000000xf32=1", "--max-memory=1GiB")
    assert_error(done, f"--input #0 (100000000000xf32=1): {NEEDS}")


def _npy_header(count: int) -> bytes:
    """The header of a version 1.0 .npy file of `count` float32s."""
    header = f"{{'descr': '<f4', 'fortran_order': False, 'shape': ({count},), }}"
    header += " " * (117 - len(header)) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode()


def test_an_npy_header_declaring_a_huge_shape(write, tmp_path):
    npy = tmp_path / "big.npy"
    npy.write_bytes(_npy_header(100000000000) + bytes(16))
    done = mlirtext("run", write("id.mlir", IDENTITY), f"--input=@{npy}")
    assert_error(done, f"cannot load '{npy}' as a .npy array")
    small = tmp_path / "small.npy"  # a whole file, above the limit: refused before it is read in
    np.save(small, np.zeros(4096, np.float32))
    done = mlirtext("run", write("s.mlir", IDENTITY.replace(HUGE, "tensor<4096xf32>")), f"--input=@{small}",
                    "--max-memory=4KiB")
    assert_error(done, f"'{small}' (4096 float32) needs 16 KiB, above the 4 KiB limit (--max-memory)")


@pytest.mark.parametrize("inputs,message", [
    (["--input=4xi32=0x7fffffffffff", "--input=i8=1"],
     "--input #0 (4xi32=0x7fffffffffff): 140737488355327 is out of range for i32"),
    (["--input=4xi32=1", "--input=i8=1000"], "--input #1 (i8=1000): 1000 is out of range for i8 (-128..255)"),
    (["--input=4xi32=1", "--input=-129"], "--input #1 (-129): -129 is out of range for i8"),
    (["--input=4xi32=1", "--input=i100=1"], "integers wider than 64 bits (i100) are not supported"),
    (["--input=" + "1x" * 70 + "4xi32=1", "--input=i8=1"],   # was numpy's ValueError, a traceback
     "71 axes, above the 64 an array may have"),
])
def test_input_values_are_checked_against_their_element_type(write, inputs, message):
    assert_error(mlirtext("run", write("ints.mlir", INTS), *inputs), message)


def test_signless_inputs_take_their_unsigned_values_too(write):
    done = mlirtext("run", write("ints.mlir", INTS), "--input=4xi32=4294967295", "--input=i8=255")
    assert done.returncode == 0, done.stderr
    assert "4xi32=-1 -1 -1 -1" in done.stdout and "i8=-1" in done.stdout


def test_an_input_shape_too_large_for_any_machine(write):
    done = mlirtext("run", write("id.mlir", IDENTITY), "--input=99999999999999999999999999xf32=1")
    assert_error(done, "--input #0 (99999999999999999999999999xf32=1): tensor<99999999999999999999999999xf32> "
                       "needs 331 YiB, above the")


def test_compile_refuses_a_constant_above_the_limit(write, tmp_path):
    done = mlirtext("compile", write("huge.mlir", SPLAT), "-o", tmp_path / "m.vmpack", "--max-memory=1GiB")
    assert_error(done, NEEDS, line=2)
    assert not (tmp_path / "m.vmpack").exists()


def test_compile_refuses_integers_the_vm_cannot_hold(write, tmp_path):
    done = mlirtext("compile", write("wide.mlir", WIDE), "-o", tmp_path / "m.vmpack")
    assert_error(done, "the VM cannot hold i16777215: integers wider than 64 bits (i16777215) are not supported",
                 line=1)


def test_the_vm_refuses_a_result_buffer_above_the_limit(write, tmp_path):
    module = tmp_path / "m.vmpack"
    done = mlirtext("compile", write("empty.mlir", EMPTY), "-o", module, "--target=reference")
    assert done.returncode == 0, done.stderr
    assert_error(mlirtext("run", module, "--max-memory=1GiB"), NEEDS)


def test_a_module_constant_whose_record_declares_a_huge_shape(write, tmp_path):
    """A module file (checksums and all) whose constant's record in the manifest declares 10^11
    elements: refused at load, before anything is allocated or mapped for it, whatever the limit."""
    module = tmp_path / "c.vmpack"
    done = mlirtext("compile", write("c.mlir", "func.func @main() -> tensor<4xf32> {\n"
                                     "  %c = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>\n"
                                     "  return %c : tensor<4xf32>\n}\n"), "-o", module, "--target=reference")
    assert done.returncode == 0, done.stderr

    def declare(manifest):
        manifest["constants"]["c0"]["shape"] = [100000000000]
    module.write_bytes(rewritten(module.read_bytes(), declare))
    for limit in ("1GiB", "1000GiB"):
        assert_error(mlirtext("run", module, f"--max-memory={limit}"),
                     "the module file is malformed: constant c0: 400000000000 bytes at offset 0 are not inside "
                     "the 16-byte weights")


def test_check_reports_the_limit_as_the_function_s_error(write):
    done = mlirtext("check", write("huge.mlir", SPLAT.replace("-> " + HUGE, "").replace(
        f"return %0 : {HUGE}", "return")), "--max-memory=1GiB")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert NEEDS in done.stdout


def test_opt_evaluating_a_function_is_held_to_the_limit(write):
    done = mlirtext("opt", write("huge.mlir", SPLAT), "--canonicalize", "--check-semantics", "--max-memory=1GiB")
    assert_error(done, f"--check-semantics could not run @main before pass 'canonicalize': {NEEDS}", line=2)


def test_long_results_are_elided_as_iree_run_module_does(write, tmp_path):
    program = write("b.mlir", BROADCAST.format(n=5000))
    done = mlirtext("run", program, "--input=f32=2")
    assert done.returncode == 0, done.stderr
    printed = done.stdout.splitlines()[-1]
    assert printed == "5000xf32=" + " ".join(["2"] * 1024) + "..."
    out = tmp_path / "y.npy"
    done = mlirtext("run", program, "--input=f32=2", f"--output=@{out}")
    assert done.returncode == 0, done.stderr
    np.testing.assert_array_equal(np.load(out), np.full(5000, 2, np.float32))


@pytest.mark.parametrize("count,printed", [
    (0, "2x3x4xi32=[[...][...][...]][[...][...][...]]"),
    (1, "2x3x4xi32=[[0...][...][...]][[...][...][...]]"),
    (5, "2x3x4xi32=[[0 1 2 3][4...][...]][[...][...][...]]"),
    (13, "2x3x4xi32=[[0 1 2 3][4 5 6 7][8 9 10 11]][[12...][...][...]]"),
])
def test_elision_format_matches_iree_run_module(write, count, printed):
    # (the figures are iree-run-module 3.13's own output for the same module and inputs)
    program = write("c.mlir", "func.func @main(%b: tensor<2x3x4xi32>) -> tensor<2x3x4xi32> {\n"
                              "  return %b : tensor<2x3x4xi32>\n}\n")
    done = mlirtext("run", program, f"--input=2x3x4xi32={' '.join(map(str, range(24)))}",
                    f"--output_max_element_count={count}")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == printed


@pytest.mark.parametrize("text,nbytes", [("1000000", 1000000), ("512K", 512 << 10), ("1.5G", 3 << 29),
                                         ("12GiB", 12 << 30), ("2tb", 2 << 40), (" 8 MiB ", 8 << 20)])
def test_sizes_as_people_write_them(text, nbytes):
    assert limits.parse_size(text) == nbytes


@pytest.mark.parametrize("text", ["", "lots", "12X", "-1G", "1e9", "5i"])
def test_what_is_not_a_size(text):
    with pytest.raises(ValueError):
        limits.parse_size(text)


def test_sizes_print_with_three_digits_in_the_largest_unit():
    assert [limits.format_size(n) for n in (800, 1023 << 10, 12 << 30, 400_000_000_000, 6_000_000_000)] == \
        ["800 B", "1023 KiB", "12 GiB", "373 GiB", "5.59 GiB"]


@pytest.mark.parametrize("literal, message", [
    ("0x" + "f" * 5000, "integer constant out of range for attribute of type i64"),   # printed: a traceback
    ("9" * 5000, "integer literal of 5000 digits is too long"),   # was an internal error
    ("0x10000000000000000", "integer constant out of range for attribute of type i64"),
    ("-9223372036854775809", "integer constant out of range for attribute of type i64"),
])
def test_integer_literals_out_of_their_type_s_range(write, literal, message):
    path = write("long.mlir", f"func.func @main() -> i64 {{\n  %0 = arith.constant {literal} : i64\n"
                              "  return %0 : i64\n}\n")
    for command in (("opt", path), ("compile", path, "-o", path.with_suffix(".vmpack"))):
        assert_error(mlirtext(*command), message, line=2)


def test_integer_literals_at_the_ends_of_their_range(write):
    done = mlirtext("opt", write("ends.mlir", "func.func @main() -> (i8, i8, i1, index) {\n"
                                 "  %a = arith.constant 255 : i8\n  %b = arith.constant -128 : i8\n"
                                 "  %c = arith.constant -1 : i1\n  %d = arith.constant 0xffffffffffffffff : index\n"
                                 "  return %a, %b, %c, %d : i8, i8, i1, index\n}\n"))
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("literal, message", [
    ("[0x" + "f" * 5000 + ", 1]", "integer constant out of range for element type i64"),   # printed: a traceback
    ("[" + "9" * 5000 + ", 1]", "an integer in the elements literal has too many digits"),
    ("[-9223372036854775809, 1]", "integer constant out of range for element type i64"),
    ("18446744073709551616", "integer constant out of range for element type i64"),
])
def test_dense_integers_out_of_their_element_type_s_range(write, literal, message):
    path = write("dense.mlir", f"func.func @main() -> tensor<2xi64> {{\n  %0 = arith.constant dense<{literal}> : "
                               "tensor<2xi64>\n  return %0 : tensor<2xi64>\n}\n")
    assert_error(mlirtext("opt", path), message, line=2)


NEGATE = """func.func @neg(%x: tensor<256xf32>) -> tensor<256xf32> {
  %r = stablehlo.negate %x : tensor<256xf32>
  return %r : tensor<256xf32>
}
"""


@pytest.mark.parametrize("device, target", [("opencl", "opencl-spirv"), ("vulkan", "vulkan-spirv")])
def test_a_gpu_dispatch_s_buffers_are_held_to_the_limit(write, tmp_path, device, target):
    """Input and output each within the limit, but the device holds both at once (2 KiB)."""
    from .gpu_status import need_tools
    need_tools("spirv-val", "llvm-spirv")
    module = tmp_path / "neg.vmpack"
    done = mlirtext("compile", write("neg.mlir", NEGATE), "-o", module, f"--target={target}")
    assert done.returncode == 0, done.stderr
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = mlirtext("run", module, f"--device={device}", "--input=256xf32=1", "--max-memory=4KiB", env=env)
    if done.returncode == 1 and "no " in done.stderr and "device" in done.stderr.lower():
        pytest.skip(f"no {device} device here: {done.stderr.strip()}")
    assert done.returncode == 0 and "256xf32=-1 -1" in done.stdout, done.stderr
    done = mlirtext("run", module, f"--device={device}", "--input=256xf32=1", "--max-memory=1536B", env=env)
    assert_error(done, f"{device} kernel @neg_dispatch_0 (its buffers on the device) needs 2 KiB, above the "
                       "1.5 KiB limit (--max-memory)")


def test_the_cuda_device_checks_its_buffers_before_allocating(monkeypatch):
    """Without an NVIDIA GPU: a cuda device over a driver that fails the test on any call past
    making the context current, so the check must come before the first cuMemAlloc. A
    scratch buffer the executable declares counts; the device's own memory is a limit too."""
    from mlirtext.vm.cuda_device import CudaDevice
    from mlirtext.vm.devices import DeviceError

    class Driver:
        def cuCtxSetCurrent(self, context):
            return 0

        def __getattr__(self, name):
            raise AssertionError(f"{name} was called")

    device = object.__new__(CudaDevice)
    device.lib, device.context, device.capacity, device.functions = Driver(), None, 80 << 30, {"k": object()}
    spec = {"inputs": [{"shape": [256], "element": "f32"}, {"shape": None, "element": "i32"}]}
    launch = {"workgroups": 1, "workgroup_size": 64, "scratch": [1 << 40]}
    inputs, outputs = [np.ones(256, np.float32), np.int32(3)], [np.zeros(256, np.float32)]
    monkeypatch.setattr(limits, "_configured", 2 << 40)
    with pytest.raises(DeviceError, match=r"cuda kernel @k \(its buffers on the device\) needs 1 TiB, above the "
                                          r"80 GiB of the device's memory"):
        device._dispatch("k", launch, spec, inputs, outputs)
    monkeypatch.setattr(limits, "_configured", 1 << 30)
    with pytest.raises(DeviceError, match=r"needs 1 TiB, above the 1 GiB limit \(--max-memory\)"):
        device._dispatch("k", launch, spec, inputs, outputs)
