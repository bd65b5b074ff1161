"""The documents the server knows: open ones (edited in memory) and the workspace's
`.mlir` files on disk, parsed on first need and cached by modification time."""
from __future__ import annotations

import os
import threading
from typing import Iterator, Optional
from urllib.parse import quote, unquote, urlparse

from ..dialects.registry import Registry
from .document import Document
from .encoding import encoding_diagnostics

#: Files larger than this are not read for cross-file symbols (they are opened when asked for).
MAX_WORKSPACE_FILE = 2_000_000
MAX_WORKSPACE_FILES = 2000


def uri_to_path(uri: str) -> Optional[str]:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return unquote(parsed.path)


def path_to_uri(path: str) -> str:
    return "file://" + quote(os.path.abspath(path))


class Workspace:
    def __init__(self, roots=(), registry: Optional[Registry] = None):
        """`registry`: the dialects documents are read with (the built-in ones when None: see
        `use_dialects`)."""
        self.roots = [r for r in roots if r]
        self.registry = registry
        self.open_documents: dict[str, Document] = {}
        self._files: dict[str, tuple[float, Document]] = {}
        self._file_list: Optional[list[str]] = None
        self._lock = threading.Lock()

    # -- open documents ------------------------------------------------------------------
    def open(self, uri: str, text: str, version: int, layout=None) -> Document:
        """Analyse a new version (of a new or known document) and make it the current one;
        `layout`: the new document's `layout_of(text)`, when the caller has it."""
        doc = self.open_documents.get(uri)
        # A U+FFFD may be where the editor met bytes that are not UTF-8: the file's bytes say.
        encoding = encoding_diagnostics(text, self._file_bytes(uri) if "\ufffd" in text else None)
        if doc is None or doc.registry is not self.registry:
            doc = Document(uri, text, version, filename=self.filename(uri), layout=layout, registry=self.registry,
                           encoding=encoding)
        else:
            doc = doc.updated(text, version, encoding)
        self.open_documents[uri] = doc
        return doc

    def use_dialects(self, registry: Optional[Registry]) -> None:
        """Read documents with `registry` from now on (the `mlirtext.dialects` setting's IRDL files):
        open documents are re-read on their next version, files on disk on their next use."""
        with self._lock:
            self.registry = registry
            self._files.clear()

    @staticmethod
    def _file_bytes(uri: str) -> Optional[bytes]:
        """The bytes of the file an open document was read from; None when it is no file."""
        path = uri_to_path(uri)   # None for an untitled document or another scheme
        if path is None:
            return None
        try:
            with open(path, "rb") as f:
                return f.read()
        except OSError:
            return None

    @staticmethod
    def filename(uri: str) -> str:
        """The name diagnostics and locations give an open document."""
        return uri_to_path(uri) or uri

    def close(self, uri: str) -> None:
        self.open_documents.pop(uri, None)

    def get(self, uri: str) -> Optional[Document]:
        return self.open_documents.get(uri)

    # -- files on disk -------------------------------------------------------------------
    def file_paths(self) -> list[str]:
        if self._file_list is None:
            found = []
            for root in self.roots:
                for dirpath, dirnames, filenames in os.walk(root):
                    dirnames[:] = [d for d in dirnames if not d.startswith(".") and d != "node_modules"]
                    found.extend(os.path.join(dirpath, f) for f in filenames if f.endswith(".mlir"))
                    if len(found) >= MAX_WORKSPACE_FILES:
                        break
            self._file_list = sorted(found)[:MAX_WORKSPACE_FILES]
        return self._file_list

    def file_document(self, path: str, containing: Optional[str] = None,
                      ignore_case: bool = False) -> Optional[Document]:
        """The analysed file; None when it is too big, unreadable, or (given `containing`)
        does not mention that text: a cheap filter before parsing a file nobody asked about."""
        try:
            stat = os.stat(path)
            if stat.st_size > MAX_WORKSPACE_FILE:
                return None
            with self._lock:
                cached = self._files.get(path)
                if cached is not None and cached[0] == stat.st_mtime and cached[1].registry is self.registry:
                    return cached[1] if _mentions(cached[1].text, containing, ignore_case) else None
            with open(path, "rb") as f:
                text = f.read().decode("utf-8", errors="replace")
        except OSError:
            return None
        if not _mentions(text, containing, ignore_case):
            return None
        doc = Document(path_to_uri(path), text, 0, filename=path, registry=self.registry)
        with self._lock:
            self._files[path] = (stat.st_mtime, doc)
        return doc

    def documents(self, include_files: bool = True, containing: Optional[str] = None,
                  ignore_case: bool = False) -> Iterator[Document]:
        """Open documents first, then the workspace files that are not open (only those
        whose text contains `containing`, when given)."""
        yield from list(self.open_documents.values())
        if not include_files:
            return
        open_paths = {uri_to_path(u) for u in self.open_documents}
        for path in self.file_paths():
            if os.path.abspath(path) in open_paths:
                continue
            doc = self.file_document(path, containing, ignore_case)
            if doc is not None:
                yield doc


def _mentions(text: str, needle: Optional[str], ignore_case: bool) -> bool:
    if needle is None:
        return True
    return needle.lower() in text.lower() if ignore_case else needle in text
