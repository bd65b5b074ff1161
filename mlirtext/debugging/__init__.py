"""Finding what broke: faults injected on purpose (`faults.py`), the pass that changes a
function's numbers, crashes or breaks the IR (`bisect.py`), the dispatch a device gets wrong
(`device_bisect.py`), dispatch traces and their comparison (`dispatch_trace.py`), and the repros
(`repro.py`). Plain values in, plain values out: the command lines print."""
