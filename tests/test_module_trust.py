"""Module files that are checked and can be trusted (issue 22): a forged module (its object rebuilt
with a kernel that runs a shell command, re-hashed so that every checksum holds) runs without
trusted keys and is refused with them before its object is loaded; unsigned and wrongly signed
files are refused when keys are given; damaged manifests and host programs, bit flips and
truncations give one line and exit status 1 through `run`, `dump` and `load_module`, each in a
child process (a signal or a traceback is a failure)."""
from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import zipfile

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from mlirtext import runtime
from mlirtext.targets.llvm_cpu import compile_llvm_ir
from mlirtext.vm.modfile import VERSION, ModuleFileError, read_module_file
from mlirtext.vm.signing import INTEGRITY, checksum, generate_key, load_public_keys, seal
from mlirtext.vm.vm import LoadedModule

from .test_vm_module_file import rewritten
from .test_vm_programs import ROOT, module_file

pytest.importorskip("cryptography")

DENSE = ROOT / "examples" / "dense_linalg.mlir"
INPUTS = ["--input=4x8xf32=1", "--input=8x16xf32=0.5", "--input=16xf32=-1"]
ENV = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
OBJECT = "executables/llvm-cpu/kernels.o"

#: `mlirtext ARGS` in a child process whose llvm-cpu object loader first leaves a mark in file
#: argv[1] (so a test sees whether the object was ever loaded); `dump` must not even import llvmlite.
CLI_CHILD = """
import sys
dump = sys.argv[2] == "dump"
if not dump:
    import mlirtext.targets.llvm_cpu as llvm_cpu
    real, mark = llvm_cpu.load_object, sys.argv[1]
    def load_object(code):
        open(mark, "a").write("loaded\\n")
        return real(code)
    llvm_cpu.load_object = load_object
from mlirtext.cli import main
status = main(sys.argv[2:])
if dump and "llvmlite" in sys.modules:
    print("dump imported llvmlite", file=sys.stderr)
    status = 3
sys.exit(status)
"""

#: `runtime.load_module(argv[1])` and one call on zeros, in a child process: exit 1 with one line
#: for a refused module.
LOAD_CHILD = """
import sys
import numpy as np
from mlirtext import runtime
try:
    m = runtime.load_module(sys.argv[1], device="local-sync")
    for name in m.exports:
        fn = m[name].vm_function
        fn(*[np.zeros(r["shape"] or (), r["dtype"]) for r in fn.inputs])
except runtime.VMError as e:
    print(f"error: {e}", file=sys.stderr)
    sys.exit(1)
"""


def child(script: str, *args, timeout: int = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", script, *map(str, args)], env=ENV, capture_output=True,
                          text=True, timeout=timeout)


def cli(mark, *args) -> subprocess.CompletedProcess:
    return child(CLI_CHILD, mark, *args)


def refused_cleanly(r: subprocess.CompletedProcess, what: str = "") -> str:
    """The one-line error of a child that refused its input: exit 1 (not a signal), no traceback."""
    assert r.returncode == 1, f"{what}: exit status {r.returncode} (a negative one is a signal)\n{r.stderr[-2000:]}"
    assert "Traceback" not in r.stderr, f"{what}:\n{r.stderr[-2000:]}"
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, f"{what}: {r.stderr}"
    return lines[0]


def entries_of(data: bytes) -> dict:
    z = zipfile.ZipFile(io.BytesIO(data))
    return {name: z.read(name) for name in z.namelist()}


def archive(entries: dict) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, body in entries.items():
            z.writestr(name, body)
    return out.getvalue()


def resealed(entries: dict, manifest: bytes, keep_seal: bool = False, keep_signature: bool = False) -> bytes:
    """The archive with `manifest` and a fresh unsigned seal for it (what anyone without the key can
    make); `keep_signature`: the fresh seal carries the old seal's signature; `keep_seal`: the old seal."""
    entries = dict(entries, **{"manifest.json": manifest})
    if not keep_seal:
        old = json.loads(entries[INTEGRITY])
        entries[INTEGRITY] = seal(manifest)
        if keep_signature:
            entries[INTEGRITY] = json.dumps(dict(json.loads(entries[INTEGRITY]), signature=old["signature"])).encode()
    return archive(entries)


