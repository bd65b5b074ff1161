"""Module files and their users: bad files are refused before native code runs, bad inputs name
the argument, the CLI never shows a traceback, dump shows every section, memory reuse pays."""
from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
import zipfile

import numpy as np
import pytest

from mlirtext import runtime
from mlirtext.vm.modfile import VERSION, read_module_file
from mlirtext.vm.signing import INTEGRITY, seal

from .test_vm_programs import ROOT, module_file

DENSE = ROOT / "examples" / "dense_linalg.mlir"
MLP = ROOT / "benchmarks" / "programs" / "mlp.mlir"


@pytest.fixture
def mlirtext(capsys):
    """`mlirtext ARGS...` in this process: (exit status, stdout, stderr)."""
    from types import SimpleNamespace

    from mlirtext.cli import main

    def run(*args):
        code = main([str(a) for a in args])
        out = capsys.readouterr()
        return SimpleNamespace(returncode=code, stdout=out.out, stderr=out.err)
    return run


def test_cli_end_to_end_in_a_fresh_process(tmp_path):
    out = tmp_path / "dense.vmpack"
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    r = subprocess.run([sys.executable, "-m", "mlirtext", "compile", str(DENSE), "-o", str(out)], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([sys.executable, "-m", "mlirtext", "run", str(out), "--input=4x8xf32=1", "--input=8x16xf32=0.5",
                        "--input=16xf32=-1"], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "4x16xf32=[3 3 3" in r.stdout, r.stderr


def rewritten(data: bytes, change, replace: dict | None = None) -> bytes:
    """`data` with its manifest changed by `change(manifest)` and the entries of `replace`
    (path -> bytes) swapped in, the manifest's checksum updated (integrity.json), as anyone
    can: only a signature shows who made a file."""
    src = zipfile.ZipFile(io.BytesIO(data))
    bodies = {info.filename: (replace or {}).get(info.filename) or src.read(info.filename) for info in src.infolist()}
    manifest = json.loads(bodies["manifest.json"])
    change(manifest)
    bodies["manifest.json"] = json.dumps(manifest).encode()
    bodies[INTEGRITY] = seal(bodies["manifest.json"])
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for info in src.infolist():
            z.writestr(info, bodies[info.filename])
    return out.getvalue()


def refused(data: bytes) -> str:
    with pytest.raises(runtime.VMError) as e:
        runtime.load_module(data, device="local-sync")
    return str(e.value)


def test_truncated_file_is_refused():
    data = module_file(DENSE)
    for cut in (10, len(data) // 2, len(data) - 5):
        assert "truncated or corrupted" in refused(data[:cut]) or "not a module file" in refused(data[:cut])


def test_corrupted_object_code_is_refused_before_it_runs():
    data = bytearray(module_file(DENSE))
    z = zipfile.ZipFile(io.BytesIO(bytes(data)))
    info = z.getinfo("executables/llvm-cpu/kernels.o")
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    data[start + info.compress_size // 2] ^= 0xFF  # one flipped byte inside the (stored) object
    assert "corrupted" in refused(bytes(data))


def test_wrong_version_and_format_are_refused():
    data = module_file(DENSE)
    msg = refused(rewritten(data, lambda m: m.update(version=VERSION + 1)))
    assert f"version {VERSION + 1}" in msg and "recompile" in msg
    assert "not an mlirtext module file" in refused(rewritten(data, lambda m: m.update(format="iree-vmfb")))
    assert "not a module file" in refused(b"\x00" * 64)
    assert "not a module file" in refused(DENSE.read_bytes())


def test_checksum_mismatch_is_refused():
    def tamper(m):
        m["entries"]["executables/llvm-cpu/kernels.o"]["sha256"] = "0" * 64
    assert "does not match its checksum" in refused(rewritten(module_file(DENSE), tamper))


def test_reference_kernels_that_do_not_parse_are_refused_by_the_reference_device_only():
    """The reference device parses the file's kernel MLIR once, at load; a file whose kernels
    (checksum and all) are not valid MLIR is refused with one message there, and still runs natively."""
    path, bad = "executables/reference/kernels.mlir", b"func.func @broken( {"
    checksum = {"sha256": hashlib.sha256(bad).hexdigest(), "size": len(bad)}
    data = rewritten(module_file(DENSE), lambda m: m["entries"].update({path: checksum}), {path: bad})
    with pytest.raises(runtime.VMError, match="reference kernels do not parse"):
        runtime.load_module(data, device="reference")
    assert runtime.load_module(data, device="local-sync").exports == ["dense"]


def test_bad_inputs_name_the_argument():
    m = runtime.load_module(module_file(DENSE), device="local-sync")
    x, w, b = np.ones((4, 8), np.float32), np.ones((8, 16), np.float32), np.ones(16, np.float32)
    with pytest.raises(runtime.VMError, match=r"@dense takes 3 argument\(s\).*got 2"):
        m.dense(x, w)
    with pytest.raises(runtime.VMError, match=r"argument 1 \(%w\) of @dense: expected tensor<8x16xf32>, got shape 16x8"):
        m.dense(x, w.T.copy(), b)
    with pytest.raises(runtime.VMError, match=r"argument 2 \(%b\) of @dense: expected element type f32.*float64"):
        m.dense(x, w, b.astype(np.float64))
    with pytest.raises(runtime.VMError, match="argument 0 .*expected a numpy array"):
        m.dense([[1.0] * 8] * 4, w, b)
    assert m.dense(x, w, b).shape == (4, 16)


def test_f8e5m2_and_int4_values_cross_the_module_file():
    """f8E5M2's numpy string ('<f1') does not parse back, and onnx hands out int4 as ml_dtypes.int4:
    both as arguments, results and constants of a compiled module."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    m = runtime.load_module(runtime.compile_text("""func.func @f(%a: tensor<4xf8E5M2>, %n: tensor<4xi4>) -> (tensor<4xf8E5M2>, tensor<4xf32>) {
  %c = stablehlo.constant dense<[1.0, 2.0, 3.0, 0.5]> : tensor<4xf8E5M2>
  %s = stablehlo.add %a, %c : tensor<4xf8E5M2>
  %w = stablehlo.convert %n : (tensor<4xi4>) -> tensor<4xf32>
  return %s, %w : tensor<4xf8E5M2>, tensor<4xf32>
}""", filename="f8.mlir"), device="local-task")
    s, w = m.f(np.array([1, 1, 1, 1], ml_dtypes.float8_e5m2), np.array([-8, -1, 0, 7], ml_dtypes.int4))
    assert s.dtype == ml_dtypes.float8_e5m2 and s.astype(np.float32).tolist() == [2, 3, 4, 1.5]
    assert w.tolist() == [-8, -1, 0, 7]


def test_python_api_returns_a_tuple_for_several_results(tmp_path):
    src = tmp_path / "two.mlir"
    src.write_text("""func.func @two(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %s = stablehlo.add %a, %b : tensor<4xf32>
  %p = stablehlo.multiply %a, %b : tensor<4xf32>
  return %s, %a : tensor<4xf32>, tensor<4xf32>
}""")
    m = runtime.load_module(runtime.compile_file(str(src)), device="local-task")
    a, b = np.arange(4, dtype=np.float32), np.full(4, 2, np.float32)
    s, same = m.two(a, b)
    assert np.array_equal(s, a + b) and np.array_equal(same, a)
    assert same is not a  # an argument returned is copied: the caller owns every result


def test_memory_reuse_reduces_peak_bytes():
    # The MLP's matmuls carry their bias and relu (one kernel each): one intermediate buffer.
    mf = read_module_file(module_file(MLP))
    plan = mf.json(mf.manifest["exports"][0]["program"])["plan"]
    assert plan["buffers"] == 2 and plan["pool_bytes"] == 64 * 512 * 4
    # A chain of four matmul kernels: buffers whose last use has passed share pool slots.
    chain = """func.func @main(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = stablehlo.dot %x, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %1 = stablehlo.dot %0, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %2 = stablehlo.dot %1, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %3 = stablehlo.dot %2, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  return %3 : tensor<64x64xf32>
}"""
    mf = read_module_file(runtime.compile_text(chain))
    plan = mf.json(mf.manifest["exports"][0]["program"])["plan"]
    assert len(plan["slots"]) < plan["buffers"] - 1
    assert plan["peak_bytes"] < plan["without_reuse_bytes"]


def test_cli_compile_dump_run(tmp_path, mlirtext):
    out = tmp_path / "dense.vmpack"
    r = mlirtext("compile", DENSE, "-o", out, "--print-statistics")
    assert r.returncode == 0, r.stderr
    assert "peak memory" in r.stderr and out.is_file()
    d = mlirtext("dump", out)
    assert d.returncode == 0, d.stderr
    for section in ("Exports", "Host programs", "Constants", "Executables", "Kernels", "dispatch @dense_dispatch_0",
                    "kernels.o", "@dense(%x: tensor<4x8xf32>", ", vectors: "):
        assert section in d.stdout
    # The LLVM IR is kept only when asked for; the kernels' vector widths are in the manifest either way.
    assert "kernels.ll" not in d.stdout
    assert "not kept in this module file" in mlirtext("dump", out, "--ir").stdout
    kept = tmp_path / "dense-ir.vmpack"
    assert mlirtext("compile", DENSE, "-o", kept, "--keep-llvm-ir").returncode == 0
    d_kept = mlirtext("dump", kept, "--ir").stdout
    assert "kernels.ll" in d_kept and "define void @dense_dispatch_0(" in d_kept
    kernels = lambda text: text.split("//----- Kernels -----")[1].split("//-----")[0].strip()  # noqa: E731
    assert kernels(d_kept) == kernels(d.stdout)
    assert kept.stat().st_size > out.stat().st_size
    args = ["--input=4x8xf32=1", "--input=8x16xf32=0.5", "--input=16xf32=-1"]
    runs = [mlirtext("run", out, *args, f"--device={dev}") for dev in ("local-sync", "local-task", "reference")]
    runs.append(mlirtext("run", DENSE, *args))                          # the interpreter, as before
    runs.append(mlirtext("run", DENSE, *args, "--device=local-task"))   # compiled in memory
    for r in runs:
        assert r.returncode == 0, r.stderr
        assert r.stdout == runs[0].stdout
    assert "4x16xf32=[3 3 3" in runs[0].stdout


@pytest.mark.parametrize("make,expect", [
    (lambda p: p.write_bytes(b"PK\x03\x04garbage"), "truncated or corrupted"),
    (lambda p: p.write_bytes(module_file(DENSE)[:-100]), "truncated or corrupted"),
])
def test_cli_bad_module_file(tmp_path, make, expect, mlirtext):
    bad = tmp_path / "bad.vmpack"
    make(bad)
    for cmd in (("run", bad), ("dump", bad)):
        r = mlirtext(*cmd)
        assert r.returncode == 1 and expect in r.stderr and "Traceback" not in r.stderr


def test_cli_bad_inputs(tmp_path, mlirtext):
    out = tmp_path / "dense.vmpack"
    out.write_bytes(module_file(DENSE))
    r = mlirtext("run", out, "--input=4x8xf32=1")
    assert r.returncode == 1 and "@dense takes 3 argument(s)" in r.stderr and "Traceback" not in r.stderr
    r = mlirtext("run", out, "--input=4x8xf32=1", "--input=8x8xf32=1", "--input=16xf32=1")
    assert r.returncode == 1 and "expected tensor<8x16xf32>" in r.stderr
    r = mlirtext("run", out, "--function=nope")
    assert r.returncode == 1 and "no exported function @nope" in r.stderr
    r = mlirtext("compile", ROOT / "missing.mlir", "-o", tmp_path / "x.vmpack")
    assert r.returncode == 1 and "could not open" in r.stderr
    low = tmp_path / "low.mlir"
    low.write_text("func.func @f(%a: memref<4xf32>) { return }")
    r = mlirtext("compile", low, "-o", tmp_path / "x.vmpack")
    assert r.returncode == 1 and "at the loops level" in r.stderr and "Traceback" not in r.stderr
