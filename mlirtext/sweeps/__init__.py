"""`mlirtext sweep`: conformance suites run one test per Ray task, checked against expected statuses
and kept in a database.

`results.py` the statuses and one test's result; `isolation.py` a test body in a child process with a
time and memory limit; `runner.py` the
tasks, their retries and the progress line; `expectations.py` the expected-status files; `store.py`
the SQLite history and `report.py` its comparisons. One module per suite says what its tests are and
how one runs: `onnx_suite.py` (the ONNX node tests), `check_suite.py`, `lowering_suite.py`,
`native_suite.py`, `vm_suite.py`, `gpu_suite.py` (the corpus runs, files chosen by `corpus_files.py`),
`files_suite.py` (a directory of .mlir or .onnx files, the benchmark workloads).
"""
