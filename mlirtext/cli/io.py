"""What every subcommand reads and writes: input files (text or bytes), the read -> parse -> verify ->
report prologue, `--input`/`--output` values, and the one writer of output files.

Functions that can fail report their diagnostics on stderr and return None (or a Diagnostic for the
caller to report), so a subcommand only turns that into exit status 1.
"""
from __future__ import annotations

import contextlib
import io
import os
import shutil
import stat
import sys
import tempfile
from typing import Optional

import numpy as np

from .. import api
from ..diagnostics import Diagnostic, report
from ..ir.attributes import StringAttr
from ..syntax import bytecode
from ..syntax.parser import ParseResult
from ..values import ValueError_, format_results, format_value, parse_inputs as parse_input_values

#: What each kind of file that is not a regular one is called in the refusal.
_SPECIAL = ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
            (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"))


def read_bytes(path: str) -> Optional[tuple[bytes, str]]:
    """(contents, display name) of a file or of stdin (`-`); None after reporting why it cannot be read."""
    try:
        if path == "-":
            return sys.stdin.buffer.read(), "<stdin>"
        with open(path, "rb") as f:
            return f.read(), path
    except OSError as e:
        report([Diagnostic("error", f"could not open input file '{path}': {e.strerror}")])
        return None


def decode_text(data: bytes, name: str) -> Optional[str]:
    """`data` as UTF-8 text (MLIR bytecode as generic-form text); None after reporting why not."""
    if bytecode.is_bytecode(data):
        try:
            return bytecode.to_text(data)
        except bytecode.BytecodeError as e:
            report([Diagnostic("error", f"{name}: {e}")])
            return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        report([Diagnostic("error", f"{name}:{line}: input is not UTF-8 text "
                           f"(byte 0x{data[e.start]:02x} at offset {e.start})")])
        return None


def read_input(path: str) -> Optional[tuple[str, str]]:
    """(text, display name) of a file or stdin; None after reporting why it cannot be read."""
    got = read_bytes(path)
    if got is None:
        return None
    text = decode_text(*got)
    return None if text is None else (text, got[1])


def parse_verified(text: str, name: str) -> Optional[ParseResult]:
    """The parsed and verified module of `text`; None after reporting its diagnostics."""
    result = api.parse_and_verify(text, name)
    if result.ok:
        return result
    report(result.diagnostics)
    return None


def read_verified(path: str) -> Optional[ParseResult]:
    """The prologue of the commands that take one module: read `path`, parse, verify, report."""
    got = read_input(path)
    return None if got is None else parse_verified(*got)


def write_output(path: str, data: str | bytes, append: bool = False) -> Optional[Diagnostic]:
    """Write `data` to `path` (`-`: standard output); a Diagnostic when it cannot.

    A regular file is replaced atomically: the data goes to a temporary file beside it, which then
    takes its place with os.replace, with the old file's mode (and owner, where allowed). A failed or
    interrupted write leaves the old file as it was and no temporary behind. A symlink is written
    through (its target is replaced, the link stays). A directory, a device node, a FIFO or a socket
    is refused: replacing it would destroy it, and writing into it is not writing a file.
    `append` keeps the old contents in front of `data` (still atomically)."""
    if path == "-":
        if isinstance(data, str):
            sys.stdout.write(data)
        else:
            sys.stdout.flush()
            sys.stdout.buffer.write(data)
        return None
    target = os.path.realpath(path)
    try:
        old = os.stat(target)
    except FileNotFoundError:
        old = None
    except OSError as e:
        return _cannot_write(path, e.strerror)
    if old is not None and not stat.S_ISREG(old.st_mode):
        kind = next((name for test, name in _SPECIAL if test(old.st_mode)), "not a regular file")
        return _cannot_write(path, f"it is {kind} (only regular files are written)")
    try:
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target), prefix=".mlirtext-", suffix=".tmp")
    except OSError as e:
        return _cannot_write(path, e.strerror)
    try:
        with os.fdopen(fd, "wb") as f:
            if append and old is not None:
                with open(target, "rb") as before:
                    shutil.copyfileobj(before, f)
            f.write(data.encode() if isinstance(data, str) else data)
        _take_over_attributes(tmp, old)
        os.replace(tmp, target)
    except BaseException as e:  # also KeyboardInterrupt: never leave the temporary behind
        with contextlib.suppress(FileNotFoundError):  # (an interrupt right after os.replace)
            os.unlink(tmp)
        if isinstance(e, OSError):
            return _cannot_write(path, e.strerror)
        raise
    return None


def _take_over_attributes(tmp: str, old: Optional[os.stat_result]) -> None:
    """The old file's mode and owner on its replacement; a new file gets the mode open() would give."""
    if old is None:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        return
    os.chmod(tmp, stat.S_IMODE(old.st_mode))
    try:
        os.chown(tmp, old.st_uid, old.st_gid)
    except PermissionError:  # only root may give a file away; the mode is kept all the same
        pass


def _cannot_write(path: str, why: str) -> Diagnostic:
    return Diagnostic("error", f"could not write output file '{path}': {why}")


def npy_bytes(value) -> bytes:
    """`value` as the bytes of an .npy file."""
    buffer = io.BytesIO()
    np.save(buffer, np.asarray(value), allow_pickle=False)
    return buffer.getvalue()


def parse_inputs(specs: list, fn_name: str, types) -> Optional[list]:
    """The `--input` values for a function taking `types`; None after reporting a wrong count or value."""
    try:
        return parse_input_values(specs, fn_name, types)
    except ValueError_ as e:
        report([Diagnostic("error", str(e))])
        return None


def print_outputs(specs: list, outputs, types, max_elements: Optional[int] = None) -> int:
    """Print the results as iree-run-module does (at most `max_elements` elements of each), or write
    each where its `--output` says (`-` print, `@FILE.npy` write whole, `+FILE.npy` append); the
    exit status."""
    if not specs:
        print(format_results(outputs, types, max_elements))
        return 0
    if len(specs) > len(outputs):
        report([Diagnostic("error", f"{len(specs)} --output given for {len(outputs)} results")])
        return 1
    for spec, value, t in zip(specs, outputs, types):
        if spec == "-":
            print(format_value(value, t, max_elements))
            continue
        if not spec.startswith(("@", "+")):
            report([Diagnostic("error", f"--output={spec}: expected '-', '@FILE.npy' or '+FILE.npy'")])
            return 1
        problem = write_output(spec[1:], npy_bytes(value), append=spec[0] == "+")
        if problem is not None:
            report([problem])
            return 1
    return 0


def runnable(op) -> bool:
    """A function with a body the interpreter can call with arguments: a func.func, or an llvm.func
    lowered from one (which keeps the signature it had)."""
    function = op.name == "func.func" or op.name == "llvm.func" and "mlirtext.abi" in op.attributes
    return function and bool(op.regions) and bool(op.regions[0].blocks)


def public_functions(module) -> list[str]:
    """The names of the module's public functions with a body that can be run."""
    names = []
    for op in module.regions[0].blocks[0].ops if module.regions and module.regions[0].blocks else []:
        if runnable(op):
            vis = op.attributes.get("sym_visibility")
            if not (isinstance(vis, StringAttr) and vis.value != "public"):
                names.append(op.attributes["sym_name"].value)
    return names
