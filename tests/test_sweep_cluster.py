"""`mlirtext sweep` and `mlirtext run --cluster` on a real Ray cluster on this machine: a head (no CPUs
of its own) and two worker nodes, each a separate `ray start --block` process group; one joins with
`mlirtext worker --devices local-sync` and so advertises `device:local-sync`, the other is a plain
Ray node. A sweep across them loses the plain node mid-sweep and still gives every test a result; a
deliberate miscompile of one op fails the sweep against the expected statuses, naming exactly the test
that uses the op; a run, a bench and a device bisect asking for local-sync land on the worker that
offers it."""
from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys

import pytest

from tests import ray_cluster
from tests.ray_cluster import ENV, free_port, kill, python

pytest.importorskip("ray", reason="the cluster extra is not installed (pip install 'mlirtext[cluster]')")

MLP = ray_cluster.ROOT + "/examples/mlp_stablehlo.mlir"
#: Small programs, one op each: the sweep's tests (`add` is the one the miscompile hits).
OPS = ("add", "multiply", "subtract", "maximum", "minimum", "divide")


@pytest.fixture(scope="module")
def cluster():
    yield from ray_cluster.cluster(plain_node=True)


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    directory = tmp_path_factory.mktemp("programs")
    for op in OPS:
        (directory / f"{op}.mlir").write_text(
            "func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {\n"
            f"  %y = stablehlo.{op} %a, %b : tensor<4xf32>\n  return %y : tensor<4xf32>\n}}\n")
    return directory


def _sweep(cluster, programs, tmp_path, *extra) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "mlirtext", "sweep", str(programs), "--cluster",
                             cluster["address"], "--db", str(tmp_path / "sweeps.sqlite"), *extra],
                            env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.fixture(scope="module")
def expected(cluster, programs, tmp_path_factory):
    """The statuses of a sweep across the cluster that lost its plain worker node after its first
    result (its tasks then ran again on the other node), kept as an expected-status file."""
    tmp = tmp_path_factory.mktemp("sweep")
    path = tmp / "expected.tsv"
    sweep = _sweep(cluster, programs, tmp, "--write-expected", str(path), "--tsv", str(tmp / "results.tsv"))
    first = sweep.stderr.readline()        # the progress line at the first result
    assert first.startswith("sweep: 1 of 6 tests"), first
    kill(cluster["plain_node"])           # mid-sweep: the other results are still to come
    out, err = sweep.communicate(timeout=300)
    assert sweep.returncode == 0, out + err
    return path, out, (tmp / "results.tsv").read_text()


def test_a_sweep_across_the_cluster_gives_every_test_a_result_though_a_worker_node_died(expected):
    path, out, results = expected
    rows = [line.split("\t") for line in results.splitlines()[1:]]
    assert sorted(r[0] for r in rows) == sorted(f"{op}.mlir [local-task]" for op in OPS)
    assert {r[1] for r in rows} == {"pass"}, results      # retried elsewhere, not recorded as crashes
    assert "local-task" in out and "6 results" in out


def test_a_miscompiled_op_fails_the_sweep_naming_exactly_its_test(cluster, programs, expected, tmp_path):
    path, _, _ = expected
    sweep = _sweep(cluster, programs, tmp_path, "--expect", str(path), "--no-progress",
                   "--debug-miscompile", "convert-tosa-to-linalg:arith.addf")
    out, err = sweep.communicate(timeout=300)
    assert sweep.returncode == 1, out + err
    lines = out.splitlines()
    worse = lines[next(i for i, line in enumerate(lines) if "worse than expected" in line):]
    assert worse[0] == f"1 tests worse than expected ({path}):"
    assert re.fullmatch(r"  add\.mlir \[local-task\]: mismatch \(expected pass\): @main: result 0: [1-4] elements "
                        r"differ, max abs error 0\.000977", worse[1]), worse
    assert len(worse) == 2 or not worse[2].startswith("  ")     # that test alone


