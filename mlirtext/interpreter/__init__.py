"""The reference interpreter: numpy semantics for the ops mlirtext accepts.

`Interpreter(module).call("fn", [arrays])` runs a function. Each dialect's
semantics live in their own module (`arith.py`, `math.py`, ...), registered by
op name with `@impl`, like xDSL's interpreter functions.
"""
from .machine import Interpreter, InterpreterError, builtin_semantics
from .registry import Semantics

__all__ = ["Interpreter", "InterpreterError", "Semantics", "builtin_semantics"]
