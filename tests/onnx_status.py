"""ONNX conformance: the ONNX backend node tests through torch-mlir to StableHLO, run by mlirtext.

    python -m tests.onnx_status [-j N] [--time-limit S] [--filter SUBSTR] [--limit N] [--tsv FILE]

Each test under `onnx/backend/test/data/node` (shipped in the onnx==1.22.0 wheel) is a model with
input and expected output tensors. A test is *converted* when torch-mlir turns it into StableHLO;
when it does not, and the test has scalar or integer-vector inputs, it is tried once more with those
bound to the test's values as constants (StableHLO needs static shapes, and such inputs often decide
one: a reduction's axes, Reshape's shape, TopK's k), and the summary counts those separately. It is
*ran* when mlirtext runs that on a device without an error, and *matched* when the outputs equal
the expected ones (integers and booleans exactly; floats within rtol 1e-3, atol 1e-5, NaN where
NaN is expected). Devices: `reference` (the interpreter) and `local-task` (compiled to native code,
run on the VM's thread pool). Tests run in worker processes, each with a time limit; a worker that
crashes or runs over is replaced and the test is counted as failed for that reason.
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import time

from .worker_slot import WorkerSlot

DEVICES = ("reference", "local-task")
RTOL, ATOL = 1e-3, 1e-5


def node_tests_dir() -> str:
    import onnx
    return os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node")


def read_case(directory: str):
    """(inputs, expected outputs) of a test's first data set, as numpy arrays."""
    import onnx
    from onnx import numpy_helper
    data = os.path.join(directory, "test_data_set_0")

    def tensors(prefix):
        out = []
        for i in range(len([f for f in os.listdir(data) if f.startswith(prefix)])):
            proto = onnx.TensorProto()
            with open(os.path.join(data, f"{prefix}{i}.pb"), "rb") as f:
                proto.ParseFromString(f.read())
            out.append(numpy_helper.to_array(proto))
        return out
    return tensors("input_"), tensors("output_")


def input_names(directory: str) -> list[str]:
    """The names of the model's inputs, in the order of the test's input_N.pb files."""
    import onnx
    graph = onnx.load(os.path.join(directory, "model.onnx"), load_external_data=False).graph
    initialized = {t.name for t in graph.initializer}
    return [i.name for i in graph.input if i.name not in initialized]


def shape_inputs(directory: str) -> dict:
    """The test's scalar and integer-vector inputs, by name: the values that may decide a shape
    (axes, pads, repeats, k, a target shape, a window size). Sequence and optional inputs: none."""
    try:
        inputs, _ = read_case(directory)
    except Exception:  # inputs that are no tensors (sequences, optionals) bind nothing
        return {}
    return {name: a for name, a in zip(input_names(directory), inputs)
            if a.ndim == 0 or (a.ndim == 1 and a.dtype.kind in "iu")}


def _is_float(dtype) -> bool:
    """numpy's floats and complexes, and ml_dtypes' bf16 and f8 kinds (which numpy calls void, 'V')."""
    return dtype.kind in "fc" or dtype.name.startswith(("float", "bfloat"))


def outputs_match(got, want) -> str:
    """'' when `got` equals `want`, else what differs."""
    import numpy as np
    if len(got) != len(want):
        return f"{len(got)} results, expected {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape:
            return f"result {i}: shape {g.shape}, expected {w.shape}"
        if _is_float(w.dtype):
            # Rounded to the expected type, then compared as complex128 (bf16 and f8 arrays have no
            # arithmetic of their own in numpy).
            g, w = g.astype(w.dtype).astype(np.complex128), w.astype(np.complex128)
            close = np.isclose(g, w, rtol=RTOL, atol=ATOL, equal_nan=True)
            if not close.all():
                worst = np.abs(g - w)[~close].max()  # nan where one side is NaN and the other is not
                return f"result {i}: {int((~close).sum())} elements differ, max abs error {worst:.3g}"
        elif not np.array_equal(g.astype(w.dtype), w):
            return f"result {i}: {int((g.astype(w.dtype) != w).sum())} elements differ"
    return ""


