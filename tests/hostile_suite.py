"""The hostile-input suite (issue 22): what a hostile user would feed mlirtext, each case in a
child process with a 30 s limit, counted per family.

    python -m tests.hostile_suite [--full] [--cases N] [--seed N] [-j N] [--families NAME ...]

Families:
  mutated   corpus cases (../shared/corpus or MLIRTEXT_CORPUS) with bytes flipped, deleted,
            duplicated and tokens swapped, through every command that reads MLIR
  huge      huge shapes and literals (10^11-element constants, memref.alloc, tensor.empty,
            bufferization.alloc_tensor, broadcasts, a 200,000-element dense literal, 5,000-digit
            integers, i16777215)
  inputs    `run --input` edge cases: out of range, huge shapes, malformed, .npy files whose
            headers lie, on the interpreter and on a module file
  modules   module files with bits flipped, truncated, fields edited (tests/test_module_trust.py's
            edits and hostile values) through `dump`, `run` and `load_module`
  lsp       malformed requests and bodies through the real language server (tests/lsp_raw.py)
  outputs   `-o` / `--output` onto a directory, a FIFO, a device node made in a temporary
            directory, symlinks, a read-only directory and file

Counted as bad: a "Traceback" on stderr, a signal (negative exit status), a hang (30 s), a request
the server never answered, a file lost or replaced (every file of a case's directory is compared
before and after: inputs intact, special files and symlinks still what they were, no temporaries
left), and an exit status other than 0 or 1. The table's bad columns must all be 0 (exit status 1
otherwise). Children run with MLIRTEXT_MAX_MEMORY=1GiB (the machine is shared) and an 8 GiB address
space limit, so an unchecked allocation shows as a traceback rather than swapping.
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import random
import re
import resource
import signal
import stat
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from tests.corpus import CORPUS as SHARED_CORPUS
from tests.lsp_raw import RawServer
from tests.test_lsp_hostile import DOC, GOOD, HERE, TEXT as LSP_TEXT, URI, damaged
from tests.test_module_trust import EDITS, INPUTS, LOAD_CHILD, edited, entries_of
from tests.test_vm_programs import ROOT, module_file

TIMEOUT = 30
CORPUS = Path(os.environ.get("MLIRTEXT_CORPUS", SHARED_CORPUS))
DENSE = ROOT / "examples" / "dense_linalg.mlir"
CHILD_ENV = {"PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'server'}", "PATH": "/usr/bin:/bin",
             "MLIRTEXT_MAX_MEMORY": "1GiB"}
ADDRESS_SPACE = 8 << 30
BAD = ("tracebacks", "signals", "hangs", "unanswered", "files lost", "other exits")
FAMILIES = ("mutated", "huge", "inputs", "modules", "lsp", "outputs")


@dataclass
class Case:
    """One child process: `argv` after `python`, run in a fresh directory holding `files`
    (name -> bytes, or a callable making the entry); `outputs`: names it may write or replace."""
    what: str
    argv: list
    files: dict = field(default_factory=dict)
    outputs: tuple = ()


@dataclass
class Tally:
    tried: int = 0
    bad: dict = field(default_factory=lambda: dict.fromkeys(BAD, 0))
    examples: list = field(default_factory=list)   # the first few bad cases, for the report

    def count(self, what: str, problems: list, detail: str = "") -> None:
        self.tried += 1
        for p in problems:
            self.bad[p] += 1
        if problems and len(self.examples) < 20:
            self.examples.append(f"{what}: {', '.join(problems)}: {detail}")


def mlirtext(*args) -> list:
    return ["-m", "mlirtext", *map(str, args)]


# -- running a case and judging it ----------------------------------------------------------------
def snapshot(directory: Path) -> dict:
    """name -> (kind, device number, link target, content hash) of every entry, without following links."""
    found = {}
    for path in sorted(directory.rglob("*")):
        st = path.lstat()
        kind = stat.S_IFMT(st.st_mode)
        found[str(path.relative_to(directory))] = (
            kind, st.st_rdev, os.readlink(path) if stat.S_ISLNK(st.st_mode) else None,
            hashlib.sha256(path.read_bytes()).hexdigest() if stat.S_ISREG(st.st_mode) else None)
    return found


def changed_files(before: dict, after: dict, outputs: tuple) -> list:
    """Entries lost, changed in kind or replaced, and entries left behind (temporaries)."""
    written = set(outputs) | {os.path.normpath(os.path.join(os.path.dirname(name), before[name][2]))
                              for name in outputs if name in before and before[name][2]}
    problems = [n for n, s in before.items() if n not in after or after[n][:3] != s[:3]
                or (n not in written and after[n] != s)]
    return problems + [n for n in after if n not in before and n not in outputs]


def limit_child() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def run_case(case: Case) -> tuple:
    """(problems, detail) of one case run in its own directory."""
    with tempfile.TemporaryDirectory(prefix="hostile-") as tmp:
        d = Path(tmp)
        for name, body in case.files.items():
            (d / name).write_bytes(body) if isinstance(body, bytes) else body(d / name)
        before = snapshot(d)
        p = subprocess.Popen([sys.executable, *case.argv], cwd=d, env=CHILD_ENV, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
                             preexec_fn=limit_child)
        try:
            _, err = p.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
            return ["hangs"], f"no answer in {TIMEOUT} s"
        stderr = err.decode("utf-8", "replace")
        problems = []
        if "Traceback" in stderr:
            problems.append("tracebacks")
        if p.returncode < 0:
            problems.append("signals")
        elif p.returncode not in (0, 1):
            problems.append("other exits")
        lost = changed_files(before, snapshot(d), case.outputs)
        if lost:
            problems.append("files lost")
        lines = stderr.strip().splitlines() or [""]
        said = lines[-1] if "tracebacks" in problems else lines[0]   # the exception, or the error
        return problems, f"exit {p.returncode}; {said[:200]}" + (f"; changed {lost}" if lost else "")


def run_cases(cases: list, jobs: int) -> Tally:
    tally = Tally()
    with ThreadPoolExecutor(jobs) as pool:
        for case, (problems, detail) in zip(cases, pool.map(run_case, cases)):
            tally.count(f"{case.what} [{' '.join(case.argv[2:4])}]", problems, detail)
    return tally


# -- the commands that read MLIR --------------------------------------------------------------------
def mlir_commands(name: str) -> dict:
    """Each command that reads MLIR on file `name`, and the outputs it may write."""
    return {
        "opt": (mlirtext("opt", name), ()),
        "opt --lower-to=llvm": (mlirtext("opt", name, "--lower-to=llvm"), ()),
        "check": (mlirtext("check", name, "--time-limit", 10), ()),
        "run": (mlirtext("run", name), ()),
        "compile": (mlirtext("compile", name, "-o", "out.vmpack"), ("out.vmpack",)),
        "translate": (mlirtext("translate", "--mlir-to-llvmir", "--lower", name, "-o", "out.ll"), ("out.ll",)),
        "dump": (mlirtext("dump", name), ()),
    }


def through_every_command(rng: random.Random, what: str, body: bytes) -> Case:
    command, (argv, outputs) = rng.choice(sorted(mlir_commands("in.mlir").items()))
    return Case(f"{what} | {command}", argv, {"in.mlir": body}, outputs)


# -- family 1: mutated corpus cases ---------------------------------------------------------------
def corpus_cases(limit_lines: int = 40) -> list:
    """The text of each valid corpus case of at most `limit_lines` lines."""
    texts, files = [], {}
    with open(CORPUS / "CASES.tsv", newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if row["valid_or_invalid"] != "valid" or int(row["n_lines"]) > limit_lines:
                continue
            if row["file"] not in files:
                files[row["file"]] = (CORPUS / row["file"]).read_bytes().split(b"\n")
            first = int(row["first_line"]) - 1
            texts.append(b"\n".join(files[row["file"]][first:first + int(row["n_lines"])]) + b"\n")
    return texts


def mutate(rng: random.Random, text: bytes) -> tuple:
    """`text` with one to three of: a bit flipped, a span deleted, a span duplicated, two tokens swapped."""
    names = []
    for _ in range(rng.randint(1, 3)):
        how = rng.choice(("flip", "delete", "duplicate", "swap"))
        i = rng.randrange(max(len(text), 1))
        if how == "flip" and text:
            text = text[:i] + bytes([text[i] ^ (1 << rng.randrange(8))]) + text[i + 1:]
        elif how == "delete":
            text = text[:i] + text[i + rng.randint(1, 20):]
        elif how == "duplicate":
            span = text[i:i + rng.randint(1, 200)]
            text = text[:i] + span + span + text[i:]
        else:
            tokens = list(re.finditer(rb"[%@^#!]?[\w.$-]+|[^\s\w]", text))
            if len(tokens) >= 2:
                a, b = sorted(rng.sample(tokens, 2), key=lambda m: m.start())
                text = (text[:a.start()] + b.group() + text[a.end():b.start()] + a.group() + text[b.end():])
        names.append(how)
    return "+".join(names), text


def mutated_family(rng: random.Random, n: int) -> list:
    texts = corpus_cases()
    cases = []
    for _ in range(n):
        how, body = mutate(rng, rng.choice(texts))
        cases.append(through_every_command(rng, how, body))
    return cases


# -- family 2: huge shapes and literals -----------------------------------------------------------
HUGE_SHAPES = ("100000000000", "1500000000", "4294967296x4294967296", "9223372036854775807", "1x" * 100 + "1")
ELEMENTS = {"f32": "1.0", "f64": "1.0", "bf16": "1.0", "i1": "true", "i8": "1", "i64": "1", "i16777215": "1"}
SHAPED = {
    "constant": "func.func @main() -> tensor<{t}> {{\n  %c = arith.constant dense<{v}> : tensor<{t}>\n"
                "  return %c : tensor<{t}>\n}}\n",
    "tensor.empty": "func.func @main() -> tensor<{t}> {{\n  %c = tensor.empty() : tensor<{t}>\n"
                    "  return %c : tensor<{t}>\n}}\n",
    "memref.alloc": "func.func @main() {{\n  %m = memref.alloc() : memref<{t}>\n  memref.dealloc %m : memref<{t}>\n"
                    "  return\n}}\n",
    "bufferization.alloc_tensor": "func.func @main() -> tensor<{t}> {{\n  %c = bufferization.alloc_tensor() : "
                                  "tensor<{t}>\n  return %c : tensor<{t}>\n}}\n",
    "broadcast": "func.func @main() -> tensor<{t}> {{\n  %x = stablehlo.constant dense<{v}> : tensor<{e}>\n"
                 "  %b = stablehlo.broadcast_in_dim %x, dims = [] : (tensor<{e}>) -> tensor<{t}>\n"
                 "  return %b : tensor<{t}>\n}}\n",
    "argument": "func.func @main(%x: tensor<{t}>) -> tensor<{t}> {{\n  return %x : tensor<{t}>\n}}\n",
}


def scalar(value: str, element: str) -> str:
    return (f"func.func @main() -> {element} {{\n  %c = arith.constant {value} : {element}\n"
            f"  return %c : {element}\n}}\n")


def dense_literal(count: int, declared: int) -> str:
    values = ", ".join("1.5" for _ in range(count))
    return (f"func.func @main() -> tensor<{declared}xf32> {{\n  %c = arith.constant dense<[{values}]> : "
            f"tensor<{declared}xf32>\n  return %c : tensor<{declared}xf32>\n}}\n")


LITERALS = {
    "5,000-digit i32": scalar("9" * 5000, "i32"),
    "5,000-digit i64": scalar("-" + "9" * 5000, "i64"),
    "5,000-digit f32": scalar("1" + "0" * 5000 + ".0", "f32"),
    "5,000-digit hex": scalar("0x" + "f" * 5000, "i64"),
    "i16777215 constant": scalar("1", "i16777215"),
    "i16777216 constant": scalar("1", "i16777216"),
    "200,000-element dense literal": dense_literal(200_000, 200_000),
    "dense literal one short": dense_literal(200_000, 200_001),
    "5,000-deep tensor type": scalar("1.0", "f32").replace("-> f32", "-> tensor<" + "1x" * 5000 + "f32>", 1),
    "100,000-character name": scalar("1", "i32").replace("%c", "%" + "c" * 100_000),
}


def huge_family(rng: random.Random, n: int) -> list:
    bodies = [(f"{name} {shape}x{e}", template.format(t=f"{shape}x{e}", e=e, v=v))
              for name, template in SHAPED.items() for shape in HUGE_SHAPES for e, v in ELEMENTS.items()]
    bodies += list(LITERALS.items())
    cases = []
    for i in range(n):
        what, text = bodies[i % len(bodies)] if i < len(bodies) else rng.choice(bodies)
        cases.append(through_every_command(rng, what, text.encode()))
    rng.shuffle(cases)
    return cases


# -- family 3: run inputs -------------------------------------------------------------------------
INPUT_SHAPES = ("4x8", "100000000000", "0", "4x-8", "x", "4x8x", "99999999999999999999999999", "1x" * 70 + "1", "")
INPUT_TYPES = ("f32", "i8", "i1", "i64", "f16", "bf16", "ui8", "i3", "f999", "i16777215", "complex<f32>", "")
INPUT_VALUES = ("1", "0x7fffffffffff", "1e400", "-1e400", "nan", "-inf", "abc", "", "1,2,3", "[1 2]", "9" * 5000,
                "true", "300", "-129", "1 2 3 4", "@missing.npy", "@", "0x", "1e", "--")


def npy(header: str, data: bytes, version: bytes = b"\x01\x00", length=None) -> bytes:
    """An .npy file with `header` as its dictionary text, declaring `length` bytes of header (its own if None)."""
    head = header.encode("latin1")
    head += b" " * (-(10 + len(head) + 1) % 64) + b"\n"
    size = len(head) if length is None else length
    return b"\x93NUMPY" + version + size.to_bytes(2, "little") + head + data


GOOD_DATA = b"\0" * (4 * 8 * 4)
LYING_NPY = {
    "shape 10^11": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (100000000000,), }", GOOD_DATA),
    "shape 2^32 x 2^32": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }",
                             GOOD_DATA),
    "shape negative": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-4, 8), }", GOOD_DATA),
    "float64 data too short": npy("{'descr': '<f8', 'fortran_order': False, 'shape': (4, 8), }", GOOD_DATA),
    "object dtype": npy("{'descr': '|O', 'fortran_order': False, 'shape': (4, 8), }", GOOD_DATA),
    "fortran order": npy("{'descr': '<f4', 'fortran_order': True, 'shape': (4, 8), }", GOOD_DATA),
    "header not a dict": npy("'foo'", GOOD_DATA),
    "header a call": npy("__import__('os').system('touch pwned')", GOOD_DATA),
    "header length lies": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4, 8), }", GOOD_DATA,
                              length=65000),
    "version 9": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4, 8), }", GOOD_DATA, b"\x09\x00"),
    "truncated": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4, 8), }", GOOD_DATA[:7]),
    "100 axes": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (" + "1, " * 100 + "), }", GOOD_DATA),
    "deep header": npy("{'descr': '<f4', 'fortran_order': False, 'shape': " + "(" * 5000 + ")" * 5000 + "}",
                       GOOD_DATA),
    "complex descr": npy("{'descr': [('a', '<f4'), ('b', '<i8')], 'fortran_order': False, 'shape': (4, 8), }",
                         GOOD_DATA),
    "empty file": b"",
    "not npy": b"hello\n",
}


def inputs_family(rng: random.Random, n: int) -> list:
    dense, vmpack = DENSE.read_bytes(), module_file(DENSE)
    targets = {"dense.mlir": (dense, ["--device=reference"]), "dense.vmpack": (vmpack, ["--device=local-sync"])}
    cases = []
    for i in range(n):
        program = rng.choice(sorted(targets))
        body, device = targets[program]
        files = {program: body}
        if i % 3 == 0:
            name = rng.choice(sorted(LYING_NPY))
            files["x.npy"] = LYING_NPY[name]
            hostile, what = "@x.npy", f"npy {name}"
        else:
            shape, element, value = rng.choice(INPUT_SHAPES), rng.choice(INPUT_TYPES), rng.choice(INPUT_VALUES)
            hostile = f"{shape}x{element}={value}" if shape else f"{element}={value}"
            what = f"--input={hostile[:40]}"
        inputs = list(INPUTS)
        inputs.insert(rng.randrange(len(inputs) + 1), f"--input={hostile}") if rng.random() < 0.1 \
            else inputs.__setitem__(rng.randrange(len(inputs)), f"--input={hostile}")
        cases.append(Case(f"{program} {what}", mlirtext("run", program, *device, *inputs), files))
    return cases


# -- family 4: module files -----------------------------------------------------------------------
HOSTILE_VALUES = (None, -1, 0, 10 ** 12, -(10 ** 12), "x", [], {}, 1.5, True, [1], "i" + "9" * 5000, [2] * 100,
                  2 ** 64, "../../etc/passwd", {"a": None})


def field_paths(doc, path=()):
    """The path of every field of a JSON document (the first two items of each list)."""
    items = doc.items() if isinstance(doc, dict) else enumerate(doc[:2]) if isinstance(doc, list) else ()
    for key, value in items:
        yield path + (key,)
        yield from field_paths(value, path + (key,))


def set_field(doc, path, value) -> None:
    for key in path[:-1]:
        doc = doc[key]
    doc[path[-1]] = value


def damaged_modules(rng: random.Random, data: bytes, n: int) -> list:
    """(what, bytes) of `n` damaged copies of `data`: every third one of the named edits (while they
    last), the others bit flips, truncations and field edits of the manifest and host programs (re-hashed)."""
    named, out = sorted(EDITS), []
    entries = entries_of(data)
    manifest = json.loads(entries["manifest.json"])
    program = json.loads(entries[manifest["exports"][0]["program"]])
    manifest_paths = [p for p in field_paths(manifest) if p[0] != "entries"]
    program_paths = list(field_paths(program))
    while len(out) < n:
        how = rng.choice(("flip", "truncate", "manifest field", "program field"))
        if len(out) % 3 == 0 and len(out) // 3 < len(named):
            name = named[len(out) // 3]
            out.append((name, EDITS[name](data)))
        elif how == "flip":
            i, bit = rng.randrange(len(data)), rng.randrange(8)
            out.append((f"bit {bit} of byte {i} flipped", data[:i] + bytes([data[i] ^ (1 << bit)]) + data[i + 1:]))
        elif how == "truncate":
            i = rng.randrange(len(data))
            out.append((f"truncated to {i} bytes", data[:i]))
        else:
            paths = manifest_paths if how == "manifest field" else program_paths
            path, value = rng.choice(paths), rng.choice(HOSTILE_VALUES)
            change = (lambda p, v: (lambda doc: set_field(doc, p, v)))(path, value)
            body = edited(data, change) if how == "manifest field" else edited(data, programs=change)
            out.append((f"{how} {'/'.join(map(str, path))} = {str(value)[:20]}", body))
    return out


def module_inputs(data: bytes) -> list:
    """`--input` flags of the right shape for each input of a module's first export."""
    export = json.loads(entries_of(data)["manifest.json"])["exports"][0]
    return [f"--input={'x'.join(map(str, i['shape']))}{'x' if i['shape'] else ''}{i['element']}=0.5"
            for i in export["inputs"]]


