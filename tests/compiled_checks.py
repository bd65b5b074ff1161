"""A compiled module checked against the interpreter, for the tests of compiler kernels."""
from __future__ import annotations

import numpy as np

from mlirtext import runtime
from mlirtext.api import parse_and_verify
from mlirtext.interpreter import Interpreter
from mlirtext.vm.modfile import read_module_file


def compiled_and_checked(text: str, shapes: list, seed: int = 0) -> tuple[bytes, dict]:
    """Compile `text` (function @f) and run it on local-sync and local-task against the
    interpreter, on normal inputs of `shapes`: the module and the kernels of its manifest."""
    data = runtime.compile_text(text)
    rng = np.random.default_rng(seed)
    args = [rng.standard_normal(s, dtype=np.float32) for s in shapes]
    want = Interpreter(parse_and_verify(text).module).call("f", args)[0]
    for device in ("local-sync", "local-task"):
        got = runtime.load_module(data, device=device).f(*args)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * float(np.max(np.abs(want))), err_msg=device)
    return data, read_module_file(data).manifest["kernels"]