def run_one(directory: str, devices=DEVICES, converted=lambda: None) -> dict:
    """Convert, run on each device and compare one test; the record of what happened.
    `converted()` is called once torch-mlir has converted the model."""
    import numpy as np

    from mlirtext.api import parse_and_verify
    from mlirtext.importers.common import ImportFailed
    from mlirtext.importers.onnx import convert
    from mlirtext.interpreter import Interpreter
    from mlirtext.runtime import compile_text, load_module
    record = {"test": os.path.basename(directory), "converted": False}
    model = os.path.join(directory, "model.onnx")
    bound = {}
    try:
        text = convert(model, "stablehlo")
    except ImportFailed as e:
        record["why"] = str(e).splitlines()[-1].strip()[:200]
        bound = shape_inputs(directory)
        if not bound:
            return record
        try:
            text = convert(model, "stablehlo", constants=bound)
        except ImportFailed:
            return record
        del record["why"]
        record["bound"] = ",".join(bound)
    record["converted"] = True
    converted()
    inputs, expected = read_case(directory)
    inputs = [a for name, a in zip(input_names(directory), inputs) if name not in bound]
    result = parse_and_verify(text, record["test"])
    if not result.ok:
        why = "parse/verify: " + result.diagnostics[0].message[:160]
        for device in devices:
            record[device] = why
        return record
    fn = next(op.attributes["sym_name"].value for op in result.module.regions[0].blocks[0].ops
              if op.name == "func.func")
    for device in devices:
        try:
            if device == "reference":
                got = Interpreter(result.module).call(fn, [np.asarray(a) for a in inputs])
            else:
                got = load_module(compile_text(text, filename=record["test"]), device)\
                    .vm_module.function(fn)(*inputs)
        except Exception as e:  # any failure to run is a result of this test, reported as such
            record[device] = f"error: {type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"
            continue
        diff = outputs_match(got, expected)
        record[device] = f"ran: {diff}" if diff else "matched"
    return record


def _worker(conn, devices) -> None:
    while True:
        directory = conn.recv()
        if directory is None:
            return
        started = time.monotonic()
        record = run_one(directory, devices, lambda: conn.send("converted"))
        record["seconds"] = round(time.monotonic() - started, 2)
        conn.send(record)


def _replace(slot: WorkerSlot, why: str) -> dict:
    """The running test's record after its worker crashed or ran over; the slot gets a fresh worker."""
    # A crash inside torch-mlir (it segfaults on a few models) means the test was not converted.
    converted = bool(slot.extra)
    record = {"test": os.path.basename(slot.task), "converted": converted, "why": why}
    if converted:
        record.update({d: why for d in slot.args[0]})
    slot.replace()
    return record


def run_all(directories: list[str], jobs: int, time_limit: float, devices=DEVICES, report=None,
            budget: float = 0.0) -> list[dict]:
    """Every test's record; with a `budget` (seconds), no test starts after it is spent."""
    ctx = mp.get_context("spawn")  # torch-mlir's native state must not be forked mid-use
    slots = [WorkerSlot(ctx, _worker, devices) for _ in range(max(1, min(jobs, len(directories))))]
    pending, records = list(reversed(directories)), []
    stop_starting = time.monotonic() + budget if budget else float("inf")
    try:
        while pending or any(s.task for s in slots):
            if time.monotonic() > stop_starting:
                pending = []
            for slot in slots:
                if slot.task is None and pending:
                    slot.give(pending.pop())
            ready = mp.connection.wait([s.conn for s in slots if s.task], timeout=1.0)
            for slot in slots:
                if slot.task is None:
                    continue
                record = None
                if slot.over(time_limit):   # first: a message that comes after the limit is late too
                    record = _replace(slot, f"over the {time_limit:g} s time limit")
                elif slot.conn in ready:
                    try:
                        message = slot.conn.recv()
                        if message == "converted":
                            slot.extra = True   # (converted)
                        else:
                            record, slot.task = message, None
                    except (EOFError, OSError):  # the worker died mid-test
                        record = _replace(slot, "crashed")
                elif not slot.process.is_alive():
                    record = _replace(slot, "crashed")
                if record is not None:
                    records.append(record)
                    if report:
                        report(record)
    finally:
        for slot in slots:
            slot.kill()
    return records


