"""The pipeline view's request (`mlirtext.pipeline`) on a generated function of N ops, in this
process, beside what it did before the pass explorer (each level printed, no step per pass, the
LLVM IR of the last): what recording every pass as a step costs.

    PYTHONPATH=. python benchmarks/pipeline_view.py [--ops 300] [--rounds 3]

The function is `benchmarks/graph_view.py`'s (residual blocks of 10 ops). The rounds alternate
the two, so that both see the same machine load; each is timed in CPU seconds of this process
(the machine is shared: its load stretches wall time, not CPU time), the best of the rounds.
No target code (`targets=[]`): the view asks for it separately.
"""
from __future__ import annotations

import argparse
import time

from graph_view import generated_function
from mlirtext.analysis.commands import pipeline
from mlirtext.analysis.document import Document
from mlirtext.analysis.extraction import function_or_chunk
from mlirtext.targets.llvm_ir import translate_module
from mlirtext.transforms.lowering_service import lower_by_level


def with_explorer(doc: Document) -> None:
    answer = pipeline(doc, "big", targets=[])
    assert answer["error"] is None, answer["error"]


def levels_only(doc: Document) -> None:
    """What the pipeline view's request did before the pass explorer: every level printed, and
    the LLVM IR of the last."""
    chunk = next(c for c in doc.chunks if "big" in c.symbols)
    piece, fn = chunk.symbols["big"]
    module, _ = function_or_chunk(doc, chunk, piece, fn)
    for _ in lower_by_level(module, start="linalg"):
        pass
    translate_module(module)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    doc = Document("file:///tmp/pipeline.mlir", generated_function(args.ops))
    best = {with_explorer: float("inf"), levels_only: float("inf")}
    with_explorer(doc)   # warm-up: the passes' modules are imported on first use
    for _ in range(args.rounds):
        for work in best:
            start = time.process_time()
            work(doc)
            best[work] = min(best[work], time.process_time() - start)
    steps = len(pipeline(doc, "big", targets=[])["steps"])
    print(f"{args.ops + 1} ops: the pipeline with the pass explorer ({steps} steps) {best[with_explorer]:.2f} s, "
          f"before the explorer {best[levels_only]:.2f} s (CPU, best of {args.rounds})")


if __name__ == "__main__":
    main()
