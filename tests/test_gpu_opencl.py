"""The opencl-spirv target and the `opencl` device (pocl's CPU driver without a GPU): SPIR-V for
OpenCL's Kernel execution model from the LLVM IR path, validated by spirv-val, run by pocl after
`llvm-spirv -r`, giving the reference device's outputs on the bundled examples, the benchmark
programs, the tiled matmuls and the row reductions (tolerances as on `vulkan`)."""
from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest

from mlirtext.api import parse_and_verify
from mlirtext.targets.gpu import compile_gpu
from mlirtext.targets.gpu.tiling import TILE
from mlirtext.compiler.driver import compile_module
from mlirtext.compiler.module_writer import pack
from mlirtext.vm.vm import LoadedModule

from .gpu_status import need_tools, reference_kernels
from .test_gpu_tiled import PROGRAMS as MATMULS, REDUCTIONS, _inputs
from .test_vm_programs import PROGRAMS


@pytest.fixture(autouse=True)
def _pocl_cache_out_of_home(monkeypatch, tmp_path_factory):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "cache"))


def _opencl_or_skip():
    need_tools("spirv-val", "llvm-spirv")
    from mlirtext.vm.devices import DeviceError
    from mlirtext.vm.opencl_device import context
    try:
        return context()
    except DeviceError as e:
        pytest.skip(f"no OpenCL device here: {e}")


def _same(got, want, what: str) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype, what
    if want.dtype.kind in "iub":
        assert np.array_equal(got, want), what
    else:   # GPU kernels round (and sum) differently from the interpreter
        scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
        err = np.abs(got.astype(np.float64) - want)
        assert np.all(err <= 1e-5 * scale + 1e-4 * np.abs(want)), f"{what}: max |diff| {err.max()}"


def _run_both(text: str, name: str, seed: int = 0, tiling: str | None = None):
    compiled = compile_module(parse_and_verify(text, name).module, "opencl-spirv", validate=True)
    assert compiled.gpu["opencl-spirv"].validated == ["spirv-val opencl1.2"]
    if tiling:
        assert any(k.get("tiling") == tiling for k in compiled.gpu["opencl-spirv"].launches.values())
    data = pack(compiled)
    gpu, ref = LoadedModule(data, "opencl"), LoadedModule(data, "reference")
    (fn,) = gpu.functions
    args = _inputs(gpu.function(fn), seed)
    for got, want in zip(gpu.function(fn)(*args), ref.function(fn)(*args)):
        _same(got, want, name)


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_opencl_matches_the_reference_device(path):
    _opencl_or_skip()
    _run_both(path.read_text(), str(path))


@pytest.mark.parametrize("name", MATMULS)
def test_tiled_matmul_matches_the_reference_device_on_opencl(name):
    _opencl_or_skip()
    _run_both(MATMULS[name], name, tiling="matmul")


@pytest.mark.parametrize("name", REDUCTIONS)
def test_row_reductions_match_the_reference_device_on_opencl(name):
    _opencl_or_skip()
    _run_both(REDUCTIONS[name], name, seed=1, tiling="row reduction")


def test_the_spirv_is_opencl_flavoured():
    """Kernel execution model, Physical64 addressing, buffers in CrossWorkgroup storage (no generic
    pointers: OpenCL 1.2 has none), ids from OpenCL's builtin variables, and for a tiled kernel
    tiles in Workgroup storage between barriers."""
    compiled, kernels = reference_kernels(MATMULS["odd-33x65x17"])
    exe = compile_gpu(kernels, list(compiled.kernels), "opencl-spirv")
    (kernel,) = [k for k, launch in exe.launches.items() if launch.get("workgroup") == [TILE, TILE]]
    spirv = exe.assembly[kernel]
    assert "OpMemoryModel Physical64 OpenCL" in spirv and re.search(rf"OpEntryPoint Kernel %\w+ \"{kernel}\"", spirv)
    assert "OpTypePointer CrossWorkgroup" in spirv and "OpTypePointer Workgroup" in spirv
    assert "GenericPointer" not in spirv and "OpTypePointer Generic" not in spirv
    for builtin in ("WorkgroupId", "LocalInvocationId"):
        assert f"BuiltIn {builtin}" in spirv
    assert spirv.count("OpControlBarrier") >= 2
    assert "define spir_kernel void @" in exe.llvm_ir and "ptr addrspace(1) noalias" in exe.llvm_ir
    assert "@_Z7barrierj(i32 1)" in exe.llvm_ir and "addrspace(3) global" in exe.llvm_ir


