"""The levels an import can stop at (each front end's own pipeline gets there): a module of its
own, so that the command line offers them without importing the front ends' shared code (numpy)."""

LEVELS = ("stablehlo", "tosa", "linalg")
