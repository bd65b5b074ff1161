"""Every sweep's per-test results, kept in SQLite: one row per run (suite, when, how long, the commit
and machine), one per test result (status, error line, max error, seconds, size, the node it ran on).

The default file is `sweeps.sqlite` in the user's cache directory (`$XDG_CACHE_HOME/mlirtext`, else
`~/.cache/mlirtext`); `--db` names another.
"""
from __future__ import annotations

import datetime
import json
import os
import platform
import sqlite3
import subprocess

from .results import Result

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (id INTEGER PRIMARY KEY, suite TEXT NOT NULL, started TEXT NOT NULL,
    seconds REAL, git_commit TEXT, machine TEXT, options TEXT);
CREATE TABLE IF NOT EXISTS results (run INTEGER NOT NULL REFERENCES runs(id), test TEXT NOT NULL,
    status TEXT NOT NULL, error TEXT, max_error REAL, seconds REAL, size INTEGER, node TEXT,
    PRIMARY KEY (run, test));
"""


class StoreError(Exception):
    """A one-line reason the database cannot be used."""


def default_path() -> str:
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "mlirtext", "sweeps.sqlite")


def open_db(path: str | None, create: bool = True) -> sqlite3.Connection:
    path = path or default_path()
    if not create and not os.path.isfile(path):
        raise StoreError(f"no sweep database at '{path}' (run `mlirtext sweep SUITE` first, or give --db)")
    try:
        if create:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        db = sqlite3.connect(path)
        db.executescript(SCHEMA)
    except (OSError, sqlite3.Error) as e:
        raise StoreError(f"cannot use the sweep database '{path}': {e}") from None
    return db


def git_commit() -> str:
    """The commit of the checkout mlirtext runs from ('' outside git)."""
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        out = subprocess.run(["git", "-C", here, "rev-parse", "--short=12", "HEAD"], capture_output=True,
                             text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


def machine() -> str:
    return f"{platform.node()} ({os.cpu_count()} CPUs, {platform.machine()})"


def save_run(db: sqlite3.Connection, suite: str, results: list[Result], seconds: float, options: dict) -> int:
    with db:
        run = db.execute("INSERT INTO runs (suite, started, seconds, git_commit, machine, options) "
                         "VALUES (?, ?, ?, ?, ?, ?)",
                         (suite, datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                          seconds, git_commit(), machine(), json.dumps(options, sort_keys=True, default=str)
                          )).lastrowid
        db.executemany("INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                       [(run, r.test, r.status, r.error, r.max_error, r.seconds, r.size, r.node) for r in results])
    return run


def runs(db: sqlite3.Connection, suite: str | None = None) -> list[dict]:
    """The runs, newest first (of one suite when given)."""
    rows = db.execute("SELECT id, suite, started, seconds, git_commit, machine FROM runs "
                      + ("WHERE suite = ? " if suite else "") + "ORDER BY id DESC", (suite,) if suite else ())
    return [dict(zip(("id", "suite", "started", "seconds", "commit", "machine"), row)) for row in rows]


def results_of(db: sqlite3.Connection, run: int) -> dict[str, Result]:
    rows = db.execute("SELECT test, status, error, max_error, seconds, size, node FROM results WHERE run = ?",
                      (run,))
    return {row[0]: Result(*row) for row in rows}