def test_spirv_val_and_the_reader_accept_every_kernel(tmp_path):
    """Each kernel passes spirv-val for OpenCL 1.2, and llvm-spirv reads it back (after the
    scalar OpConstantNull rewrite) into bitcode that declares the kernel."""
    need_tools("spirv-val", "llvm-spirv")
    from mlirtext.targets.gpu.validate import need_tool, run_tool
    from mlirtext.vm.opencl_device import _scalar_nulls, spir_bitcode
    compiled, kernels = reference_kernels((PROGRAMS[0]).read_text())
    exe = compile_gpu(kernels, list(compiled.kernels), "opencl-spirv", validate=True)
    for name, code in exe.code.items():
        rewritten = tmp_path / f"{name}.spv"
        rewritten.write_bytes(_scalar_nulls(code))
        run_tool([need_tool("spirv-val"), "--target-env", "opencl1.2", str(rewritten)], name)
        text = run_tool([need_tool("spirv-dis"), str(rewritten)], name)
        assert not re.search(r"= OpConstantNull %(u?(char|short|int|long)|float|double|half|bool)\b", text)
        assert spir_bitcode(code, name)[:4] == b"BC\xc0\xde"


def test_no_platform_is_a_clear_error(monkeypatch):
    pyopencl = pytest.importorskip("pyopencl")
    from mlirtext.vm import opencl_device
    from mlirtext.vm.devices import DeviceError
    monkeypatch.setattr(opencl_device, "_state", {})
    monkeypatch.setattr(pyopencl, "get_platforms", lambda: [])
    with pytest.raises(DeviceError, match="no OpenCL platform"):
        opencl_device.context()


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "mlirtext", *args], capture_output=True, text=True, cwd=cwd)


def test_compile_dump_and_run_from_the_command_line(tmp_path):
    _opencl_or_skip()
    src = tmp_path / "relu.mlir"
    src.write_text("""func.func @relu(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<3x4xf32>
  %r = stablehlo.maximum %x, %z : tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}""")
    out = tmp_path / "relu.vmpack"
    done = _cli("compile", str(src), "--target=llvm-cpu,opencl-spirv", "--validate", "-o", str(out))
    assert done.returncode == 0, done.stderr
    listing = _cli("dump", str(out), "--print-target-code")
    assert listing.returncode == 0, listing.stderr
    assert "//----- opencl-spirv kernels (spirv, opencl1.2; validated: spirv-val opencl1.2) -----" in listing.stdout
    assert "OpEntryPoint Kernel" in listing.stdout
    values = " ".join(str(v) for v in np.arange(-6, 6) / 2)
    ran = _cli("run", str(out), "--device=opencl", f"--input=3x4xf32={values}")
    assert ran.returncode == 0, ran.stderr
    assert "EXEC @relu" in ran.stdout and "3x4xf32=[0 0 0 0][0 0 0 0.5][1 1.5 2 2.5]" in ran.stdout


def test_a_module_without_opencl_code_is_refused(tmp_path):
    src = tmp_path / "neg.mlir"
    src.write_text("""func.func @neg(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = stablehlo.negate %x : tensor<4xf32>
  return %r : tensor<4xf32>
}""")
    out = tmp_path / "neg.vmpack"
    assert _cli("compile", str(src), "-o", str(out)).returncode == 0
    ran = _cli("run", str(out), "--device=opencl", "--input=4xf32=1 2 3 4")
    assert ran.returncode == 1 and "Traceback" not in ran.stderr
    assert "no opencl-spirv executable" in ran.stderr and "--target=opencl-spirv" in ran.stderr


