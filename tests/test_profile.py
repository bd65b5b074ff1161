"""Profiles (`vm/profile.py`, `mlirtext run --profile`, `mlirtext bench --profile`): the trace
is well-formed Chrome Trace Event Format, its dispatches account for the call's time, and the
per-dispatch table adds up."""
from __future__ import annotations

import json
import re

import pytest

from mlirtext.cli import main

# Two 512x512 matmuls around a sine (which no kernel epilogue takes, so three dispatches): dispatches
# long enough (a few milliseconds) that the host steps are a small part of a call, split into
# workgroups on local-task.
MATMULS = """\
func.func @mm(%a: tensor<512x512xf32>, %b: tensor<512x512xf32>) -> tensor<512x512xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
  %1 = stablehlo.sine %0 : tensor<512x512xf32>
  %2 = stablehlo.dot_general %1, %b, contracting_dims = [1] x [0] : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
  return %2 : tensor<512x512xf32>
}
"""
INPUTS = ["--input=512x512xf32=0.01", "--input=512x512xf32=0.02"]
PHASES = {"X", "B", "E", "i", "I", "M", "C"}


def check_trace_event_format(trace: dict) -> list:
    """The structure the Trace Event Format asks for (its JSON object form); the events."""
    assert isinstance(trace, dict) and isinstance(trace["traceEvents"], list)
    assert trace.get("displayTimeUnit", "ms") in ("ms", "ns")
    events = trace["traceEvents"]
    for e in events:
        assert e["ph"] in PHASES, e
        assert isinstance(e["name"], str) and isinstance(e["pid"], int) and isinstance(e["tid"], int), e
        if e["ph"] == "M":
            assert e["name"] in ("process_name", "thread_name") and isinstance(e["args"]["name"], str)
            continue
        assert isinstance(e["ts"], (int, float)) and e["ts"] >= 0, e
        if e["ph"] == "X":
            assert isinstance(e["dur"], (int, float)) and e["dur"] >= 0, e
        if e["ph"] in ("i", "I"):
            assert e.get("s", "t") in ("g", "p", "t")
        assert "args" not in e or isinstance(e["args"], dict)
    # B/E pairs balance per thread (none are written now; the check holds whoever adds them)
    for key in {(e["pid"], e["tid"]) for e in events}:
        depth = 0
        for e in events:
            if (e["pid"], e["tid"]) == key and e["ph"] in "BE":
                depth += 1 if e["ph"] == "B" else -1
                assert depth >= 0
        assert depth == 0
    # every thread with events is named, and complete events on one thread nest (never cross)
    named = {(e["pid"], e["tid"]) for e in events if e["name"] == "thread_name"}
    assert {(e["pid"], e["tid"]) for e in events if e["ph"] != "M"} <= named
    eps = 0.01   # (microseconds, rounded to 3 places)
    for key in named:
        open_ends = []
        for e in sorted((e for e in events if e["ph"] == "X" and (e["pid"], e["tid"]) == key),
                        key=lambda e: (e["ts"], -e["dur"])):
            while open_ends and open_ends[-1] <= e["ts"] + eps:
                open_ends.pop()
            assert not open_ends or e["ts"] + e["dur"] <= open_ends[-1] + eps, f"{e} crosses its enclosing event"
            open_ends.append(e["ts"] + e["dur"])
    return events


@pytest.fixture(scope="module")
def mm_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("profile") / "mm.mlir"
    path.write_text(MATMULS)
    return path


@pytest.mark.parametrize("device", ["local-task", "local-sync"])
def test_run_profile_writes_a_trace_whose_dispatches_make_up_the_call(mm_file, tmp_path, capsys, device):
    out = tmp_path / "p.json"
    assert main(["run", str(mm_file), *INPUTS, f"--device={device}", "--profile", str(out), "--profile-calls", "3",
                 "--output-max-element-count", "2"]) == 0
    captured = capsys.readouterr()
    assert "EXEC @mm" in captured.out and "512x512xf32=" in captured.out
    events = check_trace_event_format(json.loads(out.read_text()))
    calls = [e for e in events if e.get("cat") == "call"]
    dispatches = [e for e in events if e.get("cat") == "dispatch"]
    assert len(calls) == 3 and dispatches and len(dispatches) % 3 == 0
    # each call: its dispatches inside it, and their durations sum to within 10% of its time
    # (the rest is the host steps: inputs checked, buffers made, results copied). Asserted of the
    # median call: on the shared machine a call is now and then descheduled for 10 ms between
    # two events, which no profile can blame on anything.
    ratios = []
    for call in calls:
        inside = [d for d in dispatches if call["ts"] <= d["ts"] and d["ts"] + d["dur"] <= call["ts"] + call["dur"] + 0.01]
        assert inside and len(inside) == len(dispatches) // 3
        ratios.append(sum(d["dur"] for d in inside) / call["dur"])
        host = [e for e in events if e.get("cat") == "host" and call["ts"] <= e["ts"] <= call["ts"] + call["dur"]]
        assert [h["name"] for h in host] == ["inputs and buffers", "results"]
    assert all(r <= 1.0001 for r in ratios) and sorted(ratios)[1] >= 0.9, ratios
    # each dispatch split into workgroups has them all, once, on the threads that ran them
    for d in dispatches:
        assert d["args"]["sources"] and d["args"]["kernel"] in d["name"]
        groups = sorted((e["args"]["first"], e["args"]["last"]) for e in events
                        if e.get("cat") == "workgroups" and e["args"]["dispatch"] == d["args"]["index"]
                        and d["ts"] <= e["ts"] <= d["ts"] + d["dur"])
        if d["args"]["workgroups"]:
            assert groups[0][0] == 0 and groups[-1][1] == d["args"]["workgroups"]
            assert all(a[1] == b[0] for a, b in zip(groups, groups[1:]))
    assert any(e.get("cat") == "alloc" and e["args"]["bytes"] == 512 * 512 * 4 for e in events)
    # the table: one row per dispatch, 3 calls each, shares (with the host's) summing to 100%
    rows = [l.split() for l in captured.err.splitlines() if l.startswith("mm#")]
    assert len(rows) == len(dispatches) // 3 and all(r[2] == "3" for r in rows)
    # how each dispatch ran: its workgroups and those a thread takes at a time, or whole
    from mlirtext.vm.devices import LocalTaskDevice
    shared = device == "local-task" and LocalTaskDevice.default_workers() > 1
    for r in rows:
        assert r[3] == "whole" if not shared else re.fullmatch(r"\d+/\d+", r[3]), r
    assert f"{len(rows) if shared else 0} of {len(rows)} dispatches shared by the threads" in captured.err
    host = next(l.split() for l in captured.err.splitlines() if l.startswith("host"))
    shares = [float(r[-1].rstrip("%")) for r in rows] + [float(host[-1].rstrip("%"))]
    assert abs(sum(shares) - 100) < 0.5
    assert f"3 call(s) of @mm on {device}" in captured.err