def modules_family(rng: random.Random, n: int) -> list:
    data = module_file(ROOT / "benchmarks" / "programs" / "mlp.mlir")   # a pool, split micro-kernels
    inputs = module_inputs(data)
    commands = {"dump": mlirtext("dump", "m.vmpack", "--ir"),
                "run local-sync": mlirtext("run", "m.vmpack", "--device=local-sync", *inputs),
                "run local-task": mlirtext("run", "m.vmpack", "--device=local-task", *inputs),
                "load_module": ["-c", LOAD_CHILD, "m.vmpack"]}
    return [Case(f"{what} | {command}", commands[command], {"m.vmpack": body})
            for what, body in damaged_modules(rng, data, n) for command in [rng.choice(sorted(commands))]]


# -- family 5: the language server ----------------------------------------------------------------
RAW_BODIES = (b"not json", b"{", b"[]", b"[1, 2]", b"null", b"5", b'"x"', b"{}", b'{"jsonrpc": "2.0"}',
              b'{"jsonrpc": "1.0", "id": 1, "method": "shutdown"}', b'{"jsonrpc": "2.0", "id": {}, "method": "x"}',
              b'{"jsonrpc": "2.0", "id": 1.5, "method": 5}', b"\xff\xfe\x00", b"[" * 100_000 + b"]" * 100_000,
              b'{"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"contentChanges": 5}}',
              b'{"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": 5}}}')
