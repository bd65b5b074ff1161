"""How much memory one allocation may take, and the error when one would take more.

The limit is `set_max_memory` (the command line's `--max-memory`), else the environment's
`MLIRTEXT_MAX_MEMORY`, else half of the machine's physical memory. Whatever makes a buffer for a
tensor, a memref or a module's memory (the interpreter, constants turned into arrays, the VM's pool
and results, `--input` values) calls `check` first: a huge shape is then a one-line error naming
what needs how much, instead of a MemoryError traceback or a machine that swaps.
"""
from __future__ import annotations

import math
import os
import re
from typing import Optional

#: The environment variable that sets the default limit (a size: 8GiB, 512M, 1000000).
ENV = "MLIRTEXT_MAX_MEMORY"

_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB")
_SIZE = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([kmgtpezy]?)(i?b?)\s*$", re.IGNORECASE)

_configured: Optional[int] = None
_default: Optional[int] = None   # the environment's or the machine's, read once


class MemoryLimitError(Exception):
    """An allocation above the limit; the message says what needs how much."""


def parse_size(text: str) -> int:
    """Bytes of a size as people write it: 1000000, 512K, 1.5G, 12GiB, 2TB (the units are binary:
    K is 1024). ValueError when it is not one."""
    m = _SIZE.match(text)
    if m is None or (not m.group(2) and m.group(3).lower().startswith("i")):
        raise ValueError(f"'{text}' is not a size (for example 8GiB, 512M or 1000000)")
    scale = 1024 ** "bkmgtpezy".index((m.group(2) or "b").lower())
    return int(float(m.group(1)) * scale)


def format_size(nbytes: int) -> str:
    """373 GiB, 5.59 GiB, 12 GiB, 800 B: three significant digits in the largest binary unit."""
    value, unit = float(nbytes), 0
    while value >= 1024 and unit < len(_UNITS) - 1:
        value /= 1024
        unit += 1
    return f"{value:.3g} {_UNITS[unit]}" if value < 1000 else f"{value:.0f} {_UNITS[unit]}"  # (not 1.02e+03)


def physical_memory() -> Optional[int]:
    """The machine's physical memory in bytes; None where the system does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def set_max_memory(nbytes: Optional[int]) -> None:
    """Limit each allocation to `nbytes` (None: back to the environment's or the machine's default)."""
    global _configured
    _configured = nbytes


def max_memory() -> int:
    """The limit in force; ValueError when MLIRTEXT_MAX_MEMORY is set but is not a size. (The
    environment is read on the first call: the VM asks on every call of a function.)"""
    global _default
    if _configured is not None:
        return _configured
    if _default is None:
        setting = os.environ.get(ENV)
        try:
            _default = parse_size(setting) if setting else max_memory_default()
        except ValueError as e:
            raise ValueError(f"{ENV}: {e}") from None
    return _default


def max_memory_default() -> int:
    """Half of the machine's physical memory (8 GiB where the system does not say)."""
    return (physical_memory() or 16 * 1024 ** 3) // 2


def check(nbytes: int, what) -> None:
    """MemoryLimitError when an allocation of `nbytes` for `what` is above the limit. `what` names it
    when printed (a type, a text); it is only printed on failure."""
    limit = max_memory()
    if nbytes > limit:
        raise MemoryLimitError(f"{what} needs {format_size(nbytes)}, above the {format_size(limit)} limit "
                               "(--max-memory)")


def check_array(shape, itemsize: int, what) -> None:
    """`check` for an array of `shape` with elements of `itemsize` bytes (exact: no overflow)."""
    check(math.prod(int(d) for d in shape) * itemsize, what)
