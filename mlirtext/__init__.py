"""mlirtext: read, check, lower and run MLIR text.

The main entry points live in `mlirtext.api` (parse, verify, print); the
command line is `mlirtext` (`mlirtext/cli/`).
"""
__version__ = "0.1.0"
