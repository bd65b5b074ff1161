"""Framework importers: JAX, PyTorch and ONNX models as MLIR text mlirtext parses.

mlirtext drives the field's own importers (jax's StableHLO export, torch-mlir) and owns
everything after them. Each front end is an optional extra (`pip install mlirtext[jax]`,
`[torch]`, `[onnx]`); the modules here import their framework only when called.
"""
