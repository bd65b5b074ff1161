"""Conversions between levels (hlo -> tosa -> linalg -> loops -> llvm), one module a step."""