METHODS = sorted(GOOD) + ["no/such/method", "$/unknown", "initialize", ""]


def hostile_request(rng: random.Random) -> tuple:
    """(what, method, params) of one malformed request: good params with a value replaced somewhere."""
    method = rng.choice(METHODS)
    base = GOOD.get(method, {"textDocument": DOC, "position": HERE})
    value = rng.choice(HOSTILE_VALUES + ("", "file:///nonexistent.mlir", {"line": 10 ** 9, "character": 10 ** 9}))
    path = [rng.randrange(6) for _ in range(rng.randrange(4))]
    return f"{method} {path} = {str(value)[:20]}", method, damaged(base, path, value)


def lsp_batch(rng: random.Random, n: int, tally: Tally) -> None:
    """`n` malformed requests (a raw body followed by a ping, one in five) through one server."""
    server = RawServer()
    try:
        try:
            server.initialize()
        except TimeoutError:   # counted, not the suite's own traceback
            tally.count("lsp initialize", ["unanswered"], "no answer to initialize")
            return
        server.open(URI, LSP_TEXT)
        for _ in range(n):
            if rng.random() < 0.2:
                body = rng.choice(RAW_BODIES)
                what, method, params = f"raw {body[:30]!r}", "textDocument/documentSymbol", {"textDocument": DOC}
                server.send_body(body)
            else:
                what, method, params = hostile_request(rng)
            msg_id = server.request(method, params)
            try:
                server.response(msg_id, TIMEOUT)
                problems = []
            except TimeoutError:
                problems = ["unanswered"] if server.process.poll() is None else ["unanswered", "hangs"]
            if server.process.poll() is not None and server.process.returncode < 0:
                problems.append("signals")
            tally.count(f"lsp {what}", problems, f"server {'alive' if server.process.poll() is None else 'gone'}")
            if server.process.poll() is not None:
                break
    finally:
        code, stderr = server.stop(TIMEOUT)
    problems = (["tracebacks"] if "Traceback" in stderr else []) + (["signals"] if code < 0 else []) \
        + (["other exits"] if code > 0 else [])
    if problems:   # the server's own end counts against its last request
        tally.tried -= 1
        tally.count("lsp server exit", problems, stderr.strip().splitlines()[-1:] and stderr.strip().splitlines()[-1])


