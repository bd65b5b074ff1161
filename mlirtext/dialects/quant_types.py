"""`!quant.uniform<...>` in MLIR's canonical spelling, so that equal types compare equal.

`!quant.uniform<i8<-128:127>:f32, 2.0:0>` and `!quant.uniform<i8:f32, 2.000000e+00>`
are one type: MLIR omits the storage type's full range and a zero point of 0, and
prints scales as `printFloatValue` does. Types stay `DialectType`s (their text
canonical); what does not parse as a uniform quantized type stays verbatim.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from ..ir import types as T

_UNIFORM = re.compile(
    r"uniform<\s*(?P<storage>[a-z]+\d+)\s*(?:<\s*(?P<min>[-+]?\d+)\s*:\s*(?P<max>[-+]?\d+)\s*>)?\s*:\s*"
    r"(?P<expressed>[a-z]+\d*)\s*(?::\s*(?P<axis>\d+)\s*)?,\s*(?P<params>.*?)\s*>$", re.S)
_NUMBER = r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|0x[0-9a-fA-F]+)"
_SCALE_ZP = re.compile(rf"\s*(?P<scale>{_NUMBER})\s*(?::\s*(?P<zp>[-+]?\d+))?\s*$")


def format_scale(value: float) -> str:
    """MLIR's printFloatValue for a double: `%.6e` when that reads back exactly, else 17 digits."""
    text = f"{value:.6e}"
    if float(text) == value:
        return text
    text = f"{value:.17g}"
    return text if "." in text or "e" in text else text + ".0"


def _scale_zp(text: str) -> Optional[str]:
    m = _SCALE_ZP.match(text)
    if m is None:
        return None
    scale = m.group("scale")
    value = float.fromhex(scale) if scale.lower().startswith("0x") else float(scale)
    zp = int(m.group("zp") or 0)
    return format_scale(value) + (f":{zp}" if zp else "")


def _default_range(storage: str) -> Optional[tuple[int, int]]:
    m = re.fullmatch(r"(u|ui|i|si)(\d+)", storage)
    if m is None:
        return None
    bits = int(m.group(2))
    if m.group(1) in ("u", "ui"):
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def canonical_uniform(text: str) -> Optional[str]:
    """The canonical text of `quant.uniform<...>` (without `!`), or None to keep it verbatim."""
    m = _UNIFORM.match(text[len("quant."):]) if text.startswith("quant.uniform<") else None
    if m is None:
        return None
    storage = m.group("storage")
    head = storage
    if m.group("min") is not None:
        lo, hi = int(m.group("min")), int(m.group("max"))
        if (lo, hi) != _default_range(storage):
            head += f"<{lo}:{hi}>"
    head += ":" + m.group("expressed")
    params = m.group("params")
    if m.group("axis") is not None:
        head += ":" + m.group("axis")
        if not (params.startswith("{") and params.endswith("}")) or "{" in params[1:]:
            return None
        items = [_scale_zp(p) for p in params[1:-1].split(",")]
        if any(i is None for i in items):
            return None
        return f"quant.uniform<{head}, {{{','.join(items)}}}>"
    body = _scale_zp(params)
    return None if body is None else f"quant.uniform<{head}, {body}>"


@dataclass(frozen=True)
class Uniform:
    """A `!quant.uniform<...>` element type: its storage integer (signedness as spelled: "" for
    `i8`, "s" for `si8`, "u" for `u8`; width; range), expressed type, quantized dimension
    (None: per tensor), scales and zero points."""
    signedness: str
    width: int
    lo: int
    hi: int
    expressed: str
    axis: Optional[int]
    scales: tuple
    zero_points: tuple

    @property
    def per_axis(self) -> bool:
        return self.axis is not None


def uniform(t) -> Optional[Uniform]:
    """The uniform quantized type `t` (an element type) describes, or None."""
    if not isinstance(t, T.DialectType) or not t.text.startswith("quant.uniform<"):
        return None
    m = _UNIFORM.match(t.text[len("quant."):])
    rng = _default_range(m.group("storage")) if m is not None else None
    if rng is None:
        return None
    if m.group("min") is not None:
        rng = int(m.group("min")), int(m.group("max"))
    params = m.group("params")
    per_axis = m.group("axis") is not None
    if per_axis != (params.startswith("{") and params.endswith("}")):
        return None
    pairs = [_SCALE_ZP.match(p) for p in (params[1:-1].split(",") if per_axis else [params])]
    if any(p is None for p in pairs):
        return None
    scales = tuple(float.fromhex(p.group("scale")) if p.group("scale").lower().startswith("0x")
                   else float(p.group("scale")) for p in pairs)
    storage = m.group("storage")
    return Uniform("u" if storage.startswith("u") else "s" if storage.startswith("s") else "",
                   int(storage.lstrip("usi")), rng[0], rng[1], m.group("expressed"),
                   int(m.group("axis")) if per_axis else None, scales, tuple(int(p.group("zp") or 0) for p in pairs))


def parse_type(text: str):
    """The quant dialect's type parser: `quant.uniform<...>` in the spelling MLIR prints (None:
    already so, or not a uniform type)."""
    canonical = canonical_uniform(text)
    return T.DialectType(canonical) if canonical is not None and canonical != text else None


#: Expressed type -> (smallest positive, largest finite) value: the range a scale must lie in.
_SCALE_RANGE = {"f16": (2.0 ** -24, 65504.0), "bf16": (2.0 ** -133, 3.3895313892515355e38),
                "f32": (2.0 ** -149, 3.4028234663852886e38), "f64": (5e-324, 1.7976931348623157e308)}
_AXIS = re.compile(r"uniform<[^>,]*?(?:<[^>]*>)?[^,<>]*?:\s*\w+\s*:\s*(-\d+)")


def check_text(text: str) -> Optional[tuple]:
    """Errors MLIR's quant type parser reports: (message, offset in the text) or None."""
    if not text.startswith("quant.uniform<"):
        return None
    m = _AXIS.match(text[len("quant."):])
    if m is not None:
        return f"illegal quantized dimension: {m.group(1)}", len("quant.") + m.start(1)
    m = _UNIFORM.match(text[len("quant."):])
    if m is None or m.group("expressed") not in _SCALE_RANGE:
        return None
    lo, hi = _SCALE_RANGE[m.group("expressed")]
    params = m.group("params")
    for part in (params[1:-1].split(",") if params.startswith("{") else [params]):
        sm = _SCALE_ZP.match(part)
        if sm is None:
            return None
        scale = sm.group("scale")
        value = float.fromhex(scale) if scale.lower().startswith("0x") else float(scale)
        if not lo <= value <= hi:
            return (f"scale {value:e} out of expressed type range [{lo:e}, {hi:e}]",
                    len("quant.") + m.start("params"))
    return None

