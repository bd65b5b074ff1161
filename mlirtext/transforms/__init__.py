"""Rewrites of the IR: patterns and their greedy driver, passes and pipelines.

`rewriter.py` (patterns and the rewriter they change the IR through),
`driver.py` (apply patterns and folders until nothing changes), `passes.py`
(the Pass base and the registry), `pipeline.py` (pipelines as MLIR text),
`pass_manager.py` (nesting, instrumentation), `lowering_service.py` (lowering
level by level: the one way down every user of lowering takes), `extract.py`
(IR cloned into a module of its own), and one module per pass.
"""