def test_the_local_task_profile_shows_the_threads_that_shared_a_dispatch(mm_file, tmp_path, capsys):
    out = tmp_path / "p.json"
    assert main(["run", str(mm_file), *INPUTS, "--device=local-task", "--profile", str(out)]) == 0
    capsys.readouterr()
    trace = json.loads(out.read_text())
    threads = [e["args"]["name"] for e in trace["traceEvents"] if e["name"] == "thread_name"]
    from mlirtext.vm.devices import LocalTaskDevice
    if LocalTaskDevice.default_workers() > 1:
        assert len(threads) >= 2 and threads[0] == "calling thread"
        assert len({e["tid"] for e in trace["traceEvents"] if e.get("cat") == "workgroups"}) >= 1


def test_bench_profile_writes_one_process_per_device(mm_file, tmp_path, capsys):
    out, page = tmp_path / "b.json", tmp_path / "b.html"
    assert main(["bench", str(mm_file), "--targets", "llvm-cpu", "--devices", "local-sync", "--rounds", "2",
                 "--warmup", "0", "--no-progress", "--profile", str(out), "--html", str(page)]) == 0
    trace = json.loads(out.read_text())
    events = check_trace_event_format(trace)
    names = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    assert sorted(names) == [1, 2] and "local-sync" in names[2]
    assert all(len([e for e in events if e.get("cat") == "call" and e["pid"] == pid]) == 2 for pid in names)
    assert "2 call(s) of @mm on llvm-cpu / local-sync" in capsys.readouterr().err
    # the HTML report has each device's table too
    html = page.read_text()
    section = html[html.index('<section id="profile">'):]
    assert "llvm-cpu / local-sync: 2 profiled calls" in section and "@mm_dispatch_0" in section
    assert section.count("<tr><td class=\"text\">mm#") == 2 * 3 and "inputs, buffers, results" in section


def test_profile_errors_are_one_line(mm_file, tmp_path, capsys):
    assert main(["run", str(mm_file), *INPUTS, "--profile", str(tmp_path), "--device=local-sync"]) == 1
    err = capsys.readouterr().err
    assert "error" in err and "Traceback" not in err
    assert main(["run", str(mm_file), *INPUTS, "--profile", str(tmp_path / "p.json"),
                 "--trace-dispatches", str(tmp_path / "t")]) == 1
    assert "give one" in capsys.readouterr().err


def test_the_editor_profile_gives_each_source_op_the_share_of_its_dispatches():
    from mlirtext.analysis import commands
    from mlirtext.analysis.document import Document
    text = "// two matmuls\n" + MATMULS
    doc = Document("file:///mm.mlir", text, 1)
    result = commands.profile_run(doc, "mm", device="local-sync")
    assert "error" not in result, result
    lines = text.split("\n")
    dots = [n for n, l in enumerate(lines) if "dot_general" in l]
    sine = next(n for n, l in enumerate(lines) if "sine" in l)
    assert result["calls"] >= 1 and len(result["rows"]) == 3
    assert sum(r["share"] for r in result["rows"]) + result["host_share"] == pytest.approx(1.0)
    by_line = {e["line"]: e for e in result["ops"]}
    assert set(dots) <= set(by_line) and sine in by_line
    for entry in result["ops"]:
        rows = [r for r in result["rows"] if r["name"] in entry["dispatches"]]
        assert entry["share"] == pytest.approx(sum(r["share"] for r in rows))
        assert all(entry["line"] in r["lines"] for r in rows)
    assert "mm#0" in result["table"] and "host" in result["table"]
    assert commands.profile_run(doc, "mm", device="reference")["error"].startswith("a profile is of native code")
    assert "no function named @nope" in commands.profile_run(doc, "nope")["error"]
