"""The editor's scratch directory (mlirtext/analysis/scratch.py): one per server, a directory per
(command, function) in it that the next one replaces, all of it gone when the server stops."""
from __future__ import annotations

import tempfile

from mlirtext.analysis.scratch import Scratch


def test_each_key_keeps_only_its_last_directory_and_close_removes_all(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    scratch = Scratch()
    first = scratch.fresh(("bisect", "f"), "bisect-f")
    (first / "README").write_text("x")
    other = scratch.fresh(("bisect", "g"), "bisect-g")
    second = scratch.fresh(("bisect", "f"), "bisect-f")
    assert not first.exists() and second.exists() and other.exists() and second.parent == other.parent
    assert [p.name for p in tmp_path.iterdir()] == [second.parent.name]
    scratch.remove(("bisect", "g"))
    assert not other.exists() and second.exists()
    scratch.close()
    assert list(tmp_path.iterdir()) == []
    scratch.close()   # (again: nothing to do)
    assert scratch.fresh("k", "again").exists()   # a new root when needed again
    scratch.close()
    assert list(tmp_path.iterdir()) == []
