"""`mlirtext bench`: the deployment report of a module (size, compile and load time, latency,
peak memory and speedup on every target and device, outputs checked against the baseline), as a
table, JSON, or a self-contained HTML page with the module's journey. The subcommand itself is
`mlirtext/cli/bench.py`.

    measure.py   compile per target, load per device (run_bench)
    timing.py    first call, warm-up, interleaved timing rounds, the method as text
    blas_threads.py  BLAS held to one thread while the bench runs (the numpy baseline)
    compare.py   outputs against the baseline, within a stated tolerance
    rows.py      a row of the table and its figures
    table.py     the text table and the JSON
    journey.py   the text at every level, pass times, dispatches (for the page)
    charts.py    inline SVG bar charts
    page.py      the HTML page
    progress.py  the progress bar / lines on stderr
    iree.py      IREE's compiler and runtime, for --compare-iree and benchmarks/runtime_speed.py
"""