def test_a_pointer_of_unknown_address_space_is_a_compile_error():
    """A pointer chosen by a phi is not in the translated IR's forms: refused, never guessed."""
    from mlirtext.targets.gpu.executable import GpuCompileError
    from mlirtext.targets.gpu.llvm_gpu import _opencl_address_spaces
    ir = """define internal void @k.body(ptr %a, ptr %b, i1 %c) alwaysinline {
entry:
  br i1 %c, label %x, label %y
x:
  br label %y
y:
  %p = phi ptr [ %a, %entry ], [ %b, %x ]
  store float 0.0, ptr %p
  ret void
}
"""
    with pytest.raises(GpuCompileError, match=r"@k\.body: cannot tell the address space of %p"):
        _opencl_address_spaces(ir)
    placed = _opencl_address_spaces(ir.replace("%p = phi ptr [ %a, %entry ], [ %b, %x ]",
                                               "%p = getelementptr float, ptr %a, i64 1"))
    assert "store float 0.0, ptr addrspace(1) %p" in placed and "(ptr addrspace(1) %a, ptr addrspace(1) %b" in placed


#: A kernel that copies buffers (memref.copy, `llvm.memcpy` in LLVM IR) between global memory
#: and private temporaries: its memcpys must be named for those address spaces.
SOLVE = """func.func @solve(%a: tensor<4x4xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %eye = stablehlo.constant dense<[[4.0, 0.0, 0.0, 0.0], [0.0, 4.0, 0.0, 0.0],
                                   [0.0, 0.0, 4.0, 0.0], [0.0, 0.0, 0.0, 4.0]]> : tensor<4x4xf32>
  %well = stablehlo.add %a, %eye : tensor<4x4xf32>
  %x = "stablehlo.triangular_solve"(%well, %b) {left_side = true, lower = true, unit_diagonal = false,
         transpose_a = #stablehlo<transpose NO_TRANSPOSE>} : (tensor<4x4xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return %x : tensor<4x3xf32>
}"""


def test_a_kernel_copying_buffers_matches_the_reference_device_on_opencl():
    compiled, kernels = reference_kernels(SOLVE)
    exe = compile_gpu(kernels, list(compiled.kernels), "opencl-spirv")
    calls = set(re.findall(r"call void @(llvm\.memcpy\.[\w.]+)\(", exe.llvm_ir))
    assert "llvm.memcpy.p1.p1.i64" in calls and "llvm.memcpy.p1.p0.i64" in calls, calls
    _opencl_or_skip()
    _run_both(SOLVE, "solve", seed=2)


def test_memory_intrinsics_are_named_for_their_pointers_address_spaces():
    from mlirtext.targets.gpu.llvm_gpu import _opencl_address_spaces
    ir = """@c = internal constant [4 x float] zeroinitializer
define internal void @k.body(ptr %out) alwaysinline {
  %t = alloca [16 x i8], align 16
  call void @llvm.memset.p0.i64(ptr %t, i8 0, i64 16, i1 false)
  call void @llvm.memcpy.p0.p0.i64(ptr %out, ptr @c, i64 16, i1 false)
  call void @llvm.memmove.p0.p0.i64(ptr %t, ptr %out, i64 16, i1 false)
  ret void
}
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)
declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)
declare void @llvm.memmove.p0.p0.i64(ptr, ptr, i64, i1)
"""
    placed = _opencl_address_spaces(ir)
    assert "call void @llvm.memset.p0.i64(ptr %t, i8 0, i64 16, i1 false)" in placed   # private stays p0
    assert "call void @llvm.memcpy.p1.p2.i64(ptr addrspace(1) %out, ptr addrspace(2) @c, i64 16, i1 false)" in placed
    assert "call void @llvm.memmove.p0.p1.i64(ptr %t, ptr addrspace(1) %out, i64 16, i1 false)" in placed
    assert "declare void @llvm.memcpy.p1.p2.i64(ptr addrspace(1), ptr addrspace(2), i64, i1)" in placed
    assert "declare void @llvm.memmove.p0.p1.i64(ptr, ptr addrspace(1), i64, i1)" in placed
    assert placed.count("declare void @llvm.memset.p0.i64(") == 1