def lsp_family(rng: random.Random, n: int) -> Tally:
    tally = Tally()
    for start in range(0, n, 100):
        lsp_batch(rng, min(100, n - start), tally)
    return tally


# -- family 6: -o onto special files --------------------------------------------------------------
def fifo(path: Path) -> None:
    os.mkfifo(path)


def device(path: Path) -> None:
    """A character device node (1, 3: what /dev/null is), made here; needs CAP_MKNOD."""
    os.mknod(path, 0o600 | stat.S_IFCHR, os.makedev(1, 3))


def read_only_dir(path: Path) -> None:
    path.mkdir()
    (path / "keep.txt").write_bytes(b"kept\n")
    path.chmod(0o555)


def read_only_file(path: Path) -> None:
    path.write_bytes(b"old\n")
    path.chmod(0o444)


def link_to(target: str):
    return lambda path: os.symlink(target, path)


#: name -> (maker of the entry written to, the files it needs, names that may be written).
TARGETS = {
    "directory": (Path.mkdir, {}, ()),
    "FIFO": (fifo, {}, ()),
    "symlink to a file": (link_to("real.txt"), {"real.txt": b"old\n"}, ("out",)),
    "symlink to a directory": (link_to("sub"), {"sub": Path.mkdir}, ()),
    "dangling symlink": (link_to("nowhere/x"), {}, ()),
    "symlink loop": (link_to("out"), {}, ()),
    "read-only file": (read_only_file, {}, ("out",)),
    "inside a read-only directory": (read_only_dir, {}, ("out/new",)),
    "inside a missing directory": (None, {}, ()),
}
if hasattr(os, "mknod") and os.geteuid() == 0:
    TARGETS["device node"] = (device, {}, ())
