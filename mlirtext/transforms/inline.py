"""inline: replace calls to single-block functions by their bodies, then drop
private functions nothing calls any more (as MLIR's inliner does). JAX output
calls private helpers (`@relu`, `@inputs`, `@expected`) that this flattens."""
from __future__ import annotations

from dataclasses import dataclass

from ..ir.core import Operation
from .passes import Pass
from .symbol_dce import erase_unused_private_symbols

#: Rounds of inlining: calls that inlining itself brings in are inlined up to this depth.
MAX_ROUNDS = 16


@dataclass(frozen=True)
class Inliner(Pass):
    name = "inline"
    summary = "Inline calls to single-block functions and erase the private ones left unused"
    anchor = "builtin.module"

    def run(self, module: Operation) -> None:
        for _ in range(MAX_ROUNDS):
            functions = {op.sym_name: op for op in module.walk() if op.name == "func.func" and op.sym_name}
            calls = [op for op in module.walk() if op.name == "func.call"]
            inlined = [call for call in calls if _inline_call(call, functions)]
            if not inlined:
                break
        erase_unused_private_symbols(module)


def _inline_call(call: Operation, functions: dict) -> bool:
    callee = functions.get(call.attr("callee").root) if "callee" in call.attributes else None
    if callee is None or not callee.regions or len(callee.regions[0].blocks) != 1:
        return False
    if callee in call.ancestors():  # recursion: leave the call
        return False
    body = callee.regions[0].blocks[0]
    terminator = body.terminator
    if terminator is None or terminator.name != "func.return":
        return False
    mapping = dict(zip(body.arguments, call.operands))
    block = call.parent
    for op in body.ops[:-1]:
        block.insert_before(call, op.clone(mapping))
    call.replace_with([mapping.get(v, v) for v in terminator.operands])
    return True
