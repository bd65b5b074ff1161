"""mhlo's asynchronous ops: async_start, async_update, async_done: declarations and
checks.
"""
from __future__ import annotations

from typing import Optional

from ...ir import types as T
from ...ir.attributes import StringAttr, SymbolRefAttr
from .declare import HloOp
from .shared import fail, func_type, lookup_func, quoted


def _split_top(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def _bundle(t) -> Optional[list[str]]:
    if isinstance(t, T.DialectType) and t.mnemonic == "async_bundle":
        return _split_top(t.body)
    return None


def _types_text(types) -> str:
    return str(types[0]) if len(types) == 1 else f"tuple<{', '.join(map(str, types))}>"


def _async_start(op):
    if op.results:
        comps = _bundle(op.result_types[0])
        if comps is not None and len(comps) < 2:
            fail(f"bundle is expected to have at least 2 components, but got {len(comps)}")
    callee = op.attr("called_computation")
    if not isinstance(callee, SymbolRefAttr):
        return
    target = lookup_func(op, callee.root)
    if target is None:
        fail(f"can't find function: {callee.root}")
    thread = target.attr("execution_thread")
    if not isinstance(thread, StringAttr):
        fail("callee must have execution_thread attribute")
    mine = op.attr("execution_thread")
    if isinstance(mine, StringAttr) and mine.value != thread.value:
        fail(f'execution_thread does not match the execution_thread of {callee.root}. Got: "{mine.value}", but '
             f'expected "{thread.value}".')
    ft = func_type(target)
    if ft is None:
        return
    if len(op.operands) != len(ft.inputs):
        fail(f"number of operands doesn't match operands for {callee.root}. Got: {len(op.operands)}, but "
             f"expected: {len(ft.inputs)}.")
    for i, (a, b) in enumerate(zip(op.operand_types, ft.inputs)):
        if a != b:
            fail(f"type mismatch on argument #{i} of {callee.root}. Got: '{a}', but expected: '{b}'")
    comps = _bundle(op.result_types[0]) if op.results else None
    if comps is None:
        return
    if ft.inputs and comps[0] != _types_text(ft.inputs):
        fail("component #0 of async bundle doesn't match callee input types")
    if ft.results and comps[1] != _types_text(ft.results):
        fail("component #1 of async bundle doesn't match callee result types")


def _async_done(op):
    if not op.operands or not op.results:
        return
    comps = _bundle(op.operand_types[0])
    if comps is None or len(comps) < 2:
        return
    got = _types_text(op.result_types)
    if comps[1] != got and not comps[1].startswith("tuple<"):
        fail(f"inferred type(s) '{comps[1]}' are incompatible with return type(s) of operation "
             f"{quoted(op.result_types)}")


#: mhlo's own.
MHLO_OPS = (
    HloOp("async_start", "Starts an asynchronous computation.", ("called_computation", "execution_thread"), (),
          _async_start),
    HloOp("async_update", "Blocks on an asynchronous computation's progress.", (), ()),
    HloOp("async_done", "Waits for an asynchronous computation.", (), (), _async_done, inferred=True),
)
