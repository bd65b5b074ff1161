"""A module's weights (issue 21): stored once, uncompressed and aligned in the module file, mapped
(not read or copied) when the VM loads it from a path, checked against their checksum before the
first call uses them; identical dispatches compiled once."""
from __future__ import annotations

import io
import json
import mmap
import re
import struct
import subprocess
import sys
import zipfile

import numpy as np
import pytest

from mlirtext import runtime
from mlirtext.compiler.driver import compile_source
from mlirtext.compiler.packed_weights import pack_panels
from mlirtext.vm.modfile import ALIGNMENT, WEIGHTS, ModuleFileError, read_module_file

from .test_vm_programs import ROOT

#: A layer with a 512x512 weight of random bits (1 MiB that no compression shrinks), a bias, and a
#: splat (one value everywhere) that it also returns.
ROWS = 512
WEIGHT = np.random.default_rng(0).standard_normal((ROWS, ROWS), dtype=np.float32)
BIAS = np.arange(ROWS, dtype=np.float32) / ROWS
#: The weight as the module stores it: packed at compile time as the matmul's micro-kernel reads it
#: (compiler/prepack.py; a batch of one, as the matmul is a batch_matmul of one).
STORED = pack_panels(WEIGHT.reshape(1, ROWS, ROWS))


def _dense(array: np.ndarray) -> str:
    return f'dense<"0x{array.tobytes().hex().upper()}">'


LAYER = f"""func.func @layer(%x: tensor<8x{ROWS}xf32>) -> (tensor<8x{ROWS}xf32>, tensor<8x{ROWS}xf32>) {{
  %w = stablehlo.constant {_dense(WEIGHT)} : tensor<{ROWS}x{ROWS}xf32>
  %b = stablehlo.constant {_dense(BIAS)} : tensor<{ROWS}xf32>
  %s = stablehlo.constant dense<0.25> : tensor<8x{ROWS}xf32>
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<8x{ROWS}xf32>, tensor<{ROWS}x{ROWS}xf32>) -> tensor<8x{ROWS}xf32>
  %1 = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<{ROWS}xf32>) -> tensor<8x{ROWS}xf32>
  %2 = stablehlo.add %0, %1 : tensor<8x{ROWS}xf32>
  %3 = stablehlo.multiply %2, %s : tensor<8x{ROWS}xf32>
  return %3, %s : tensor<8x{ROWS}xf32>, tensor<8x{ROWS}xf32>
}}"""


X = np.random.default_rng(1).standard_normal((8, ROWS), dtype=np.float32)


def right(got) -> bool:
    """Whether @layer's results for X are right."""
    return np.allclose(got[0], (X.astype(np.float64) @ WEIGHT + BIAS) * 0.25, rtol=1e-4, atol=1e-4) and \
        np.array_equal(got[1], np.full((8, ROWS), 0.25, np.float32))


@pytest.fixture(scope="module")
def layer(tmp_path_factory) -> tuple[bytes, object]:
    data = runtime.compile_text(LAYER, filename="layer.mlir")
    path = tmp_path_factory.mktemp("weights") / "layer.vmpack"
    path.write_bytes(data)
    return data, path


def weights_at(data: bytes) -> tuple[int, int]:
    """(offset in the file of the weights' first byte, their size), from the zip's own headers."""
    info = zipfile.ZipFile(io.BytesIO(data)).getinfo(WEIGHTS)
    assert info.compress_type == zipfile.ZIP_STORED
    name_length, extra_length = struct.unpack("<HH", data[info.header_offset + 26:info.header_offset + 30])
    return info.header_offset + 30 + name_length + extra_length, info.file_size