COSINE_F64 = """func.func @cos(%x: tensor<64xf64>) -> tensor<64xf64> {
  %y = stablehlo.cosine %x : tensor<64xf64>
  return %y : tensor<64xf64>
}"""


def test_add_with_carry_is_expanded_for_the_spirv_reader(tmp_path):
    """The f64 cosine's Payne-Hanek reduction adds with carry (OpIAddCarry), which llvm-spirv 15
    cannot read: the device expands it, the result still passes spirv-val, and the kernel gives
    the reference device's outputs."""
    need_tools("spirv-val", "llvm-spirv")
    from mlirtext.targets.gpu.validate import need_tool, run_tool
    from mlirtext.vm.opencl_device import _carries
    compiled, kernels = reference_kernels(COSINE_F64)
    exe = compile_gpu(kernels, list(compiled.kernels), "opencl-spirv")
    (name,) = [k for k, a in exe.assembly.items() if "OpIAddCarry" in a]
    expanded = tmp_path / "expanded.spv"
    expanded.write_bytes(_carries(exe.code[name]))
    run_tool([need_tool("spirv-val"), "--target-env", "opencl1.2", str(expanded)], name)
    text = run_tool([need_tool("spirv-dis"), str(expanded)], name)
    assert "OpIAddCarry" not in text and "OpULessThan" in text
    _opencl_or_skip()
    _run_both(COSINE_F64, "cos", seed=3)


#: One thread fills a 128 KiB private temporary (the iota, fused into the unpack's kernel).
UNPACK_IOTA = """func.func @unpack_iota() -> tensor<128x256xi32> {
  %init = tensor.empty() : tensor<4x16x32x16xi32>
  %c7 = arith.constant 7 : index
  %source = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>],
                            iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
                           outs(%init : tensor<4x16x32x16xi32>) {
  ^bb0(%unused: i32):
    %a = linalg.index 0 : index
    %c = linalg.index 2 : index
    %d = linalg.index 3 : index
    %ac = arith.muli %a, %c7 : index
    %acc = arith.addi %ac, %c : index
    %v = arith.muli %acc, %d : index
    %r = arith.index_cast %v : index to i32
    linalg.yield %r : i32
  } -> tensor<4x16x32x16xi32>
  %out = tensor.empty() : tensor<128x256xi32>
  %unpacked = linalg.unpack %source inner_dims_pos = [0, 1] inner_tiles = [32, 16] into %out
      : tensor<4x16x32x16xi32> -> tensor<128x256xi32>
  return %unpacked : tensor<128x256xi32>
}"""


