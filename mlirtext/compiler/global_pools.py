"""Global pooling as a sum over the image with the channels innermost (llvm-cpu kernels).

A global average pool (squeeze-and-excitation's, the classifier's) reaches the kernels as a window
sum: `stablehlo.reduce_window` with a window the size of the image, lowered to a generic over
output dims (n, 1, 1, c) and window dims (1, H, W, 1) with a window tensor as its first input. Its
loops nest in that order, so the innermost loop that does anything walks a column of the image,
IC floats apart: one scalar add per element (EfficientNet-B0's 17 pools took 1.2 ms of its 18).

The same sum written over the input's own dims, out[n, 0, 0, c] += x[n, h, w, c] with (h, w)
reductions, nests (n, h, w, c): the innermost loop is along the channels, contiguous in NHWC,
and vectorises, each element added in the same (h, w) order as before (the same rounding).
"""
from __future__ import annotations

from ..dialects.linalg import iterator_name, segments
from ..ir import types as T
from ..ir.attributes import ArrayAttr, DenseArrayAttr, OpaqueAttr
from ..ir.core import Block, Operation, Region
from ..transforms.conversions.linalg_to_loops import structured
from ..transforms.dispatch import is_dispatch_function
from .conv_patterns import same_affine


def rewrite_global_pools(module: Operation) -> int:
    """Rewrite each whole-image window sum of the module's dispatch functions; how many."""
    count = 0
    for fn in module.regions[0].blocks[0].ops:
        if is_dispatch_function(fn):
            for op in [op for op in fn.walk() if op.name == "linalg.generic"]:
                count += _rewrite(op)
    return count


def _rewrite(op: Operation) -> bool:
    ins, outs = segments(op)
    if len(ins) != 2 or len(outs) != 1 or len(op.results) != 1:
        return False
    window, x, out = ins[0].type, ins[1].type, outs[0].type
    if not all(isinstance(t, T.RankedTensorType) for t in (window, x, out)) or \
            T.element_type(x) != T.f32 or T.element_type(out) != T.f32:
        return False
    r = x.rank
    if window.rank != r or out.rank != r:
        return False
    # every dim is either kept (window 1, output = input) or pooled whole (window = input, output 1)
    pooled = [w == n and o == 1 and n > 1 for w, n, o in zip(window.shape, x.shape, out.shape)]
    kept = [w == 1 and o == n for w, n, o in zip(window.shape, x.shape, out.shape)]
    if not any(pooled) or not all(p or k for p, k in zip(pooled, kept)):
        return False
    try:
        s = structured(op)
    except Exception:  # noqa: BLE001 - not a structured op we can read
        return False
    kinds = ["parallel"] * r + ["reduction"] * r
    if s.num_dims != 2 * r or [iterator_name(a) for a in op.attr("iterator_types").items] != kinds or \
            not same_affine(s.maps[0], lambda d: tuple(d[r + i] for i in range(r)), 2 * r) or \
            not same_affine(s.maps[1], lambda d: tuple(d[i] + d[r + i] for i in range(r)), 2 * r) or \
            not same_affine(s.maps[2], lambda d: tuple(d[:r]), 2 * r):
        return False
    block = op.regions[0].blocks[0]
    w_arg, x_arg, o_arg = block.arguments
    body = block.ops
    if w_arg.uses or len(body) != 2 or body[0].name != "arith.addf" or \
            set(body[0].operands) != {x_arg, o_arg} or body[1].operands[0] is not body[0].results[0]:
        return False
    new_block = Block([T.f32, T.f32])
    mapping = {x_arg: new_block.arguments[0], o_arg: new_block.arguments[1]}
    for inner in body:
        new_block.append(inner.clone(mapping))
    dims = ", ".join(f"d{i}" for i in range(r))
    out_map = ", ".join("0" if p else f"d{i}" for i, p in enumerate(pooled))
    attrs = dict(op.attributes)
    attrs["indexing_maps"] = ArrayAttr((OpaqueAttr(f"affine_map<({dims}) -> ({dims})>"),
                                        OpaqueAttr(f"affine_map<({dims}) -> ({out_map})>")))
    attrs["iterator_types"] = ArrayAttr(tuple(OpaqueAttr(f"#linalg.iterator_type<{'reduction' if p else 'parallel'}>")
                                              for p in pooled))
    attrs["operandSegmentSizes"] = DenseArrayAttr(T.i32, (1, 1))
    new = Operation("linalg.generic", [ins[1], outs[0]], [out], attrs, [Region([new_block])],
                    span=op.span, location=op.location)
    new.name_span = op.name_span
    op.parent.insert_before(op, new)
    new.results[0].name = op.results[0].name
    op.results[0].replace_all_uses_with(new.results[0])
    window_source = ins[0]
    op.erase()
    producer = getattr(window_source, "op", None)   # (the window tensor, now unused)
    if producer is not None and producer.name == "tensor.empty" and not window_source.uses:
        producer.erase()
    return True

