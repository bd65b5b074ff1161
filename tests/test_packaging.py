"""The package as `pip install .` (not editable) builds it: every module directory is listed."""
from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_python_package_directory_is_in_pyproject():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    listed = set(config["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "mlirtext").rglob("__init__.py")}
    missing = sorted(found - listed)
    assert not missing, f"not in [tool.setuptools] packages (a plain pip install would lose them): {missing}"