def test_a_kernel_with_a_large_private_temporary_runs_on_opencl(tmp_path):
    """Launched in workgroups of 64 items, pocl gave each its own copy of the 128 KiB temporary
    and the process died on its stack (now the temporary is a scratch buffer: test_gpu_scratch.py);
    run in a child, so that such a crash fails this test alone."""
    _opencl_or_skip()
    src, out = tmp_path / "unpack.mlir", tmp_path / "unpack.vmpack"
    src.write_text(UNPACK_IOTA)
    done = _cli("compile", str(src), "--target=opencl-spirv", "--validate", "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert compile_gpu(*_kernels(UNPACK_IOTA), "opencl-spirv").launches["unpack_iota_dispatch_0"]["scratch"] == [131072]
    ran, want = (_cli("run", str(out), f"--device={d}", "--output=@" + str(tmp_path / f"{d}.npy"))
                 for d in ("opencl", "reference"))
    assert ran.returncode == 0 and want.returncode == 0, ran.stderr + want.stderr
    assert np.array_equal(np.load(tmp_path / "opencl.npy"), np.load(tmp_path / "reference.npy"))


def _kernels(text: str) -> tuple:
    compiled, kernels = reference_kernels(text)
    return kernels, list(compiled.kernels)


MIN_MAX = """func.func @min_max(%a: tensor<8xf32>, %b: tensor<8xf32>, %c: tensor<8xf64>, %d: tensor<8xf64>)
    -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf64>, tensor<8xf64>) {
  %0 = stablehlo.maximum %a, %b : tensor<8xf32>
  %1 = stablehlo.minimum %a, %b : tensor<8xf32>
  %2 = stablehlo.maximum %c, %d : tensor<8xf64>
  %3 = stablehlo.minimum %c, %d : tensor<8xf64>
  return %0, %1, %2, %3 : tensor<8xf32>, tensor<8xf32>, tensor<8xf64>, tensor<8xf64>
}"""


def test_maximum_and_minimum_propagate_nan_and_order_the_zeros_on_opencl():
    """OpenCL's fmax / fmin (what LLVM's SPIR-V back-end makes of llvm.maximum / minimum) drop a
    NaN operand and may return either zero: the kernel gives the reference's NaNs and values, and
    orders the zeros as arith.maximumf / minimumf specify (-0 < +0)."""
    _opencl_or_skip()
    a = np.array([np.nan, 1.0, -0.0, 0.0, np.inf, -np.inf, 2.0, np.nan])
    b = np.array([1.0, np.nan, 0.0, -0.0, 3.0, -1.0, 2.0, np.nan])
    compiled = compile_module(parse_and_verify(MIN_MAX, "min_max").module, "opencl-spirv", validate=True)
    data = pack(compiled)
    args = [a.astype(np.float32), b.astype(np.float32), a, b]
    got = LoadedModule(data, "opencl").function("min_max")(*args)
    want = LoadedModule(data, "reference").function("min_max")(*args)
    for g, w, zero_sign in zip(got, want, (False, True, False, True)):
        assert np.array_equal(np.isnan(g), np.isnan(w)) and np.array_equal(np.isnan(w), [1, 1, 0, 0, 0, 0, 0, 1])
        assert np.array_equal(g[~np.isnan(g)], w[~np.isnan(w)]), (g, w)
        assert list(np.signbit(g[2:4])) == [zero_sign, zero_sign], g


BF16 = """func.func @bf16(%a: tensor<4x8xbf16>, %b: tensor<4x8xbf16>) -> (tensor<4x8xbf16>, tensor<4x8xbf16>) {
  %0 = stablehlo.multiply %a, %b : tensor<4x8xbf16>
  %1 = stablehlo.add %0, %a : tensor<4x8xbf16>
  %2 = stablehlo.maximum %a, %b : tensor<4x8xbf16>
  return %1, %2 : tensor<4x8xbf16>, tensor<4x8xbf16>
}"""


def test_bf16_is_emulated_and_matches_the_reference_device_on_opencl():
    """LLVM's SPIR-V back-end writes bf16 only with SPV_KHR_bfloat16: as on vulkan-spirv, the
    kernels hold bf16 in f32 registers rounded after every op and in memory as their 16 bits."""
    compiled, kernels = reference_kernels(BF16)
    exe = compile_gpu(kernels, list(compiled.kernels), "opencl-spirv")
    assert "bfloat" not in exe.llvm_ir
    _opencl_or_skip()
    import ml_dtypes
    data = pack(compile_module(parse_and_verify(BF16, "bf16").module, "opencl-spirv", validate=True))
    rng = np.random.default_rng(4)
    args = [rng.standard_normal((4, 8)).astype(ml_dtypes.bfloat16) for _ in range(2)]
    for got, want in zip(LoadedModule(data, "opencl").function("bf16")(*args),
                         LoadedModule(data, "reference").function("bf16")(*args)):
        assert got.dtype == want.dtype == ml_dtypes.bfloat16 and np.array_equal(got, want)   # (rounded alike)


# -- f16 without OpenCL's Float16 capability ---------------------------------------------------
def _bits_equal(got: np.ndarray, want: np.ndarray) -> bool:
    """Same dtype, shape and bits, any NaN for a NaN."""
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if want.dtype.kind != "f":
        return np.array_equal(got, want)
    bits = got.view(f"u{got.itemsize}") == want.view(f"u{want.itemsize}")
    return bool(np.all(bits | (np.isnan(got) & np.isnan(want))))


def _f16_program(n: int, m: int) -> str:
    h, c = f"tensor<{n}xf16>", f"tensor<{n}xi1>"
    return f"""func.func @arith(%a: {h}, %b: {h}) -> ({h}, {h}, {h}, {h}, {h}, {h}, {h}, {h}, {h}, {c}, {c}, tensor<{n}xf32>) {{
  %add = stablehlo.add %a, %b : {h}
  %sub = stablehlo.subtract %a, %b : {h}
  %mul = stablehlo.multiply %a, %b : {h}
  %div = stablehlo.divide %a, %b : {h}
  %neg = stablehlo.negate %a : {h}
  %max = stablehlo.maximum %a, %b : {h}
  %min = stablehlo.minimum %a, %b : {h}
  %sqrt = stablehlo.sqrt %a : {h}
  %floor = stablehlo.floor %a : {h}
  %lt = stablehlo.compare LT, %a, %b : ({h}, {h}) -> {c}
  %eq = stablehlo.compare EQ, %a, %b : ({h}, {h}) -> {c}
  %wide = stablehlo.convert %a : ({h}) -> tensor<{n}xf32>
  return %add, %sub, %mul, %div, %neg, %max, %min, %sqrt, %floor, %lt, %eq, %wide
      : {h}, {h}, {h}, {h}, {h}, {h}, {h}, {h}, {h}, {c}, {c}, tensor<{n}xf32>
}}
func.func @convert(%x: tensor<{m}xf32>, %d: tensor<{m}xf64>, %i: tensor<{m}xi32>, %h: tensor<{m}xf16>)
    -> (tensor<{m}xf16>, tensor<{m}xf16>, tensor<{m}xf16>, tensor<{m}xi32>, tensor<{m}xf64>) {{
  %0 = stablehlo.convert %x : (tensor<{m}xf32>) -> tensor<{m}xf16>
  %1 = stablehlo.convert %d : (tensor<{m}xf64>) -> tensor<{m}xf16>
  %2 = stablehlo.convert %i : (tensor<{m}xi32>) -> tensor<{m}xf16>
  %3 = stablehlo.convert %h : (tensor<{m}xf16>) -> tensor<{m}xi32>
  %4 = stablehlo.convert %h : (tensor<{m}xf16>) -> tensor<{m}xf64>
  return %0, %1, %2, %3, %4 : tensor<{m}xf16>, tensor<{m}xf16>, tensor<{m}xf16>, tensor<{m}xi32>, tensor<{m}xf64>
}}
func.func @sums(%a: tensor<64x100xf16>) -> tensor<64xf16> {{
  %z = stablehlo.constant dense<0.0> : tensor<f16>
  %s = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [1]
      : (tensor<64x100xf16>, tensor<f16>) -> tensor<64xf16>
  return %s : tensor<64xf16>
}}"""


def _f16_rounding_inputs(rng) -> tuple:
    """f32 values to round to f16: the midpoints of neighbouring finite f16 values (ties), the
    f32 and f64 values just beside them, values past f16's range, subnormal ones, specials."""
    values = np.unique(np.arange(1 << 16, dtype=np.uint16).view(np.float16).astype(np.float64))
    values = values[np.isfinite(values)]
    ties = rng.choice((values[1:] + values[:-1]) / 2, 3000, replace=False)
    specials = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 65504.0, 65519.99, 65520.0, -65520.0, 1e6,
                         2.0 ** -24, 2.0 ** -25, 2.0 ** -25 * 1.0001, 2.0 ** -26, 3 * 2.0 ** -26, 1e-30, 1e-45])
    f32 = np.concatenate([ties, np.nextafter(ties.astype(np.float32), np.float32(np.inf)),
                          np.nextafter(ties.astype(np.float32), np.float32(-np.inf)), specials]).astype(np.float32)
    f64 = np.concatenate([ties * (1 + 2.0 ** -40), ties * (1 - 2.0 ** -40), ties, specials])
    return f32, f64


