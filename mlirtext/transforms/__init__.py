"""Rewrites of the IR: patterns and their greedy driver, passes and pipelines.

`rewriter.py` (patterns and the rewriter they change the IR through),
`driver.py` (apply patterns and folders until nothing changes), `passes.py`
(the Pass base and the registry), `pipeline.py` (pipelines as MLIR text),
`pass_manager.py` (nesting, instrumentation), and one module per pass.
"""
