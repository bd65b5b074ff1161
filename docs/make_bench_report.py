"""The README's deployment table: `mlirtext bench` on the five benchmark workloads, one markdown
table (one row per workload, target and device), and the HTML page of one of them with its
screenshot. Run from the repository root:

    PYTHONPATH=. python docs/make_bench_report.py [--rounds 7] [--targets ...] [--devices ...]
        [--page mlp] [--screenshot docs/report.png]

The screenshot needs `chromium` (headless); without it only the table and the page are made.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
WORKLOADS = ("mlp", "elementwise", "conv", "softmax", "attention")


def markdown_row(workload: str, row) -> str:
    """The table's row in markdown; why a target did not run is cut short (the README's table of
    targets and devices says it in full)."""
    from mlirtext.bench.rows import NOT_RUN
    from mlirtext.bench.table import cells
    c = cells(row)
    outputs = c[-1].split(" (")[0] if row.status == NOT_RUN else c[-1]
    return "| " + " | ".join([workload, *c[:-1], outputs.replace("|", "\\|")]) + " |"


def main(argv=None) -> None:
    from mlirtext.bench.measure import Settings, run_bench
    from mlirtext.bench.page import render_page
    from mlirtext.bench.progress import Progress
    from mlirtext.bench.table import COLUMNS
    from mlirtext.compiler.target_names import TARGETS
    from mlirtext.vm.devices import DEVICES
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--targets", default=",".join(TARGETS))
    ap.add_argument("--devices", default=",".join(DEVICES))
    ap.add_argument("--page", default="mlp", choices=WORKLOADS, help="the workload whose page is made")
    ap.add_argument("--html", default=str(ROOT / "docs" / "report.html"))
    ap.add_argument("--screenshot", default=str(ROOT / "docs" / "report.png"), help="'' for none")
    args = ap.parse_args(argv)
    settings = Settings(args.targets.split(","), args.devices.split(","), rounds=args.rounds)
    lines = ["| workload | " + " | ".join(COLUMNS) + " |", "|" + "---|" * (len(COLUMNS) + 1)]
    for name in WORKLOADS:
        path = ROOT / "benchmarks" / "programs" / f"{name}.mlir"
        text = path.read_text()
        report = run_bench(text, f"benchmarks/programs/{name}.mlir", settings, Progress())
        lines += [markdown_row(name, row) for row in report.rows]
        if name == args.page:
            Path(args.html).write_text(render_page(report, text))
    print("\n".join(lines))
    print(f"\nload: {os.getloadavg()[0]:.1f} (1 min), {os.cpu_count()} CPUs; page: {args.html}")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium and args.screenshot:
        subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        f"--screenshot={args.screenshot}", "--window-size=1280,2000",
                        Path(args.html).resolve().as_uri()], capture_output=True, timeout=120, check=True)
        print(f"screenshot: {args.screenshot} ({os.path.getsize(args.screenshot)} bytes)")


if __name__ == "__main__":
    main()