def edited(data: bytes, change_manifest=None, programs=None) -> bytes:
    """`data` with its manifest edited by `change_manifest(manifest)` and each host program by
    `programs(program)`, every checksum updated: only the validation can refuse it."""
    entries = entries_of(data)
    replace = {}
    if programs is not None:
        for export in json.loads(entries["manifest.json"])["exports"]:
            prog = json.loads(entries[export["program"]])
            programs(prog)
            replace[export["program"]] = json.dumps(prog).encode()

    def change(manifest):
        for path, body in replace.items():
            manifest["entries"][path]["sha256"] = checksum(body)
        if change_manifest is not None:
            change_manifest(manifest)
    return rewritten(data, change, replace)


def forged(data: bytes, marker, keep_signature: bool = False) -> bytes:
    """`data` with its object rebuilt: every kernel first runs `touch MARKER` (system()), then its
    own code; the object's checksum updated in the manifest, and the manifest's in the seal."""
    entries = entries_of(data)
    manifest = json.loads(entries["manifest.json"])
    ir = entries[manifest["executables"]["llvm-cpu"]["llvm_ir"]].decode()
    command = f"touch {marker}".encode() + b"\0"
    extra = [f'@forged.cmd = private constant [{len(command)} x i8] c"{command[:-1].decode()}\\00"',
             "declare i32 @system(ptr)"]
    for name in manifest["kernels"]:
        m = re.search(r"^define void @" + re.escape(name) + r"\((.*)\)[^()]*\{$", ir, re.M)
        params = [p.strip() for p in m.group(1).split(",")]
        args = ", ".join(f"{p.split()[0]} {p.split()[-1]}" for p in params)
        ir = ir[:m.start()] + f"define void @{name}.original(" + ir[m.start() + len(f"define void @{name}("):]
        extra += [f"define void @{name}({', '.join(params)}) {{", "entry:",
                  "  %r = call i32 @system(ptr @forged.cmd)", f"  call void @{name}.original({args})",
                  "  ret void", "}"]
    entries[OBJECT] = compile_llvm_ir(ir + "\n" + "\n".join(extra) + "\n").object_code
    manifest["entries"][OBJECT]["sha256"] = checksum(entries[OBJECT])
    return resealed(entries, json.dumps(manifest, indent=1).encode(), keep_signature=keep_signature)


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    """(private key path, its public key path, another public key path)."""
    d = tmp_path_factory.mktemp("keys")
    generate_key(str(d / "signer"))
    generate_key(str(d / "other"))
    return d / "signer", d / "signer.pub", d / "other.pub"