WRITERS = {
    "opt": lambda o: mlirtext("opt", "dense.mlir", "-o", o),
    "opt --lower-to=llvm": lambda o: mlirtext("opt", "dense.mlir", "--lower-to=llvm", "-o", o),
    "compile": lambda o: mlirtext("compile", "dense.mlir", "-o", o),
    "translate": lambda o: mlirtext("translate", "--mlir-to-llvmir", "--lower", "dense.mlir", "-o", o),
    "run --output": lambda o: mlirtext("run", "dense.mlir", *INPUTS, f"--output=@{o}"),
    "keygen": lambda o: mlirtext("keygen", o),
}


def outputs_family(rng: random.Random, n: int) -> list:
    pairs = [(t, w) for t in sorted(TARGETS) for w in sorted(WRITERS)]
    rng.shuffle(pairs)
    cases = []
    for i in range(n):
        target, writer = pairs[i % len(pairs)]
        make, extra, outputs = TARGETS[target]
        name = {"inside a read-only directory": "out/new",
                "inside a missing directory": "missing/out"}.get(target, "out")
        files = {"dense.mlir": DENSE.read_bytes(), **extra, **({"out": make} if make else {})}
        outputs = outputs + tuple(o + ".pub" for o in outputs) if writer == "keygen" else outputs
        cases.append(Case(f"{writer} -o {target}", WRITERS[writer](name), files, outputs))
    return cases


