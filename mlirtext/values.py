"""Runtime values as text and files, with iree-run-module's conventions.

Inputs: `2x3xf32=1 2 3 4 5 6`, `2x2xi32=[[1 2][3 4]]` (brackets are
decoration), one value fills the tensor (`4xf32=0`), `f32=0.5` / `7` for
scalars (the type comes from the function signature when not given), and
`@x.npy` to load a numpy file. Outputs print as iree-run-module prints them
(`result[0]: hal.buffer_view` then `2x3xf32=[1 2 3][4 5 6]`; scalars as
`result[1]: i32=7`), long ones elided as it does (`2000xf32=1 1 1...`); the command line writes them
whole to files (`--output=@y.npy`).
"""
from __future__ import annotations

import math
import re
from typing import Optional

import numpy as np

from .ir import types as T
from .ir.arrays import UnsupportedType, dtype_of, narrow_ints_as_storage
from .limits import MemoryLimitError, check_array


class ValueError_(ValueError):
    """A bad --input / --output request, with a message for the user."""


_SHAPE = re.compile(r"((?:\d+x)*)([a-z][a-z0-9]*)$")

#: numpy's limit on the axes of an array.
MAX_AXES = 64


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
        return _conform(_load_npy(spec[1:], what), want, what)
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
    shape = tuple(given.shape) if isinstance(given, T.ShapedType) else ()
    if len(shape) > MAX_AXES:
        raise ValueError_(f"{what}: {len(shape)} axes, above the {MAX_AXES} an array may have")
    try:
        dtype = dtype_of(given)
        check_array(shape, dtype.itemsize, given)
    except (UnsupportedType, MemoryLimitError) as e:
        raise ValueError_(f"{what}: {e}") from None
    elt = T.element_type(given)
    words = body.replace("[", " ").replace("]", " ").replace(",", " ").split()
    try:
        values = [_word(w, dtype) for w in words]
    except ValueError:
        raise ValueError_(f"{what}: cannot read the values as {elt}") from None
    if dtype.kind in "iu" and not isinstance(elt, T.IntegerType | T.IndexType):
        elt = T.IntegerType(dtype.itemsize * 8, "u" if dtype.kind == "u" else "s")  # quantized: the storage
    if isinstance(elt, T.IntegerType | T.IndexType):
        values = [_fit(v, elt, what) for v in values]
    count = math.prod(shape)
    if len(values) == 1:
        array = np.full(shape, values[0], dtype=dtype)
    elif len(values) == count:
        array = np.array(values, dtype=dtype).reshape(shape)
    else:
        raise ValueError_(f"{what}: {len(values)} values for {count} elements")
    return _conform(array, want, what)


def _load_npy(path: str, what: str) -> np.ndarray:
    """The array of an .npy file, checked against the memory limit before it is read in: mapped
    first, so a header that declares a huge shape costs nothing."""
    try:
        value = np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError, EOFError) as e:   # EOFError: an empty file; ValueError: truncated
        raise ValueError_(f"{what}: cannot load '{path}' as a .npy array: {e}") from None
    if not isinstance(value, np.ndarray):           # an .npz archive loads as a mapping of arrays
        value.close()
        raise ValueError_(f"{what}: '{path}' is an .npz archive; give one .npy file per --input")
    try:
        check_array(value.shape, value.dtype.itemsize, f"'{path}' ({'x'.join(map(str, value.shape))} {value.dtype})")
    except MemoryLimitError as e:
        raise ValueError_(f"{what}: {e}") from None
    return np.array(value)  # read in, and the file's mapping let go


def _fit(v: int, elt: T.Type, what: str) -> int:
    """`v` as the stored integer of `elt`; ValueError_ when `elt` cannot hold it. A signless integer
    takes its signed and its unsigned values (i8: -128..255, 255 stored as -1)."""
    width = elt.width if isinstance(elt, T.IntegerType) else 64
    signedness = elt.signedness if isinstance(elt, T.IntegerType) else "s"
    low = 0 if signedness == "u" else -(1 << (width - 1))
    high = (1 << (width - 1)) - 1 if signedness == "s" else (1 << width) - 1
    if not low <= v <= high:
        raise ValueError_(f"{what}: {v} is out of range for {elt} ({low}..{high})")
    if signedness == "" and v >= 1 << (width - 1):
        v -= 1 << width
    return v


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


def _nested(a: np.ndarray, budget: list) -> str:
    """The rows of `a`; `budget[0]` elements at most, as iree-run-module elides: a row cut short
    ends in `...`, a row after the budget is spent prints as `...` (`[[0 1 2 3][4...][...]]`)."""
    if a.ndim == 1:
        n = min(budget[0], a.size)
        budget[0] -= n
        return " ".join(_element_text(v, a.dtype) for v in a[:n]) + ("..." if n < a.size else "")
    return "".join(f"[{_nested(sub, budget)}]" for sub in a)


def format_value(value: np.ndarray, type: T.Type, max_elements: Optional[int] = None) -> str:
    """`2x3xf32=[1 2 3][4 5 6]`, `3xi8=1 2 3`, `f32=0.5` (iree-run-module's spelling); with
    `max_elements`, the elements after the first so many elided as iree-run-module's
    --output_max_element_count does (`2000xf32=1 1 1...`)."""
    value = np.asarray(value)
    elt = str(T.element_type(type))
    shape = "".join(f"{d}x" for d in value.shape)
    budget = [value.size if max_elements is None else max_elements]
    if value.ndim == 0:
        return f"{shape}{elt}={_element_text(value[()], value.dtype) if budget[0] > 0 else '...'}"
    if value.size == 0:
        return f"{shape}{elt}="
    return f"{shape}{elt}={_nested(value, budget)}"


def format_results(values, types, max_elements: Optional[int] = None) -> str:
    lines = []
    for i, (v, t) in enumerate(zip(values, types)):
        if isinstance(t, T.ShapedType):
            lines.append(f"result[{i}]: hal.buffer_view")
            lines.append(format_value(v, t, max_elements))
        else:
            lines.append(f"result[{i}]: {format_value(v, t, max_elements)}")
    return "\n".join(lines)