def test_weights_are_stored_once_uncompressed_and_aligned(layer):
    data, _ = layer
    start, size = weights_at(data)
    assert start % ALIGNMENT == 0
    # Every 4 KiB piece of the weight is in the file exactly once: in the weights, nowhere else.
    raw = STORED.tobytes()
    for at in range(0, len(raw), 4096):
        assert data.count(raw[at:at + 4096]) == 1
        assert start <= data.find(raw[at:at + 4096]) < start + size
    # The whole file is the weights and a little more (code, host program, manifest, MLIR).
    assert WEIGHT.nbytes < len(data) < WEIGHT.nbytes + 96 * 1024, len(data)
    mf = read_module_file(data)
    constants = mf.manifest["constants"]
    assert all(c["offset"] % ALIGNMENT == 0 for c in constants.values())
    assert sorted((c["shape"], c.get("splat", False)) for c in constants.values()) == \
        sorted([([1, ROWS], False), ([8, ROWS], True), (list(STORED.shape), False)])   # (the bias as a row)
    assert size < WEIGHT.nbytes + BIAS.nbytes + 3 * ALIGNMENT   # (the splat: one value)
    # The MLIR kept for inspection names the weights, it does not repeat them.
    source = mf.entry("source/dispatched.mlir").decode()
    assert source.count("dense_resource<c") == 3 and "0x" not in source
    assert len(source) < 8192


def test_a_module_loaded_from_a_path_maps_its_weights(layer):
    _, path = layer
    m = runtime.load_module(path, device="local-sync")
    loaded = m.vm_module
    by_shape = {a.shape: a for a in loaded.constants.values()}
    weight = by_shape[STORED.shape]
    assert np.array_equal(weight, STORED)
    assert not weight.flags.owndata and not weight.flags.writeable
    base = weight
    while isinstance(base, np.ndarray):
        base = base.base
    assert isinstance(base, memoryview) and isinstance(base.obj, mmap.mmap)   # the file's pages
    assert weight.ctypes.data % ALIGNMENT == 0
    assert not loaded.ready   # (checked before the first call, not at load)
    assert right(m.layer(X))
    assert loaded.ready
    # The bytes of a file load the same way, the weights viewed in place.
    m = runtime.load_module(path.read_bytes(), device="local-task")
    assert not any(a.flags.owndata for a in m.vm_module.constants.values() if a.shape == STORED.shape)
    assert right(m.layer(X))