def test_f16_is_emulated_without_the_float16_capability():
    """OpenCL 1.2 allows no half arithmetic: the opencl-spirv kernels hold f16 in f32 registers
    and i16 memory (spirv-val for OpenCL 1.2 passes), while vulkan-spirv keeps its Float16."""
    text = _f16_program(8, 8)
    compiled, kernels = reference_kernels(text)
    exe = compile_gpu(kernels, list(compiled.kernels), "opencl-spirv", validate=True)
    assert exe.validated == ["spirv-val opencl1.2"]
    assert " half" not in exe.llvm_ir and not any("Float16" in a for a in exe.assembly.values())
    vulkan = compile_gpu(kernels, list(compiled.kernels), "vulkan-spirv")
    assert any("OpCapability Float16" in a for a in vulkan.assembly.values())


def test_f16_arithmetic_and_conversions_match_the_reference_device_bit_for_bit_on_opencl():
    """Every f16 code against a shuffle of every code: add, subtract, multiply, divide, negate,
    maximum, minimum, sqrt, floor, compare, widen (inf, NaN, subnormals, -0 included); f32 and f64
    ties and their neighbours, overflow, subnormals and specials rounded to f16 once; i32 to f16
    (overflow to inf), f16 to i32 and f64; and f16 row sums, each partial sum rounded to f16."""
    _opencl_or_skip()
    rng = np.random.default_rng(16)
    a = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    b = rng.permutation(a)
    x, d = _f16_rounding_inputs(rng)
    m = len(x)
    ints = np.concatenate([rng.integers(-70000, 70000, m - 6), [65504, 65519, 65520, -65536, 2 ** 31 - 1, -2 ** 31]])
    finite = a[np.isfinite(a)]
    h = rng.choice(finite, m)
    text = _f16_program(len(a), m)
    data = pack(compile_module(parse_and_verify(text, "f16").module, "opencl-spirv", validate=True))
    gpu, ref = LoadedModule(data, "opencl"), LoadedModule(data, "reference")
    for fn, args in (("arith", [a, b]), ("convert", [x, d, ints.astype(np.int32), h])):
        for k, (got, want) in enumerate(zip(gpu.function(fn)(*args), ref.function(fn)(*args))):
            assert _bits_equal(got, want), f"@{fn} result {k}: {np.sum(got != want)} differ"
    rounded = ref.function("convert")(x, d, ints.astype(np.int32), h)
    with np.errstate(over="ignore"):
        assert _bits_equal(rounded[0], x.astype(np.float16)) and _bits_equal(rounded[1], d.astype(np.float16))
    # Row sums: the kernel adds in order, rounding each partial sum to f16 as the f16 adds of the
    # reduce's body say; numpy (so the reference device) sums f16 in f32 and rounds once, so the
    # reference is matched within tolerance and the f16 additions in order bit for bit.
    sums = rng.uniform(-4, 4, (64, 100)).astype(np.float16)
    (got,), (want,) = gpu.function("sums")(sums), ref.function("sums")(sums)
    in_order = np.zeros(64, np.float16)
    for column in sums.T:
        in_order = in_order + column
    assert _bits_equal(got, in_order) and not _bits_equal(in_order, want)   # (the inputs do tell)
    assert np.allclose(got.astype(np.float32), want.astype(np.float32), rtol=0.02, atol=0.1)


