"""Where the editor's debugging commands leave files: one temporary directory per server, made when
first needed and removed when the server stops, with one directory per (command, function) in it.

A bisect's repro stays while its markers link to it, a reduced module while its editor shows it;
the next bisect or reduction of the same function replaces them, so a long session does not fill
the temporary directory; and nothing is left once the server is gone.
"""
from __future__ import annotations

import shutil
import tempfile
import threading
from pathlib import Path
from typing import Hashable, Optional


class Scratch:
    def __init__(self, prefix: str = "mlirtext-editor-"):
        self.prefix = prefix
        self.root: Optional[Path] = None
        self.dirs: dict = {}
        self.lock = threading.Lock()   # (the commands run on the server's work threads)

    def fresh(self, key: Hashable, name: str) -> Path:
        """A new, empty directory for `key` (named after `name`), the one made before for it removed."""
        with self.lock:
            if self.root is None:
                self.root = Path(tempfile.mkdtemp(prefix=self.prefix))
            old = self.dirs.pop(key, None)
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
            made = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=self.root))
            self.dirs[key] = made
            return made

    def remove(self, key: Hashable) -> None:
        """Remove the directory of `key`, if any."""
        with self.lock:
            old = self.dirs.pop(key, None)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)

    def close(self) -> None:
        """Remove everything (the server stops)."""
        with self.lock:
            root, self.root, self.dirs = self.root, None, {}
        if root is not None:
            shutil.rmtree(root, ignore_errors=True)