def test_a_damaged_weight_byte_is_refused_before_any_call_uses_it(layer, tmp_path):
    data, _ = layer
    start, size = weights_at(data)
    damaged = bytearray(data)
    damaged[start + size // 2] ^= 0x10
    bad = tmp_path / "bad.vmpack"
    bad.write_bytes(bytes(damaged))
    message = f"entry '{WEIGHTS}' does not match its checksum"
    with pytest.raises(ModuleFileError, match=message):   # a full read checks everything
        read_module_file(bytes(damaged))
    for source in (bad, bytes(damaged)):
        m = runtime.load_module(source, device="local-sync")   # (a load maps the weights, unread)
        with pytest.raises(runtime.VMError, match=message):
            m.layer(X)
        with pytest.raises(runtime.VMError, match=message):   # every call, not only the first
            m.layer(X)
        with pytest.raises(runtime.VMError, match=message):
            runtime.load_module(source, device="local-sync").vm_module.verify()
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    for command in (["run", str(bad), f"--input={8}x{ROWS}xf32=1", "--device=local-task"], ["dump", str(bad)]):
        r = subprocess.run([sys.executable, "-m", "mlirtext", *command], env=env, capture_output=True, text=True,
                           timeout=120)
        assert r.returncode == 1 and message in r.stderr and "Traceback" not in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1


def test_weights_rewritten_by_another_zip_tool_still_load(layer):
    """A file whose weights another tool deflated, or stored off the boundary, loads by copying them."""
    data, _ = layer
    src = zipfile.ZipFile(io.BytesIO(data))
    for compression in (zipfile.ZIP_DEFLATED, zipfile.ZIP_STORED):
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", compression) as z:
            for name in [WEIGHTS] + [n for n in src.namelist() if n != WEIGHTS]:   # (weights first: at byte 41)
                z.writestr(name, src.read(name))
        assert compression == zipfile.ZIP_DEFLATED or weights_at(out.getvalue())[0] % ALIGNMENT
        m = runtime.load_module(out.getvalue(), device="local-sync")
        weight = next(a for a in m.vm_module.constants.values() if a.shape == STORED.shape)
        assert weight.ctypes.data % ALIGNMENT == 0 and np.array_equal(weight, STORED)
        assert right(m.layer(X))


def test_constant_records_outside_the_weights_are_refused(layer):
    from .test_vm_module_file import rewritten
    data, _ = layer

    def edit(change):
        def apply(manifest):
            for c in manifest["constants"].values():
                change(c)
        return apply
    for change, why in ((lambda c: c.update(offset=c["offset"] + 4), "boundary"),
                        (lambda c: c.update(offset=1 << 40), "not inside"),
                        (lambda c: c.update(shape=[1 << 20, 1 << 20]), "not inside"),
                        (lambda c: c.update(dtype="O"), "not a number type"),
                        (lambda c: c.update(splat="yes"), "splat")):
        with pytest.raises(runtime.VMError, match=why):
            runtime.load_module(rewritten(data, edit(change)), device="local-sync")


CHAIN = """func.func @chain(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = stablehlo.dot %x, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %a = stablehlo.sine %0 : tensor<64x64xf32>
  %1 = stablehlo.dot %a, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %b = stablehlo.sine %1 : tensor<64x64xf32>
  %2 = stablehlo.dot %b, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  return %2 : tensor<64x64xf32>
}"""


def test_identical_dispatches_are_compiled_once():
    """Each dispatch keeps its kernel (its record, its reference kernel, the source ops it came
    from); the native code of identical ones is generated once, the others' entry points call it.
    (A sine between the matmuls: no epilogue takes it, so each is a dispatch of its own; a tanh
    would run in the matmul's epilogue.)"""
    compiled = compile_source(CHAIN, "chain.mlir")
    calls = [i["kernel"] for i in compiled.programs[0].instructions if i["op"] == "dispatch"]
    assert len(calls) == len(set(calls)) == len(compiled.kernels) == 5
    ir = compiled.llvm_ir
    bodies = {name: re.search(r"^define [^@]*@" + re.escape(name) + r"\(.*?^}$", ir, re.M | re.S).group(0)
              for name in calls}
    forwarded = {name: re.findall(r"call void @(\w+)\(", body) for name, body in bodies.items()}
    assert forwarded[calls[2]] == forwarded[calls[4]] == [calls[0]] and forwarded[calls[3]] == [calls[1]]
    assert all(len(bodies[name]) < 300 for name in calls[2:])   # (a call, not a copy of the code)
    for name in calls[2:]:
        first = calls[0] if name in (calls[2], calls[4]) else calls[1]
        assert compiled.kernels[name].get("workgroups") == compiled.kernels[first].get("workgroups")   # (its take too)
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((64, 64), dtype=np.float32), rng.standard_normal((64, 64), dtype=np.float32) / 8
    want = np.sin(np.sin(x @ w) @ w) @ w
    for device in ("local-sync", "local-task", "reference"):
        got = runtime.load_module(runtime.compile_text(CHAIN), device=device).chain(x, w)
        assert np.allclose(got, want, rtol=1e-4, atol=1e-5)


def test_a_host_program_that_would_write_into_a_constant_is_refused(layer):
    """Constants are mapped read-only: a dispatch that names one (or a view of one) as its output would
    fault in native code, so the file is refused before it loads."""
    from mlirtext.vm.signing import checksum

    from .test_vm_module_file import rewritten
    data, _ = layer
    mf = read_module_file(data)
    path = mf.manifest["exports"][0]["program"]
    prog = json.loads(mf.entry(path))
    splat = next(n for n, c in mf.manifest["constants"].items() if c.get("splat"))
    register = next(i["dst"] for i in prog["instructions"] if i["op"] == "constant" and i["name"] == splat)
    last = [i for i in prog["instructions"] if i["op"] == "dispatch"][-1]
    last["outs"] = [register]   # (the splat has the output's shape and type)
    body = json.dumps(prog).encode()
    bad = rewritten(data, lambda m: m["entries"][path].update(sha256=checksum(body), size=len(body)), {path: body})
    with pytest.raises(runtime.VMError, match="writes a constant"):
        runtime.load_module(bad, device="local-sync")