# -- i128: the optimiser's multiply-high ----------------------------------------------------------
MULHI = """func.func @mulhi(%a: tensor<64xui64>, %b: tensor<64xui64>, %c: tensor<64xi64>, %d: tensor<64xi64>)
    -> (tensor<64xui64>, tensor<64xi64>) {
  %0 = "chlo.mulhi"(%a, %b) : (tensor<64xui64>, tensor<64xui64>) -> tensor<64xui64>
  %1 = "chlo.mulhi"(%c, %d) : (tensor<64xi64>, tensor<64xi64>) -> tensor<64xi64>
  return %0, %1 : tensor<64xui64>, tensor<64xi64>
}"""


def test_64_bit_multiply_high_needs_no_i128_on_opencl():
    """LLVM folds chlo.mulhi's 32-bit partial products into an i128 multiply, which SPIR-V for
    OpenCL cannot hold: the kernel calls OpenCL's mul_hi instead, passes spirv-val, and gives the
    reference device's values (extremes, signs and random 64-bit values) on opencl."""
    compiled, kernels = reference_kernels(MULHI)
    exe = compile_gpu(kernels, list(compiled.kernels), "opencl-spirv", validate=True)
    assert any("u_mul_hi" in a for a in exe.assembly.values())
    _opencl_or_skip()
    rng = np.random.default_rng(64)
    top = np.iinfo(np.uint64).max
    edges = np.array([0, 1, 2, top, top - 1, 1 << 63, (1 << 63) - 1, 1 << 32, (1 << 32) - 1, 17293822569102704640],
                     np.uint64)
    a = np.concatenate([edges, rng.integers(0, top, 54, np.uint64, endpoint=True)])
    b = np.concatenate([edges[::-1], rng.integers(0, top, 54, np.uint64, endpoint=True)])
    args = [a, b, a.view(np.int64), rng.permutation(b).view(np.int64)]
    data = pack(compile_module(parse_and_verify(MULHI, "mulhi").module, "opencl-spirv", validate=True))
    got = LoadedModule(data, "opencl").function("mulhi")(*args)
    want = LoadedModule(data, "reference").function("mulhi")(*args)
    exact = [(int(x) * int(y)) >> 64 for x, y in zip(a, b)]
    assert np.array_equal(want[0], np.array(exact, dtype=np.uint64))
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and np.array_equal(g, w)


