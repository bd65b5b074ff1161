"""The stablehlo and chlo dialects' own bytecode encodings (StablehloBytecode.cpp,
ChloBytecode.cpp), read as attribute and type text.

Each attribute starts with a code; enums are their integer values, dimensions signed
varints, doubles their bits as a signed varint, booleans a byte; references to types and
attributes go through the file's reader (`refs.type`, `refs.attr`). The text is what
stablehlo prints, which the text parser reads.
"""
from __future__ import annotations

import struct

from .bytecode_encoding import ByteReader, float_literal

_ENUMS = {
    2: ("comparison_direction", ("EQ", "NE", "GE", "GT", "LE", "LT")),
    3: ("comparison_type", ("NOTYPE", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED")),
    6: ("fft_type", ("FFT", "IFFT", "RFFT", "IRFFT")),
    8: ("precision", ("DEFAULT", "HIGH", "HIGHEST")),
    9: ("rng_algorithm", ("DEFAULT", "THREE_FRY", "PHILOX")),
    10: ("rng_distribution", ("INVALID", "UNIFORM", "NORMAL")),
    12: ("transpose", ("TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT")),
}
#: Enums spelled as a dialect attribute of their own (`#stablehlo.result_accuracy_mode<TOLERANCE>`).
_NAMED_ENUMS = {16: ("result_accuracy_mode", ("DEFAULT", "HIGHEST", "TOLERANCE"))}
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


def _double(r: ByteReader) -> str:
    return float_literal(struct.unpack("<d", (r.signed() & ((1 << 64) - 1)).to_bytes(8, "little"))[0])


def stablehlo_attribute(r: ByteReader, refs) -> str:
    code = r.varint()
    if code in _NAMED_ENUMS:
        name, values = _NAMED_ENUMS[code]
        v = r.varint()
        if v >= len(values):
            raise r.fail(f"stablehlo {name} value {v}")
        return f"#stablehlo.{name}<{values[v]}>"
    if code == 15:
        lhs, rhs, acc = refs.type(r), refs.type(r), refs.type(r)
        counts = [r.signed() for _ in range(3)]
        imprecise = "true" if r.byte() else "false"
        return (f"#stablehlo.dot_algorithm<lhs_precision_type = {lhs}, rhs_precision_type = {rhs}, "
                f"accumulation_type = {acc}, lhs_component_count = {counts[0]}, rhs_component_count = "
                f"{counts[1]}, num_primitive_operations = {counts[2]}, allow_imprecise_accumulation = {imprecise}>")
    if code == 17:
        atol, rtol, ulps, mode = _double(r), _double(r), r.signed(), refs.attr(r)
        return f"#stablehlo.result_accuracy<atol = {atol}, rtol = {rtol}, ulps = {ulps}, mode = {mode}>"
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


def chlo_attribute(r: ByteReader, refs) -> str:
    """chlo's two: code 0 a comparison direction, 1 a comparison type (stablehlo's enums)."""
    code = r.varint()
    if code not in (0, 1):
        raise r.fail(f"chlo attribute code {code} is not supported")
    name, values = _ENUMS[2 + code]
    v = r.varint()
    if v >= len(values):
        raise r.fail(f"chlo {name} value {v}")
    return f"#chlo<{name} {values[v]}>"


def stablehlo_type(r: ByteReader, refs) -> str:
    code = r.varint()
    if code == 0:
        return "!stablehlo.token"
    if code == 1:
        return f"!stablehlo.future<{', '.join(r.array(refs.type))}>"
    raise r.fail(f"stablehlo type code {code} is not supported")
