"""The server's stderr: one line per record, never a traceback (the client shows stderr
in its log; a traceback there says nothing to the user and hides the lines around it)."""
from __future__ import annotations

import logging

from .protocol import one_line


class OneLineFormatter(logging.Formatter):
    """`mlirtext-lsp: LEVEL: message (Type: first line of the exception)`."""

    def __init__(self):
        super().__init__("mlirtext-lsp: %(levelname)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        text = (super().format(record).strip().splitlines() or [""])[0]   # a message can hold a traceback too
        exc = record.exc_info[1] if record.exc_info else None
        return f"{text} ({one_line(exc)})" if exc is not None else text

    def formatException(self, ei) -> str:  # noqa: N802 - logging's name
        return ""

    def formatStack(self, stack_info: str) -> str:  # noqa: N802 - logging's name
        return ""
