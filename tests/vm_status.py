"""How many corpus functions that lower to llvm also compile to a module file and give the same
results on the VM: issue 6's figure.

    PYTHONPATH=. python -m tests.vm_status [--files GLOB]... [-v] [--device local-sync|local-task] [--cache FILE]

The functions are those `tests/lowering_status.py` takes to the llvm level (split from their
checks the same way: the function returns what its checks look at). Each one's source module is
compiled as `mlirtext compile` does (without canonicalize, which would fold the constant inputs
and leave no kernel), packed, loaded and run on the device; it matches when every result equals
the interpreter's result for the source function (integers bit-exact, floats within 1e-5 relative
or 1e-6 absolute, NaN where NaN) and the checks pass on them.
"""
from __future__ import annotations

import argparse
import sys
import time
from collections import Counter

from mlirtext.sweeps.vm_suite import VMOutcome, check_function  # noqa: F401 - shared with the tests


def lowered_functions(globs=None, cache=None, progress=None) -> list:
    """The functions lowering_status takes to llvm (from `cache`, a pickle of them as
    native_status.py --cache writes it, when given and present)."""
    import os
    import pickle
    from .lowering_status import collect as lowered
    if cache and os.path.exists(cache):
        with open(cache, "rb") as f:
            return [o for o in pickle.load(f) if o.reached == "llvm"]
    outcomes = [o for o in lowered(globs, progress) if o.reached == "llvm"]
    if cache:
        with open(cache, "wb") as f:
            pickle.dump(outcomes, f)
    return outcomes


def collect(globs=None, device="local-sync", progress=None, cache=None) -> list[VMOutcome]:
    outcomes = []
    for o in lowered_functions(globs, cache, progress):
        if o.reached == "llvm":
            outcomes.append(check_function(o.file, o.function, o.texts["source"], device))
            if progress:
                progress(f"{o.file} @{o.function}: {'ok' if outcomes[-1].ok else outcomes[-1].why}")
    return outcomes


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", action="append", metavar="GLOB", help="glob over corpus file paths (repeatable)")
    ap.add_argument("--device", default="local-sync", choices=("local-sync", "local-task"))
    ap.add_argument("-v", "--verbose", action="store_true", help="list each function that does not match, and why")
    ap.add_argument("--cache", metavar="FILE",
                    help="keep the lowered functions in FILE (a pickle, shared with native_status.py): later "
                         "runs skip lowering")
    args = ap.parse_args(argv)
    start = time.perf_counter()
    outcomes = collect(args.files, args.device, (lambda line: print(line, file=sys.stderr, flush=True))
                       if args.verbose else None, args.cache)
    ok = sum(o.ok for o in outcomes)
    print(f"{ok}/{len(outcomes)} compile to a vmpack and match ({args.device}; "
          f"{sum(o.dispatches for o in outcomes)} dispatches; {time.perf_counter() - start:.0f} s)")
    for reason, n in Counter(o.why for o in outcomes if not o.ok).most_common(20):
        print(f"  {n:5d}  {reason}")
    if args.verbose:
        for o in outcomes:
            if not o.ok:
                print(f"{o.file} @{o.function}: {o.why}")


if __name__ == "__main__":
    main()
