"""Runtime values that are not numpy arrays.

`!stablehlo.token` / `!mhlo.token` values are the `TOKEN` singleton; HLO tuples are
Python tuples of runtime values.
"""
from __future__ import annotations


class Token:
    """The only value of the token types: it orders side effects and carries no data."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "token"


TOKEN = Token()


def is_token_type(t) -> bool:
    return str(t) in ("!stablehlo.token", "!mhlo.token")
