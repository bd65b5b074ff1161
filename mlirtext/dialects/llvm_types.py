"""LLVM dialect types: `!llvm.ptr<1>`, `!llvm.struct<"name", packed (...)>`, `!llvm.array<4 x i32>`,
`!llvm.func<void (i32, ...)>`, `!llvm.void`, `!llvm.target<...>` and friends.

Each is a `DialectType` (so code that only knows verbatim dialect types keeps
working) whose text is the canonical spelling MLIR prints, and which carries
its structure (element types, sizes, address space). Two spellings of one type
(`!llvm.array<4xi32>`, `!llvm.array<4 x i32>`) become one value. Text this
module cannot read (`!llvm.vec<...>`, removed upstream) stays verbatim.

The llvm dialect's `type_parser` is `parse_llvm_type`, so every `!llvm...` that
a parser with the llvm dialect in its registry reads comes through it.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Optional

from ..ir import types as T
from ..ir.attributes import escape_string
from ..syntax.strings import unescape


class LLVMType(T.DialectType):
    """Base of structured LLVM types; equal to any DialectType with the same text."""

    __slots__ = ()

    def _set(self, **fields) -> None:
        for k, v in fields.items():
            object.__setattr__(self, k, v)

    def __eq__(self, other) -> bool:
        return isinstance(other, T.DialectType) and other.text == self.text

    def __hash__(self) -> int:
        return hash((self.text,))

    def __reduce__(self):  # frozen + slots: pickle through the text
        return (parse_llvm_type, (self.text,))


def nested(t: T.Type) -> str:
    """How a type is written inside an LLVM type body (`ptr`, not `!llvm.ptr`)."""
    if isinstance(t, T.DialectType) and t.text.startswith("llvm."):
        return t.text[5:]
    return str(t)


class LLVMPointerType(LLVMType):
    __slots__ = ("address_space",)

    def __init__(self, address_space: int = 0):
        self._set(address_space=address_space,
                  text="llvm.ptr" if not address_space else f"llvm.ptr<{address_space}>")


class LLVMSimpleType(LLVMType):
    """Types without parameters: void, token, label, metadata, ppc_fp128, x86_amx, x86_mmx."""

    __slots__ = ("name",)
    NAMES = ("void", "token", "label", "metadata", "ppc_fp128", "x86_amx", "x86_mmx")

    def __init__(self, name: str):
        self._set(name=name, text=f"llvm.{name}")


class LLVMArrayType(LLVMType):
    __slots__ = ("size", "element")

    def __init__(self, size: int, element: T.Type):
        self._set(size=size, element=element, text=f"llvm.array<{size} x {nested(element)}>")


class LLVMStructType(LLVMType):
    """Literal (`name` None) or identified struct; `body` None: opaque or a reference by name."""

    __slots__ = ("name", "body", "packed", "opaque")

    def __init__(self, body: Optional[tuple], packed: bool = False, name: Optional[str] = None,
                 opaque: bool = False):
        parts = []
        if name is not None:
            parts.append(escape_string(name))
        if opaque:
            parts.append("opaque")
        elif body is not None:
            parts.append(("packed " if packed else "") + "(" + ", ".join(nested(t) for t in body) + ")")
        self._set(name=name, body=None if body is None else tuple(body), packed=packed, opaque=opaque,
                  text=f"llvm.struct<{', '.join(parts)}>")

    @property
    def is_identified(self) -> bool:
        return self.name is not None


class LLVMFunctionType(LLVMType):
    __slots__ = ("result", "params", "vararg")

    def __init__(self, result: T.Type, params=(), vararg: bool = False):
        params = tuple(params)
        args = [nested(p) for p in params] + (["..."] if vararg else [])
        self._set(result=result, params=params, vararg=vararg,
                  text=f"llvm.func<{nested(result)} ({', '.join(args)})>")

    @property
    def returns_void(self) -> bool:
        return is_void(self.result)


class LLVMTargetExtType(LLVMType):
    __slots__ = ("name", "type_params", "int_params")

    def __init__(self, name: str, type_params=(), int_params=()):
        parts = [escape_string(name)] + [nested(t) for t in type_params] + [str(i) for i in int_params]
        self._set(name=name, type_params=tuple(type_params), int_params=tuple(int_params),
                  text=f"llvm.target<{', '.join(parts)}>")


VOID = LLVMSimpleType("void")
PTR = LLVMPointerType(0)


def is_void(t) -> bool:
    return isinstance(t, T.DialectType) and t.text == "llvm.void"


def is_pointer(t) -> bool:
    return isinstance(t, LLVMPointerType) or (isinstance(t, T.DialectType) and t.text.startswith("llvm.ptr"))


def is_pointer_like(t) -> bool:
    """A pointer or a vector of pointers."""
    return is_pointer(t) or (isinstance(t, T.VectorType) and is_pointer(t.element))


# ---- reading type text -------------------------------------------------------------
class _Unreadable(Exception):
    pass


_WS = re.compile(r"\s*")
_WORD = re.compile(r"[A-Za-z_][\w$.]*")
_INT = re.compile(r"-?[0-9]+")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_DIMS = re.compile(r"(?:(?:[0-9]+|\[[0-9]+\])\s*x\s*)+")


class _Reader:
    def __init__(self, text: str):
        self.text = text
        self.pos = 0

    def skip(self) -> None:
        self.pos = _WS.match(self.text, self.pos).end()

    def peek(self, s: str) -> bool:
        self.skip()
        return self.text.startswith(s, self.pos)

    def eat(self, s: str) -> bool:
        if self.peek(s):
            self.pos += len(s)
            return True
        return False

    def expect(self, s: str) -> None:
        if not self.eat(s):
            raise _Unreadable(f"expected '{s}'")

    def match(self, rx):
        self.skip()
        m = rx.match(self.text, self.pos)
        if m is None:
            return None
        self.pos = m.end()
        return m.group()

    def string(self) -> str:
        s = self.match(_STRING)
        if s is None:
            raise _Unreadable("expected a string")
        return unescape(s)

    # -- types --------------------------------------------------------------------
    def type(self) -> T.Type:
        """A type inside an LLVM type body: LLVM keyword types, builtin scalars and vectors."""
        if self.eat("!"):
            word = self.match(_WORD)
            if word is None or not word.startswith("llvm."):
                raise _Unreadable("non-LLVM dialect type inside an LLVM type")
            return self.legacy_vector() if word == "llvm.vec" else self.keyword_type(word[5:])
        word = self.match(_WORD)
        if word is None:
            raise _Unreadable("expected a type")
        if word == "vector":
            return self.vector()
        if word == "vec":
            return self.legacy_vector()
        builtin = T.scalar_type_from_name(word)
        if builtin is not None:
            return builtin
        return self.keyword_type(word)

    def vector(self) -> T.Type:
        self.expect("<")
        dims = self.match(_DIMS)
        if dims is None:
            raise _Unreadable("expected vector dimensions")
        shape, scalable = [], []
        for part in dims.split("x")[:-1]:
            part = part.strip()
            scalable.append(part.startswith("["))
            shape.append(int(part.strip("[]")))
        element = self.type()
        self.expect(">")
        return T.VectorType(tuple(shape), element, tuple(scalable) if any(scalable) else ())

    def legacy_vector(self) -> T.Type:
        """`vec<?x4 x i32>` (removed upstream) inside an LLVM type: kept verbatim, as it is at the
        top level, so that `!llvm.func<vec<...> ()>` (how a function returning one prints) reads back."""
        self.skip()
        start, depth = self.pos, 0
        for end in range(start, len(self.text)):
            depth += {"<": 1, ">": -1}.get(self.text[end], 0)
            if depth == 0:
                break
        if self.pos == len(self.text) or self.text[start] != "<" or depth:
            raise _Unreadable("expected '<' ... '>' after vec")
        self.pos = end + 1
        return T.DialectType("llvm.vec" + self.text[start:self.pos])

    def keyword_type(self, word: str) -> T.Type:
        if word == "ptr":
            if self.eat("<"):
                n = self.match(_INT)
                if n is None:
                    raise _Unreadable("expected an address space")
                self.expect(">")
                return LLVMPointerType(int(n))
            return PTR
        if word in LLVMSimpleType.NAMES:
            return LLVMSimpleType(word)
        if word == "array":
            self.expect("<")
            n = self.match(_INT)
            if n is None:
                raise _Unreadable("expected an array size")
            self.expect("x")
            element = self.type()
            self.expect(">")
            return LLVMArrayType(int(n), element)
        if word == "func":
            self.expect("<")
            result = self.type()
            self.expect("(")
            params, vararg = [], False
            if not self.eat(")"):
                while True:
                    if self.eat("..."):
                        vararg = True
                        self.expect(")")
                        break
                    params.append(self.type())
                    if self.eat(")"):
                        break
                    self.expect(",")
            self.expect(">")
            return LLVMFunctionType(result, params, vararg)
        if word == "struct":
            return self.struct()
        if word == "target":
            self.expect("<")
            name = self.string()
            types, ints = [], []
            while self.eat(","):
                n = self.match(_INT)
                if n is not None:
                    ints.append(int(n))
                elif ints:
                    raise _Unreadable("type parameters must precede integer parameters")
                else:
                    types.append(self.type())
            self.expect(">")
            return LLVMTargetExtType(name, types, ints)
        raise _Unreadable(f"unknown LLVM type: {word}")

    def struct(self) -> T.Type:
        self.expect("<")
        name = None
        if self.peek('"'):
            name = self.string()
            if self.eat(">"):
                return LLVMStructType(None, name=name)
            self.expect(",")
            if self.eat("opaque"):
                self.expect(">")
                return LLVMStructType(None, name=name, opaque=True)
        packed = self.eat("packed")
        self.expect("(")
        body = []
        if not self.eat(")"):
            while True:
                body.append(self.type())
                if self.eat(")"):
                    break
                self.expect(",")
        self.expect(">")
        return LLVMStructType(tuple(body), packed, name)


def _read(text: str):
    """`text` (after `!`: `llvm.ptr<1>`) as its LLVM type, or (message, offset in the text) where
    MLIR's LLVM type parser would stop."""
    reader = _Reader(text)
    reader.pos = 5
    try:
        word = reader.match(_WORD)
        if word is None:
            return "expected an LLVM type", 5
        t = reader.keyword_type(word)
    except (_Unreadable, ValueError) as e:
        return str(e), reader.pos
    reader.skip()
    if reader.pos != len(text):
        return "unexpected text after the LLVM type", reader.pos
    return t


@lru_cache(maxsize=8192)
def parse_llvm_type(text: str) -> Optional[T.Type]:
    """`llvm.ptr<1>` (the text after `!`) as its LLVM type; None where it is not readable."""
    if not text.startswith("llvm."):
        return None
    t = _read(text)
    return None if isinstance(t, tuple) else t


def check_text(text: str) -> Optional[tuple]:
    """The parse-time check of `!llvm.*` text: (message, offset in the text) where MLIR's LLVM
    type parser would stop, or None. The removed `!llvm.vec<...>` stays readable verbatim (the
    verifier reports it) so that its error lands where MLIR's tests expect it."""
    if text.startswith("llvm.vec") or parse_llvm_type(text) is not None:
        return None
    problem = _read(text)
    return problem if isinstance(problem, tuple) else None


def llvm_type(text: str) -> T.Type:
    """The llvm type `text` spells (`llvm.ptr`, `llvm.array<4 x f32>`), for code that builds llvm IR."""
    t = parse_llvm_type(text)
    if t is None:
        raise ValueError(f"not an llvm type: !{text}")
    return t

