"""mlirtext's runtime API, shaped like `iree.runtime`:

    from mlirtext import runtime
    m = runtime.load_module("mlp.vmpack", device="local-task")   # a path, or the file's bytes
    y = m.main(x, w1, b1, w2, b2)                                  # numpy in, numpy out
    m.main(x, w1, b1, w2, b2, out=y)                               # into the caller's buffer

Each exported function is an attribute; it returns one array, or a tuple for several results.
With `out=` (an array, or a tuple of them for several results) it writes its results there and
returns them: a caller that calls again and again keeps its result buffers, as IREE's staged
device arrays stay put, instead of receiving fresh arrays (the inputs are never copied: the CPU
devices read C-contiguous arrays where they are).
Devices: "local-task" (native kernels on a thread pool), "local-sync" (native, one by one),
"reference" (the interpreter). `compile_file`/`compile_text` make module files in memory.
Errors (a bad file, a wrong input) raise `runtime.VMError` with a message for the user.
"""
from __future__ import annotations

import os

from .vm.devices import DEVICES
from .vm.signing import SignatureError, load_public_keys
from .vm.vm import Function, LoadedModule, VMError

__all__ = ["load_module", "compile_text", "compile_file", "Module", "VMError", "DEVICES"]


class BoundFunction:
    """An exported function as a Python callable (one array, or a tuple for several results)."""

    def __init__(self, fn: Function):
        self.vm_function = fn
        self.__name__ = fn.name

    def __call__(self, *args, out=None):
        results = self.vm_function(*args, out=out)
        return results[0] if len(results) == 1 else tuple(results)

    def __repr__(self) -> str:
        return f"<mlirtext function @{self.__name__}>"


class Module:
    def __init__(self, loaded: LoadedModule):
        self.vm_module = loaded
        for name, fn in loaded.functions.items():
            setattr(self, name, BoundFunction(fn))

    def __getitem__(self, name: str) -> BoundFunction:
        return BoundFunction(self.vm_module.function(name))

    @property
    def exports(self) -> list[str]:
        return list(self.vm_module.functions)

    @property
    def device(self) -> str:
        return self.vm_module.device.name


def load_module(path_or_bytes, device: str = "local-task", trusted_keys=None, cluster: str | None = None,
                node: str | None = None):
    """Load a module file (a path or its bytes), or a module compiled in this process
    (`mlirtext.compiler.module_writer.in_memory`), for `device`.

    A module file is native code: loading one runs what whoever made it put in it. With
    `trusted_keys` (a public key file, a list of them, or cryptography Ed25519PublicKey objects),
    a file that none of them signed (`mlirtext compile --sign KEY`) is refused with VMError before
    any of its code is mapped. Without keys, an unsigned file is trusted.

    With `cluster` (a Ray cluster's HOST:PORT), the module runs on a node of that cluster that offers
    `device` (`mlirtext worker --devices ...`): a `remote.RemoteModule`, whose calls ship the inputs
    there and bring the outputs back (`last_call` says where it ran and how long it took); with `node`
    (a Ray node id, a prefix of one, or a host name), on that node only."""
    if trusted_keys is not None:
        try:
            trusted_keys = load_public_keys(trusted_keys)
        except SignatureError as e:
            raise VMError(str(e)) from None
    if cluster:   # (ray only when a cluster is asked for; the file's bytes are shipped)
        from .remote import RemoteModule
        if isinstance(path_or_bytes, (str, os.PathLike)):
            try:
                with open(path_or_bytes, "rb") as f:
                    path_or_bytes = f.read()
            except OSError as e:
                raise VMError(f"cannot open module file '{path_or_bytes}': {e.strerror}") from None
        return RemoteModule(path_or_bytes, device, cluster, trusted_keys, node)
    if node:
        raise VMError("node: a node of a Ray cluster: give cluster= too")
    return Module(LoadedModule(path_or_bytes, device, trusted_keys))   # (a path is mapped, not read)


def compile_text(text: str, target: str = "llvm-cpu", filename: str = "<string>") -> bytes:
    """A module file (bytes) for MLIR `text`; CompileFailed (with diagnostics) when it cannot be compiled."""
    # (imported here: loading and running modules needs no compiler, which takes 0.3 s to import)
    from .compiler.driver import compile_source
    from .compiler.module_writer import pack
    return pack(compile_source(text, filename, target))


def compile_file(path: str, target: str = "llvm-cpu") -> bytes:
    with open(path, encoding="utf-8") as f:
        return compile_text(f.read(), target, path)
