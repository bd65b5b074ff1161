"""A real Ray cluster on this machine for the tests: a head (no CPUs of its own) and worker nodes, each a
separate process group (`ray start --block`, or `mlirtext worker --devices ...`), killed as a group."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: Token authentication (on by default for `ray start --head` in ray 2.60) is off for this throwaway
#: cluster on the loopback: its token would go to ~/.ray, shared with every other Ray on the machine.
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.path.join(ROOT, "server")]), RAY_DISABLE_USAGE_STATS="1",
           RAY_AUTH_MODE="disabled")
ENV.pop("RAY_ADDRESS", None)
RAY = [sys.executable, "-m", "ray.scripts.scripts"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(command: list) -> subprocess.Popen:
    """A node in a process group of its own (killed as a group: Ray's raylet and workers with it)."""
    return subprocess.Popen(command, env=ENV, start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def kill(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


def python(code: str, *args, timeout=300) -> str:
    done = subprocess.run([sys.executable, "-c", code, *args], env=ENV, capture_output=True, text=True,
                          timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


#: Waits until the cluster at argv[1] has argv[2] CPUs, then prints its live nodes.
WAIT_FOR_NODES = """
import json, sys, time, ray
ray.init(address=sys.argv[1], logging_level="ERROR", log_to_driver=False)
deadline = time.time() + 240   # (node start-up takes seconds on a quiet machine, minutes on a loaded one)
while time.time() < deadline and ray.cluster_resources().get("CPU", 0) < int(sys.argv[2]):
    time.sleep(0.5)
print("NODES", json.dumps([{"id": n["NodeID"], "resources": n["Resources"]} for n in ray.nodes() if n["Alive"]]))
"""


def wait_for_nodes(address: str, cpus: int) -> list[dict]:
    """The live nodes ({"id", "resources"}) once the cluster has `cpus` CPUs."""
    said = python(WAIT_FOR_NODES, address, str(cpus)).splitlines()   # (Ray's own log lines may come first)
    return json.loads(next(line for line in said if line.startswith("NODES "))[len("NODES "):])


def cluster(plain_node: bool, twin: bool = False):
    """A generator for a fixture: a head and a node that joins with `mlirtext worker --devices local-sync`
    (one CPU), with `plain_node` a plain Ray node (one CPU), with `twin` a second `mlirtext worker
    --devices local-sync` node (one CPU); yields {"address", "device_node", "plain_node", "device_id",
    "device_ids" (every node that offers local-sync, the first one's first)} and kills every node
    afterwards."""
    temp = tempfile.mkdtemp(prefix="rs", dir="/tmp")   # (short: Ray's socket paths must fit in 107 bytes)
    address = f"127.0.0.1:{free_port()}"
    head = start(RAY + ["start", "--head", "--port", address.rpartition(":")[2], "--num-cpus", "0",
                        "--include-dashboard", "false", "--disable-usage-stats", "--temp-dir", temp, "--block"])
    nodes = [head]
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", int(address.rpartition(":")[2])), timeout=1).close()
                break
            except OSError:
                time.sleep(0.5)
        # One node after the other: two nodes of one machine that join at the same moment can take the
        # same socket names in the session directory, and the second one's raylet aborts.
        device_node = start([sys.executable, "-m", "mlirtext", "worker", "--address", address,
                             "--devices", "local-sync", "--num-cpus", "1"])
        nodes.append(device_node)
        alive = wait_for_nodes(address, 1)
        plain = None
        if plain_node:
            plain = start(RAY + ["start", "--address", address, "--num-cpus", "1", "--block", "--disable-usage-stats"])
            nodes.append(plain)
            alive = wait_for_nodes(address, 2)
        device_id = next((n["id"] for n in alive if "device:local-sync" in n["resources"]), None)
        assert device_id, f"the `mlirtext worker` node did not join: {alive}"
        device_ids = [device_id]
        if twin:
            nodes.append(start([sys.executable, "-m", "mlirtext", "worker", "--address", address,
                                "--devices", "local-sync", "--num-cpus", "1"]))
            alive = wait_for_nodes(address, 2 + bool(plain_node))
            device_ids += [n["id"] for n in alive if "device:local-sync" in n["resources"] and n["id"] != device_id]
            assert len(device_ids) == 2, f"the second `mlirtext worker` node did not join: {alive}"
        yield {"address": address, "device_node": device_node, "plain_node": plain, "device_id": device_id,
               "device_ids": device_ids}
    finally:
        for node in reversed(nodes):
            kill(node)