# -- the suite ----------------------------------------------------------------------------------------
BUILDERS = {"mutated": mutated_family, "huge": huge_family, "inputs": inputs_family,
            "modules": modules_family, "outputs": outputs_family}


def run_family(family: str, n: int, seed: int, jobs: int) -> Tally:
    rng = random.Random(f"{family}:{seed}")
    if family == "lsp":
        return lsp_family(rng, n)
    return run_cases(BUILDERS[family](rng, n), jobs)


def table(results: dict) -> str:
    head = ("family", "tried") + BAD
    rows = [head] + [(f, str(t.tried), *(str(t.bad[b]) for b in BAD)) for f, t in results.items()]
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    return "\n".join("  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths)))
                     for r in rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.hostile_suite", description=__doc__.split("\n\n")[0])
    ap.add_argument("--full", action="store_true", help="300 cases per family (default: 15)")
    ap.add_argument("--cases", type=int, help="cases per family (overrides --full)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("-j", "--jobs", type=int, default=2, help="child processes at a time")
    ap.add_argument("--families", nargs="+", choices=FAMILIES, default=list(FAMILIES))
    args = ap.parse_args(argv)
    n = args.cases or (300 if args.full else 15)
    results = {}
    if "mutated" in args.families and not (CORPUS / "CASES.tsv").exists():
        print(f"mutated: skipped, no corpus at {CORPUS} (set MLIRTEXT_CORPUS)", file=sys.stderr)
        args.families.remove("mutated")
    for family in args.families:
        started = time.monotonic()
        results[family] = run_family(family, n, args.seed, args.jobs)
        print(f"{family}: {results[family].tried} cases in {time.monotonic() - started:.0f} s", file=sys.stderr)
        for example in results[family].examples:
            print(f"  {example}", file=sys.stderr)
    print(table(results))
    return int(any(any(t.bad.values()) for t in results.values()))


if __name__ == "__main__":
    sys.exit(main())
