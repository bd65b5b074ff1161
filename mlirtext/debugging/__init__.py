"""Finding what broke: faults injected on purpose (`faults.py`), the pass that changes a
function's numbers, crashes or breaks the IR (`bisect.py`), and the repro it leaves
(`repro.py`). Plain values in, plain values out: the command lines print."""