@pytest.fixture(scope="module")
def signed(keys, tmp_path_factory):
    out = tmp_path_factory.mktemp("signed") / "dense.vmpack"
    # (--keep-llvm-ir: the forger below rebuilds the object from the module's own LLVM IR)
    r = subprocess.run([sys.executable, "-m", "mlirtext", "compile", str(DENSE), "--sign", str(keys[0]),
                        "--keep-llvm-ir", "-o", str(out)], env=ENV, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return out.read_bytes()


def test_a_forged_module_runs_without_keys_and_is_refused_with_them_before_its_object_is_loaded(
        signed, keys, tmp_path):
    marker, mark = tmp_path / "forged-kernel-ran", tmp_path / "object-loaded"
    for keep_signature in (False, True):   # re-sealed unsigned, or still carrying the original signature
        bad = tmp_path / f"forged-{keep_signature}.vmpack"
        bad.write_bytes(forged(signed, marker, keep_signature))
        line = refused_cleanly(cli(mark, "run", bad, *INPUTS, "--device=local-sync", "--trusted-keys", keys[1]),
                               "forged")
        assert ("not made by a trusted key" if keep_signature else "not signed") in line
        assert not marker.exists() and not mark.exists()
    # The forgery is a real one: every checksum holds, and without keys its kernel runs the command.
    r = cli(mark, "run", bad, *INPUTS, "--device=local-sync")
    assert r.returncode == 0, r.stderr
    assert marker.exists() and mark.exists()


def test_unsigned_and_wrongly_signed_modules_are_refused_and_a_signed_one_runs(signed, keys, tmp_path):
    mark = tmp_path / "object-loaded"
    unsigned = tmp_path / "unsigned.vmpack"
    unsigned.write_bytes(module_file(DENSE))
    good = tmp_path / "signed.vmpack"
    good.write_bytes(signed)
    assert "not signed" in refused_cleanly(cli(mark, "run", unsigned, *INPUTS, "--trusted-keys", keys[1]))
    line = refused_cleanly(cli(mark, "run", good, *INPUTS, "--trusted-keys", keys[2]))
    assert "not made by a trusted key" in line
    assert not mark.exists()
    r = cli(mark, "run", good, *INPUTS, f"--trusted-keys={keys[2]},{keys[1]}")
    assert r.returncode == 0 and "4x16xf32=[3 3 3" in r.stdout, r.stderr
    assert mark.exists()
    # The Python API: the same refusals, and the same file loads.
    with pytest.raises(runtime.VMError, match="not signed"):
        runtime.load_module(unsigned.read_bytes(), device="local-sync", trusted_keys=keys[1])
    with pytest.raises(runtime.VMError, match="not made by a trusted key"):
        runtime.load_module(signed, device="local-sync", trusted_keys=[keys[2]])
    assert runtime.load_module(signed, device="local-sync", trusted_keys=[keys[1]]).exports == ["dense"]
    assert runtime.load_module(unsigned.read_bytes(), device="local-sync").exports == ["dense"]   # no keys: trusted
    # A module file already read is checked too when keys are given.
    with pytest.raises(runtime.VMError, match="not signed"):
        LoadedModule(read_module_file(unsigned.read_bytes()), "local-sync", load_public_keys(keys[1]))
    assert LoadedModule(read_module_file(signed), "local-sync", load_public_keys(keys[1])).functions
    # dump checks a signature when given keys (and still maps no code).
    assert "one of the trusted keys given" in cli(mark, "dump", good, "--trusted-keys", keys[1]).stdout
    assert "not made by a trusted key" in refused_cleanly(cli(mark, "dump", good, "--trusted-keys", keys[2]))
    # A key file that is not a key is one line too.
    assert "not a public key" in refused_cleanly(cli(mark, "run", good, *INPUTS, "--trusted-keys", DENSE))


def test_dump_says_what_a_module_file_is_trusted_as_and_maps_no_code(signed, keys, tmp_path):
    mark = tmp_path / "object-loaded"
    for data, expect in ((module_file(DENSE), "unsigned: this module file is executable code"),
                         (signed, "signed by key SHA256:")):
        path = tmp_path / "m.vmpack"
        path.write_bytes(data)
        r = cli(mark, "dump", path)
        assert r.returncode == 0, r.stderr
        assert expect in r.stdout and "executable code" in r.stdout
    assert not mark.exists()
    r = subprocess.run([sys.executable, "-m", "mlirtext", "run", "--help"], env=ENV, capture_output=True, text=True)
    assert "native code" in " ".join(r.stdout.split()) and "--trusted-keys" in r.stdout


DEEP = 100_000


def _deep_manifest(data: bytes) -> bytes:
    entries = entries_of(data)
    manifest = entries["manifest.json"]
    deep = b'{"deep": ' + b"[" * DEEP + b"]" * DEEP + b", " + manifest.lstrip()[1:]
    return resealed(entries, deep)


def _times(key, factor):
    def change(manifest):
        for kernel in manifest["kernels"].values():
            if kernel.get("workgroups"):
                kernel["workgroups"][key] = kernel["workgroups"][key] * factor
    return change


#: The damaged manifests and host programs of issue 22 (each re-hashed and re-sealed).
EDITS = {
    "kernels null": lambda d: edited(d, lambda m: m.update(kernels=None)),
    "entries []": lambda d: edited(d, lambda m: m.update(entries=[])),
    "exports 5": lambda d: edited(d, lambda m: m.update(exports=5)),
    "missing object path": lambda d: edited(d, lambda m: m["executables"]["llvm-cpu"].pop("object")),
    "object path elsewhere": lambda d: edited(d, lambda m: m["executables"]["llvm-cpu"].update(object="nope.o")),
    "100k-deep nesting": _deep_manifest,
    "plan offsets 10^12": lambda d: edited(d, programs=lambda p: p["plan"].update(
        offsets=[10 ** 12] * len(p["plan"]["offsets"]))),
    "pool_bytes 0": lambda d: edited(d, programs=lambda p: p["plan"].update(pool_bytes=0)),
    "registers 1": lambda d: edited(d, programs=lambda p: p.update(registers=1)),
    "workgroups x 100000": lambda d: edited(d, _times("count", 100_000)),
    "workgroups negative": lambda d: edited(d, _times("count", -1)),
    "workgroup block x 100000": lambda d: edited(d, _times("block", 100_000)),
    "kernel output shrunk": lambda d: edited(d, lambda m: [k["outputs"][0].update(shape=[1])
                                                           for k in m["kernels"].values()]),
    "export signature changed": lambda d: edited(d, lambda m: m["exports"][0]["inputs"][0].update(shape=[1, 1])),
    "slot too small": lambda d: edited(d, programs=lambda p: p["plan"].update(slots=[4] * len(p["plan"]["slots"]))),
    "no return": lambda d: edited(d, programs=lambda p: p["instructions"].pop()),
    "register string": lambda d: edited(d, programs=lambda p: [i.update(ins=["0"] * len(i["ins"]))
                                                               for i in p["instructions"] if i["op"] == "dispatch"]),
    "element type of 5,000 digits": lambda d: edited(d, lambda m: m["exports"][0]["inputs"][0].update(
        element="i" + "9" * 5000)),
    "split kernel's workgroups dropped": lambda d: edited(d, lambda m: [k.pop("workgroups")
                                                                       for k in m["kernels"].values()]),
    "zip bomb": lambda d: archive({**entries_of(d), "source/dispatched.mlir": b"\n" * (100 << 20)}),
    "manifest not re-hashed": lambda d: resealed(entries_of(d), entries_of(d)["manifest.json"].replace(
        b'"version": %d' % VERSION, b'"version": %d, "x": 1' % VERSION), keep_seal=True),
}


@pytest.fixture(scope="module")
def mlp_file():
    """A module with a pool (the MLP's intermediate) and micro-kernels split into workgroups."""
    return module_file(ROOT / "benchmarks" / "programs" / "mlp.mlir")


@pytest.mark.parametrize("edit", EDITS)
def test_damaged_manifests_and_host_programs_are_refused_cleanly(edit, mlp_file, tmp_path):
    bad = tmp_path / "bad.vmpack"
    bad.write_bytes(EDITS[edit](mlp_file))
    mark = tmp_path / "object-loaded"
    for args in (("run", bad, "--device=local-sync"), ("run", bad, "--device=local-task"), ("dump", bad)):
        line = refused_cleanly(cli(mark, *args), f"{edit}: {args[0]}")
        assert line.startswith("mlirtext: error:") or "error:" in line
    refused_cleanly(child(LOAD_CHILD, bad), f"{edit}: load_module")
    assert not mark.exists()   # refused before any native code was mapped


#: Damaged files tried per run (each a child process, about a second): CI's sample; set
#: MLIRTEXT_HOSTILE_EXAMPLES for a longer run.
FLIP_EXAMPLES = int(os.environ.get("MLIRTEXT_HOSTILE_EXAMPLES", "12"))


@settings(max_examples=FLIP_EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(data=st.data(), command=st.sampled_from(["run", "dump", "load"]), truncate=st.booleans())
def test_bit_flips_and_truncations_give_one_line_and_exit_1(tmp_path_factory, data, command, truncate):
    original = module_file(DENSE)
    if truncate:
        damaged = original[:data.draw(st.integers(0, len(original) - 1), label="length")]
    else:
        at = data.draw(st.integers(0, len(original) - 1), label="byte")
        bit = data.draw(st.integers(0, 7), label="bit")
        damaged = original[:at] + bytes([original[at] ^ (1 << bit)]) + original[at + 1:]
    path = tmp_path_factory.mktemp("flip") / "m.vmpack"
    path.write_bytes(damaged)
    if command == "load":
        r = child(LOAD_CHILD, path)
    else:
        r = cli(path.with_suffix(".mark"), command, path, *(INPUTS if command == "run" else ()))
    if r.returncode == 0:   # a flip in bytes nothing reads (the zip's timestamps, a comment's padding)
        return
    refused_cleanly(r, f"{command} of a damaged file")


#: Each split kernel of module file argv[1], called with rows [-5, 1000 x count) on an output with a
#: guard region after it: the output must be what the whole range gives, and the guard untouched.
CLAMP_CHILD = """
import sys
import numpy as np
from mlirtext.vm.devices import LocalSyncDevice
from mlirtext.vm.modfile import read_module_file
mf = read_module_file(open(sys.argv[1], "rb").read())
kernels = mf.manifest["kernels"]
device = LocalSyncDevice(mf.entry(mf.manifest["executables"]["llvm-cpu"]["object"]), kernels)
rng = np.random.default_rng(0)
split = [name for name, k in kernels.items() if k.get("workgroups")]
assert split, "no kernel is split into workgroups"
for name in split:
    spec, run = kernels[name], device.kernel(name)
    ins = [rng.standard_normal(r["shape"]).astype(r["dtype"]) for r in spec["inputs"]]
    want = np.zeros(spec["outputs"][0]["shape"], spec["outputs"][0]["dtype"])
    run(ins, [want])
    guarded = np.full(2 * want.size, 12345, want.dtype)
    got = guarded[:want.size].reshape(want.shape)
    run(ins, [got], rows=(-5, 1000 * spec["workgroups"]["count"]))
    assert np.array_equal(got, want, equal_nan=True), name
    assert (guarded[want.size:] == 12345).all(), f"@{name} wrote past its output"
print(f"{len(split)} split kernels checked")
"""


@pytest.mark.parametrize("program", ["mlp", "softmax"])
def test_split_kernels_clamp_any_range_to_the_one_they_were_compiled_for(program, tmp_path):
    """Native code holds the line by itself: a kernel called with any row range writes its output
    and not a byte past it (the micro-kernel's panels, the generated loops' rows). Without the
    clamp this segfaults, so it runs in a child process."""
    path = tmp_path / "m.vmpack"
    path.write_bytes(module_file(ROOT / "benchmarks" / "programs" / f"{program}.mlir"))
    r = child(CLAMP_CHILD, path)
    assert r.returncode == 0 and "split kernels checked" in r.stdout, r.stderr[-3000:]


def test_gpu_launches_that_disagree_with_themselves_are_refused():
    """A GPU kernel's launch record: its grid, workgroup and thread counts must agree."""
    data = runtime.compile_text((ROOT / "benchmarks" / "programs" / "mlp.mlir").read_text(), target="llvm-cpu,cuda")
    assert read_module_file(data).manifest["executables"]["cuda"]["kernels"]

    def launches(change):
        def edit(manifest):
            for info in manifest["executables"]["cuda"]["kernels"].values():
                change(info)
        return edit
    for change in (lambda k: k.update(workgroups=k["workgroups"] * 100_000),
                   lambda k: k.update(threads=k["threads"] * 100_000),
                   lambda k: k.update(workgroups=-1),
                   lambda k: k.update(grid=[1 << 40, 1, 1]) if "grid" in k else k.update(workgroup_size=0)):
        with pytest.raises(ModuleFileError, match="malformed"):
            read_module_file(edited(data, launches(change)))


#: Every field of the manifest and of the first host program of module file argv[1], in turn,
#: deleted or replaced by each hostile value, checksums updated; then dump (with the code) and a
#: load and call on zeros. Prints "edits N refused N ran N" and, for each exception other than the
#: refusal, one line naming the field. (In a child process: a signal fails the test.)
FIELD_EDITS_CHILD = """
import io, json, sys, zipfile
import numpy as np
from mlirtext import runtime
from mlirtext.vm.dump import dump
from mlirtext.vm.modfile import VERSION, ModuleFileError, read_module_file
from mlirtext.vm.signing import checksum, seal
DELETE = object()
VALUES = [DELETE, None, -1, 0, 10 ** 12, "x", [], {}, 1.5, True, [1], "i" + "9" * 5000, [2] * 100]
z = zipfile.ZipFile(sys.argv[1])
entries = {n: z.read(n) for n in z.namelist()}
program = json.loads(entries["manifest.json"])["exports"][0]["program"]

def fields(doc, path=()):
    yield path
    items = doc.items() if isinstance(doc, dict) else enumerate(doc[:2]) if isinstance(doc, list) else ()
    for key, value in items:
        if path or key != "entries":     # (the entries' checksums: the integrity test's part)
            yield from fields(value, path + (key,))

def edit(doc, path, value):
    for key in path[:-1]:
        doc = doc[key]
    if value is DELETE:
        del doc[path[-1]]
    else:
        doc[path[-1]] = value

counts = {"edits": 0, "refused": 0, "ran": 0}
for which in ("manifest.json", program):
    for path in list(fields(json.loads(entries[which])))[1:]:
        for value in VALUES:
            files = dict(entries)
            manifest, doc = json.loads(files["manifest.json"]), json.loads(files[which])
            edit(manifest if which == "manifest.json" else doc, path, value)
            if which != "manifest.json":
                files[which] = json.dumps(doc).encode()
                manifest["entries"][which]["sha256"] = checksum(files[which])
            files["manifest.json"] = json.dumps(manifest).encode()
            files["integrity.json"] = seal(files["manifest.json"])
            out = io.BytesIO()
            with zipfile.ZipFile(out, "w") as w:
                for name, body in files.items():
                    w.writestr(name, body)
            counts["edits"] += 1
            try:
                try:
                    dump(read_module_file(out.getvalue()), True, True)
                except ModuleFileError:
                    pass
                m = runtime.load_module(out.getvalue(), device="local-sync")
                for name in m.exports:
                    fn = m[name].vm_function
                    fn(*[np.zeros(r["shape"] or (), r["dtype"]) for r in fn.inputs])
                counts["ran"] += 1
            except runtime.VMError:
                counts["refused"] += 1
            except Exception as e:
                print(f"{which} {path} = {str(value)[:20]}: {type(e).__name__}: {str(e)[:120]}")
print(" ".join(f"{k} {v}" for k, v in counts.items()))
"""


@pytest.mark.slow
def test_every_field_edit_of_a_module_file_is_refused_or_runs_without_a_traceback(tmp_path):
    path = tmp_path / "dense.vmpack"
    path.write_bytes(module_file(DENSE))
    r = child(FIELD_EDITS_CHILD, path, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    lines = r.stdout.strip().splitlines()
    assert lines and lines[-1].startswith("edits ") and len(lines) == 1, r.stdout[-3000:]
    counts = dict(zip(lines[-1].split()[::2], map(int, lines[-1].split()[1::2])))
    assert counts["edits"] > 1000 and counts["refused"] > 0.9 * counts["edits"], counts


def test_keygen_writes_a_private_key_only_its_owner_reads_and_never_overwrites(tmp_path):
    key = tmp_path / "release.key"
    r = subprocess.run([sys.executable, "-m", "mlirtext", "keygen", str(key)], env=ENV, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0 and "SHA256:" in r.stdout, r.stderr
    assert key.stat().st_mode & 0o777 == 0o600
    assert key.read_text().startswith("-----BEGIN PRIVATE KEY-----")
    assert (tmp_path / "release.key.pub").read_text().startswith("-----BEGIN PUBLIC KEY-----")
    before = key.read_bytes()
    r = subprocess.run([sys.executable, "-m", "mlirtext", "keygen", str(key)], env=ENV, capture_output=True,
                       text=True, timeout=60)
    assert "never overwritten" in refused_cleanly(r) and key.read_bytes() == before