def test_an_i128_other_than_multiply_high_is_a_clear_error():
    """After the optimiser: a multiply-high chain becomes mul_hi (its dead i128s dropped); any
    other i128 is reported, naming the instruction, instead of stopping LLVM."""
    from mlirtext.targets.gpu.wide_multiply import WideIntegerError, mul_hi_for_i128
    chain = """define i64 @f(i64 %a, i64 %b) {
  %0 = sext i64 %a to i128
  %1 = sext i64 %b to i128
  %2 = mul nsw i128 %1, %0
  %3 = lshr i128 %2, 64
  %r = trunc nuw i128 %3 to i64
  ret i64 %r
}"""
    rewritten = mul_hi_for_i128(chain)
    assert "i128" not in rewritten and "%r = call i64 @_Z6mul_hill(i64 %b, i64 %a)" in rewritten
    assert "declare i64 @_Z6mul_hill(i64, i64)" in rewritten
    # unsigned, with a constant operand, in a second function reusing the value names (and one
    # whose name ends in i128)
    unsigned = chain.replace("sext", "zext").replace("@f(", "@g_i128(").replace("%1, %0", "%1, 18446744073709551615")
    rewritten = mul_hi_for_i128(chain + "\n" + unsigned)
    assert "%r = call i64 @_Z6mul_himm(i64 %b, i64 -1)" in rewritten and "%r = call i64 @_Z6mul_hill" in rewritten
    assert "i128 " not in rewritten and "%0 = " not in rewritten
    with pytest.raises(WideIntegerError, match="integer arithmetic has no opencl-spirv form: %0 = sext i64 %a to i128"):
        mul_hi_for_i128(chain.replace("lshr i128 %2, 64", "lshr i128 %2, 63"))