def test_a_run_for_a_device_lands_on_the_node_that_offers_it(cluster, programs):
    done = subprocess.run([sys.executable, "-m", "mlirtext", "run", str(programs / "subtract.mlir"), "--cluster",
                           cluster["address"], "--device", "local-sync", "--input", "4xf32=5 6 7 8",
                           "--input", "4xf32=1 1 1 1"], env=ENV, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "EXEC @main\nresult[0]: hal.buffer_view\n4xf32=4 5 6 7\n"
    where = done.stderr.strip().splitlines()[-1]
    assert where.startswith(f"// ran on {socket.gethostname()} (node {cluster['device_id'][:12]}, pid ")
    pid = int(where.split("pid ")[1].split(")")[0])
    assert pid not in (os.getpid(), cluster["device_node"].pid)   # a Ray worker process of that node


def test_a_bench_for_a_device_is_measured_on_the_node_that_offers_it(cluster, programs):
    done = subprocess.run([sys.executable, "-m", "mlirtext", "bench", str(programs / "multiply.mlir"), "--cluster",
                           cluster["address"], "--devices", "local-sync", "--targets", "llvm-cpu", "--rounds", "1",
                           "--warmup", "0", "--json"], env=ENV, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert f"// measured on {socket.gethostname()} (node {cluster['device_id'][:12]}, pid " in done.stderr
    rows = json.loads(done.stdout)["rows"]
    assert {(r["target"], r["device"], r["status"]) for r in rows} >= {("llvm-cpu", "local-sync", "ok")}


def test_the_python_api_runs_a_module_on_the_cluster(cluster, programs, tmp_path):
    module = tmp_path / "max.vmpack"
    subprocess.run([sys.executable, "-m", "mlirtext", "compile", str(programs / "maximum.mlir"), "-o", str(module)],
                   env=ENV, check=True, timeout=120)
    out = python("import sys, numpy as np\nfrom mlirtext import runtime\n"
                  "m = runtime.load_module(sys.argv[1], device='local-sync', cluster=sys.argv[2])\n"
                  "print(m.main(np.array([1, 5, 3, 7], 'float32'), np.full(4, 4, 'float32')).tolist(), "
                  "m.last_call['node_id'])", str(module), cluster["address"])
    assert out.split() == ["[4.0,", "5.0,", "4.0,", "7.0]", cluster["device_id"]]


def test_a_device_bisect_runs_the_dispatches_on_the_node_that_offers_the_device(cluster):
    """`bisect --devices local-sync --cluster`: the reference traces the call here, each dispatch's
    inputs go to the one node that offers local-sync (the `mlirtext worker`), the outputs come back."""
    def bisect(address, device):
        return subprocess.run([sys.executable, "-m", "mlirtext", "bisect", str(MLP), "--devices", device, "--cluster",
                               address], env=ENV, capture_output=True, text=True, timeout=300)
    done = bisect(cluster["address"], "local-sync")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("bisect: @mlp on local-sync: all 2 dispatches agree with the reference within ")
    where = done.stderr.strip().splitlines()[-1]
    assert where.startswith(f"// local-sync: 2 dispatches ran on {socket.gethostname()} (node "
                            f"{cluster['device_id'][:12]}, pid "), done.stderr
    missing = bisect(cluster["address"], "local-task")     # (no node advertises it: the head has no devices)
    assert missing.returncode == 1 and "Traceback" not in missing.stderr
    assert missing.stderr.strip().splitlines()[-1] == (
        f"mlirtext: error: no node of the cluster at {cluster['address']} offers device 'local-task' (offered: "
        "local-sync; start one with `mlirtext worker --devices local-task`)")
    unreachable = bisect(f"127.0.0.1:{free_port()}", "local-sync")
    assert unreachable.returncode == 1 and unreachable.stderr.count("\n") == 1
    assert re.fullmatch(r"mlirtext: error: cannot reach the Ray cluster at 127\.0\.0\.1:\d+: Connection refused\n",
                        unreachable.stderr), unreachable.stderr


def test_a_device_no_node_offers_and_an_unreachable_cluster_are_one_line_errors(cluster, programs):
    def run(address, device):
        return subprocess.run([sys.executable, "-m", "mlirtext", "run", str(programs / "add.mlir"), "--cluster",
                               address, "--device", device, "--input", "4xf32=1", "--input", "4xf32=2"],
                              env=ENV, capture_output=True, text=True, timeout=180)
    missing = run(cluster["address"], "vulkan")
    assert missing.returncode == 1 and "Traceback" not in missing.stderr
    assert missing.stderr.strip().splitlines()[-1] == (
        f"mlirtext: error: no node of the cluster at {cluster['address']} offers device 'vulkan' (offered: "
        "local-sync; start one with `mlirtext worker --devices vulkan`)")
    unreachable = run(f"127.0.0.1:{free_port()}", "local-sync")
    assert unreachable.returncode == 1 and "Traceback" not in unreachable.stderr
    assert "mlirtext: error: cannot reach the Ray cluster at 127.0.0.1:" in unreachable.stderr
    assert unreachable.stderr.strip().endswith("Connection refused")
