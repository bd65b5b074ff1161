"""`--node`: of two `mlirtext worker --devices local-sync` nodes of a real Ray cluster on this machine
(a head with no CPUs and the two workers, separate process groups), `run --cluster` lands on the node
that `--node` names (a node id, or the first 12 digits of one), and a node that is not there, or a
host name both nodes share, is a one-line error. (One test: Ray on two loaded cores is slow.)"""
from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from tests import ray_cluster
from tests.ray_cluster import ENV

pytest.importorskip("ray", reason="the cluster extra is not installed (pip install 'mlirtext[cluster]')")

SUB = """func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %y = stablehlo.subtract %a, %b : tensor<4xf32>
  return %y : tensor<4xf32>
}
"""


@pytest.fixture(scope="module")
def cluster():
    yield from ray_cluster.cluster(plain_node=False, twin=True)


def test_node_pins_a_run_to_one_of_two_workers_with_the_same_device_and_an_unknown_node_is_one_line(cluster, tmp_path):
    program = tmp_path / "sub.mlir"
    program.write_text(SUB)

    def run(node):
        return subprocess.run([sys.executable, "-m", "mlirtext", "run", str(program), "--cluster", cluster["address"],
                               "--device", "local-sync", "--node", node, "--input", "4xf32=5 6 7 8",
                               "--input", "4xf32=1 1 1 1"], env=ENV, capture_output=True, text=True, timeout=180)
    host = socket.gethostname()
    for node_id, named in [(cluster["device_ids"][1], cluster["device_ids"][1][:12]),
                           (cluster["device_ids"][0], cluster["device_ids"][0])]:
        done = run(named)
        assert done.returncode == 0, done.stderr
        assert done.stdout == "EXEC @main\nresult[0]: hal.buffer_view\n4xf32=4 5 6 7\n"
        assert done.stderr.strip().splitlines()[-1].startswith(f"// ran on {host} (node {node_id[:12]}, pid ")
    gone = run("0123abcd")
    assert gone.returncode == 1 and gone.stderr.count("\n") == 1, gone.stderr
    assert gone.stderr.startswith(f"mlirtext: error: no live node of the Ray cluster is '0123abcd' (nodes: ")
    both = run(host)   # (every node of this test's cluster is on this machine)
    assert both.returncode == 1 and both.stderr.count("\n") == 1, both.stderr
    assert both.stderr.startswith(f"mlirtext: error: '{host}' names ") and "give a node id" in both.stderr


@pytest.mark.parametrize("command", [["run", "--device", "local-sync"], ["bench", "--devices", "local-sync"],
                                     ["bisect", "--devices", "local-sync"]])
def test_node_without_cluster_is_a_one_line_error(command, tmp_path):
    program = tmp_path / "sub.mlir"
    program.write_text(SUB)
    done = subprocess.run([sys.executable, "-m", "mlirtext", command[0], str(program), *command[1:], "--node", "gpu1"],
                          env=ENV, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr) == (
        1, "mlirtext: error: --node picks a node of the Ray cluster: give --cluster ADDRESS too\n")