def summary(records: list[dict], devices=DEVICES) -> str:
    converted = [r for r in records if r["converted"]]
    bound = [r for r in converted if r.get("bound")]
    lines = [f"ONNX node tests: {len(records)}; converted to StableHLO by torch-mlir: {len(converted)}",
             f"  of which {len(bound)} only with their scalar and integer-vector inputs as constants"]
    for device in devices:
        ran = [r for r in converted if not r.get(device, "").startswith(("error", "parse", "crashed", "over"))]
        matched = [r for r in converted if r.get(device) == "matched"]
        lines.append(f"  {device:<10} ran {len(ran)}, matched {len(matched)} (of {len(converted)} converted; "
                     f"{sum(1 for r in matched if r.get('bound'))} of them with constant inputs)")
    if len(devices) > 1:
        every = [r for r in converted if all(r.get(d) == "matched" for d in devices)]
        lines.append(f"  matched on every device: {len(every)}")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.onnx_status", description=__doc__.split("\n\n")[0])
    p.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1, help="worker processes")
    p.add_argument("--time-limit", type=float, default=120.0, help="seconds per test (default 120)")
    p.add_argument("--filter", default="", help="only tests whose name contains this")
    p.add_argument("--limit", type=int, default=0, help="only the first N tests (after --filter)")
    p.add_argument("--devices", default=",".join(DEVICES), help=f"comma-separated (default {','.join(DEVICES)})")
    p.add_argument("--budget", type=float, default=0.0,
                   help="start no test after this many seconds (0: no budget); the summary says how many ran")
    p.add_argument("--tsv", help="write one line per test: name, converted, each device's outcome")
    p.add_argument("-v", "--verbose", action="store_true", help="print each test's outcome as it ends")
    args = p.parse_args(argv)
    devices = tuple(d for d in args.devices.split(",") if d)
    unknown = [d for d in devices if d not in DEVICES]
    if unknown or not devices:
        print(f"error: unknown device {unknown[0] if unknown else ''!r}: choose from {', '.join(DEVICES)}",
              file=sys.stderr)
        return 1
    try:
        root = node_tests_dir()
    except ImportError:
        print("error: the onnx package is not installed: pip install 'mlirtext[onnx]'", file=sys.stderr)
        return 1
    directories = sorted(os.path.join(root, d) for d in os.listdir(root) if args.filter in d)
    if args.limit:
        directories = directories[:args.limit]
    started = time.monotonic()

    def report(record):
        if args.verbose:
            outcome = " ".join(f"{d}={record.get(d, '-')}" for d in devices) if record["converted"] \
                else f"not converted: {record.get('why', '')}"
            print(f"{record['test']}: {outcome}", flush=True)
    records = sorted(run_all(directories, args.jobs, args.time_limit, devices, report, args.budget),
                     key=lambda r: r["test"])
    if args.tsv:
        with open(args.tsv, "w") as f:
            f.write("test\tconverted\t" + "\t".join(devices) + "\tseconds\twhy\tconstant inputs\n")
            for r in records:
                f.write("\t".join([r["test"], str(r["converted"])] + [r.get(d, "") for d in devices] +
                                  [str(r.get("seconds", "")), r.get("why", ""), r.get("bound", "")])
                        .replace("\n", " ") + "\n")
    print(summary(records, devices))
    if len(records) < len(directories):
        print(f"budget of {args.budget:g} s spent: {len(directories) - len(records)} of {len(directories)} "
              f"tests not run (partial figures)")
    print(f"({time.monotonic() - started:.0f} s, {args.jobs} workers)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
