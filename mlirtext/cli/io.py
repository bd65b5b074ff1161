"""What every subcommand reads and writes: input files (text or bytes), the read -> parse -> verify ->
report prologue, and the one writer of output files (`run_values.py` has the `--input`/`--output`
values). Nothing here imports numpy, the bytecode reader or tempfile up front: `mlirtext opt FILE -o
OUT` pays for none of them.

Functions that can fail report their diagnostics on stderr and return None (or a Diagnostic for the
caller to report), so a subcommand only turns that into exit status 1.
"""
from __future__ import annotations

import contextlib
import gc
import os
import stat
import sys
from typing import Optional

from .. import api
from ..diagnostics import Diagnostic, report
from ..ir.attributes import StringAttr
from ..syntax.bytecode_encoding import is_bytecode
from ..syntax.parser import ParseResult

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
    if is_bytecode(data):
        from ..syntax import bytecode  # the reader (numpy): text inputs, the usual case, do not import it
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


@contextlib.contextmanager
def kept_until_exit():
    """Build the input's IR inside: it lives until the command's process ends, so no cyclic
    collection should walk it. Collecting is paused while it is built, and what was built is then
    moved out of the collector's generations (gc.freeze); what the command makes afterwards is
    collected as usual. Each walk of a 20,000-op module costs 0.1 s of CPU, and the young
    collections after a parse walked it about eight times, and the collection at exit once more.
    (What a pass erases of the frozen IR is not collected: at most the input's size, for a process
    that ends soon. `cli.main` called in-process hands it back to the collector when it returns.)"""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if collecting:
            gc.enable()


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
        fd, tmp = _temporary_beside(target)
    except OSError as e:
        return _cannot_write(path, e.strerror)
    try:
        with os.fdopen(fd, "wb") as f:
            if append and old is not None:
                with open(target, "rb") as before:
                    for chunk in iter(lambda: before.read(1 << 20), b""):
                        f.write(chunk)
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


def _temporary_beside(target: str) -> tuple[int, str]:
    """(fd, path) of a new file only we can read or write, in `target`'s directory, as
    tempfile.mkstemp makes it (whose import costs a twentieth of `mlirtext opt`'s start-up)."""
    directory = os.path.dirname(target)
    for _ in range(100):
        tmp = os.path.join(directory, f".mlirtext-{os.getpid()}-{os.urandom(6).hex()}.tmp")
        try:
            return os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600), tmp
        except FileExistsError:
            continue
    raise FileExistsError(17, "no unused temporary file name", directory)


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
                names.append(op.attr("sym_name").value)
    return names
