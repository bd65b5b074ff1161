"""The stablehlo dialect's own bytecode encodings (StablehloBytecode.cpp), read as attribute text.

Each attribute starts with a code; enums are their integer values, dimensions signed
varints. The text is what stablehlo prints, which the text parser reads.
"""
from __future__ import annotations

from .bytecode_encoding import ByteReader

_ENUMS = {
    2: ("comparison_direction", ("EQ", "NE", "GE", "GT", "LE", "LT")),
    3: ("comparison_type", ("NOTYPE", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED")),
    6: ("fft_type", ("FFT", "IFFT", "RFFT", "IRFFT")),
    8: ("precision", ("DEFAULT", "HIGH", "HIGHEST")),
    9: ("rng_algorithm", ("DEFAULT", "THREE_FRY", "PHILOX")),
    10: ("rng_distribution", ("INVALID", "UNIFORM", "NORMAL")),
    12: ("transpose", ("TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT")),
}
_DYNAMIC = -(1 << 63)


def _dims(r: ByteReader) -> list:
    return [r.signed() for _ in range(r.varint())]


def _fields(pairs) -> str:
    """`name = [..]` for the non-empty lists and every scalar, as stablehlo prints them."""
    return ", ".join(f"{k} = {v}" if not isinstance(v, list) else f"{k} = [{', '.join(map(str, v))}]"
                     for k, v in pairs if v != [])


def _conv_layout(batch: str, feature: str, first: int, second: int, spatial: list) -> str:
    slots = [""] * (2 + len(spatial))
    for d, label in ((first, batch), (second, feature)):
        if not 0 <= d < len(slots):
            raise ValueError
        slots[d] = label
    for k, d in enumerate(spatial):
        if not 0 <= d < len(slots) or slots[d]:
            raise ValueError
        slots[d] = str(k)
    return "[" + ", ".join(slots) + "]"


def stablehlo_attribute(r: ByteReader) -> str:
    code = r.varint()
    if code in _ENUMS:
        name, values = _ENUMS[code]
        v = r.varint()
        if v >= len(values):
            raise r.fail(f"stablehlo {name} value {v}")
        return f"#stablehlo<{name} {values[v]}>"
    if code == 1:
        handle, kind = r.signed(), r.signed()
        return f"#stablehlo.channel_handle<handle = {handle}, type = {kind}>"
    if code == 4:
        ib, if_, isp = r.signed(), r.signed(), _dims(r)
        ki, ko, ksp = r.signed(), r.signed(), _dims(r)
        ob, of, osp = r.signed(), r.signed(), _dims(r)
        try:
            return (f"#stablehlo.conv<{_conv_layout('b', 'f', ib, if_, isp)}x"
                    f"{_conv_layout('i', 'o', ki, ko, ksp)}->{_conv_layout('b', 'f', ob, of, osp)}>")
        except ValueError:
            raise r.fail("stablehlo convolution dimension numbers out of range") from None
    if code == 5:
        names = ("lhs_batching_dimensions", "rhs_batching_dimensions", "lhs_contracting_dimensions",
                 "rhs_contracting_dimensions")
        return f"#stablehlo.dot<{_fields((n, _dims(r)) for n in names)}>"
    if code == 7:
        names = ("offset_dims", "collapsed_slice_dims", "operand_batching_dims", "start_indices_batching_dims",
                 "start_index_map")
        pairs = [(n, _dims(r)) for n in names] + [("index_vector_dim", r.signed())]
        return f"#stablehlo.gather<{_fields(pairs)}>"
    if code == 11:
        names = ("update_window_dims", "inserted_window_dims", "input_batching_dims",
                 "scatter_indices_batching_dims", "scatter_dims_to_operand_dims")
        pairs = [(n, _dims(r)) for n in names] + [("index_vector_dim", r.signed())]
        return f"#stablehlo.scatter<{_fields(pairs)}>"
    if code == 13:
        bounds = ", ".join("?" if b == _DYNAMIC else str(b) for b in _dims(r))
        return f"#stablehlo.type_extensions<bounds = [{bounds}]>"
    if code == 14:
        out, index, inner = _dims(r), r.signed(), _dims(r)
        return (f"#stablehlo.output_operand_alias<output_tuple_indices = [{', '.join(map(str, out))}], "
                f"operand_index = {index}, operand_tuple_indices = [{', '.join(map(str, inner))}]>")
    raise r.fail(f"stablehlo attribute code {code} is not supported")


def stablehlo_type(r: ByteReader) -> str:
    code = r.varint()
    if code == 0:
        return "!stablehlo.token"
    raise r.fail(f"stablehlo type code {code} is not supported")
