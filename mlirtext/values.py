"""Runtime values as text and files, with iree-run-module's conventions.

Inputs: `2x3xf32=1 2 3 4 5 6`, `2x2xi32=[[1 2][3 4]]` (brackets are
decoration), one value fills the tensor (`4xf32=0`), `f32=0.5` / `7` for
scalars (the type comes from the function signature when not given), and
`@x.npy` to load a numpy file. Outputs print as iree-run-module prints them
(`result[0]: hal.buffer_view` then `2x3xf32=[1 2 3][4 5 6]`; scalars as
`result[1]: i32=7`); the command line writes them to files (`--output=@y.npy`).
"""
from __future__ import annotations

import re

import numpy as np

from .ir import types as T
from .ir.arrays import dtype_of, narrow_ints_as_storage


class ValueError_(ValueError):
    """A bad --input / --output request, with a message for the user."""


_SHAPE = re.compile(r"((?:\d+x)*)([a-z][a-z0-9]*)$")


def parse_inputs(specs: list, fn_name: str, types) -> list:
    """The values of the --input `specs` for a function `fn_name` taking `types` (ValueError_ on a
    wrong count or value)."""
    if len(specs) != len(types):
        raise ValueError_(f"@{fn_name} takes {len(types)} argument(s) "
                          f"({', '.join(map(str, types)) or 'none'}); {len(specs)} --input given")
    return [parse_input(spec, t, i) for i, (spec, t) in enumerate(zip(specs, types))]


def parse_input(spec: str, want: T.Type, index: int) -> np.ndarray:
    """The value for argument `index` of type `want` from one --input spec."""
    what = f"--input #{index} ({spec if len(spec) < 40 else spec[:40] + '...'})"
    if spec.startswith("@"):
        path = spec[1:]
        try:
            value = np.load(path, allow_pickle=False)
        except (OSError, ValueError, EOFError) as e:   # EOFError: an empty file
            raise ValueError_(f"{what}: cannot load '{path}' as a .npy array: {e}") from None
        if not isinstance(value, np.ndarray):           # an .npz archive loads as a mapping of arrays
            value.close()
            raise ValueError_(f"{what}: '{path}' is an .npz archive; give one .npy file per --input")
        return _conform(value, want, what)
    head, sep, body = spec.partition("=")
    if not sep:
        head, body = "", spec
    if head:
        m = _SHAPE.match(head)
        if m is None:
            raise ValueError_(f"{what}: expected SHAPExTYPE=VALUES (e.g. 2x3xf32=1 2 3 4 5 6)")
        shape = tuple(int(d) for d in m.group(1).split("x")[:-1])
        elt = T.scalar_type_from_name(m.group(2))
        if elt is None:
            raise ValueError_(f"{what}: unknown element type '{m.group(2)}'")
        given = T.RankedTensorType(shape, elt) if shape or isinstance(want, T.ShapedType) else elt
    else:
        given = want
    dtype = dtype_of(given)
    shape = tuple(given.shape) if isinstance(given, T.ShapedType) else ()
    words = body.replace("[", " ").replace("]", " ").replace(",", " ").split()
    try:
        values = [_word(w, dtype) for w in words]
    except ValueError:
        raise ValueError_(f"{what}: cannot read the values as {T.element_type(given)}") from None
    count = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if len(values) == 1:
        array = np.full(shape, values[0], dtype=dtype)
    elif len(values) == count:
        array = np.array(values, dtype=dtype).reshape(shape)
    else:
        raise ValueError_(f"{what}: {len(values)} values for {count} elements")
    return _conform(array, want, what)


def _word(w: str, dtype: np.dtype):
    if dtype.kind == "b":
        if w.lower() in ("true", "false"):
            return w.lower() == "true"
        return int(w, 0) != 0
    if dtype.kind in "iu":
        return int(w, 0)
    return float(w)


def _conform(value: np.ndarray, want: T.Type, what: str) -> np.ndarray:
    value = narrow_ints_as_storage(np.asarray(value))
    dtype = dtype_of(want)
    if isinstance(want, T.ShapedType):
        shape = tuple(want.shape)
        if value.ndim != len(shape) or any(d is not None and d != s for d, s in zip(shape, value.shape)):
            got = "x".join(map(str, value.shape)) or "a scalar"
            raise ValueError_(f"{what}: expected {want}, got shape {got}")
    elif value.ndim != 0:
        raise ValueError_(f"{what}: expected a scalar {want}, got shape {'x'.join(map(str, value.shape))}")
    if value.dtype != dtype:
        if value.dtype.kind in "biu" and dtype.kind in "biu" or value.dtype.kind == dtype.kind:
            value = value.astype(dtype)
        else:
            raise ValueError_(f"{what}: expected element type {T.element_type(want)}, got {value.dtype}")
    return value


def _element_text(v, dtype: np.dtype) -> str:
    if dtype.kind == "b":
        return "1" if v else "0"
    if dtype.kind in "iu":
        return str(int(v))
    if dtype.kind == "c":
        return f"{_float_text(v.real)}+{_float_text(v.imag)}i"
    return _float_text(float(v))


def _float_text(v: float) -> str:
    if np.isnan(v):
        return "NAN"
    if np.isinf(v):
        return "INF" if v > 0 else "-INF"
    return "%G" % v


def _nested(a: np.ndarray) -> str:
    if a.ndim == 1:
        return " ".join(_element_text(v, a.dtype) for v in a)
    return "".join(f"[{_nested(sub)}]" for sub in a)


def format_value(value: np.ndarray, type: T.Type) -> str:
    """`2x3xf32=[1 2 3][4 5 6]`, `3xi8=1 2 3`, `f32=0.5` (iree-run-module's spelling)."""
    value = np.asarray(value)
    elt = str(T.element_type(type))
    shape = "".join(f"{d}x" for d in value.shape)
    if value.ndim == 0:
        return f"{shape}{elt}={_element_text(value[()], value.dtype)}"
    if value.size == 0:
        return f"{shape}{elt}="
    return f"{shape}{elt}={_nested(value)}"


def format_results(values, types) -> str:
    lines = []
    for i, (v, t) in enumerate(zip(values, types)):
        if isinstance(t, T.ShapedType):
            lines.append(f"result[{i}]: hal.buffer_view")
            lines.append(format_value(v, t))
        else:
            lines.append(f"result[{i}]: {format_value(v, t)}")
    return "\n".join(lines)
