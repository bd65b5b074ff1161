"""The Ray connection a sweep or a remote run uses: a cluster when an address is given (`--cluster`, or
`RAY_ADDRESS`), else a Ray instance started in this process with one CPU per core, no dashboard and
quiet logs. Failures to reach a cluster are one-line `ClusterError`s, never Ray's traceback.

ray is imported here, when a sweep or remote run starts, not at module import: the rest of mlirtext
(and its start-up time) does not need it, and it is an optional extra (`pip install 'mlirtext[cluster]'`).
"""
from __future__ import annotations

import logging
import os
import socket

#: Seconds to wait for a cluster's address to answer before saying it is unreachable.
CONNECT_TIMEOUT = 5.0


class ClusterError(Exception):
    """A one-line reason no sweep or remote run can start."""


def import_ray():
    try:
        import ray
    except ImportError:
        raise ClusterError("ray is not installed: pip install 'mlirtext[cluster]'") from None
    return ray


def check_reachable(address: str) -> None:
    """A TCP connection to the head's GCS port, with a short timeout: Ray itself retries for a minute."""
    if address == "auto":
        return
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise ClusterError(f"cluster address {address!r} is not HOST:PORT")
    try:
        socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT).close()
    except OSError as e:
        raise ClusterError(f"cannot reach the Ray cluster at {address}: {e.strerror or e}") from None


def connect(address: str | None = None, num_cpus: int | None = None, local_devices=()):
    """Ray, initialised: on the cluster at `address` (or `RAY_ADDRESS`), else locally; a local instance
    offers the devices of `local_devices` (said to be on this machine: by default it offers none, so
    that work for a GPU never lands on whatever runs here by accident)."""
    ray = import_ray()
    address = address or os.environ.get("RAY_ADDRESS") or None
    if ray.is_initialized():
        return ray
    options = dict(logging_level=logging.ERROR, log_to_driver=False, configure_logging=True)
    if address:
        check_reachable(address)
        try:
            ray.init(address=address, **options)
        except Exception as e:  # noqa: BLE001 - Ray's many connection errors, as one line
            raise ClusterError(f"cannot join the Ray cluster at {address}: "
                               f"{str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
    else:
        os.environ.pop("RAY_ADDRESS", None)   # (an empty one would send ray.init looking for a cluster)
        ray.init(num_cpus=num_cpus or os.cpu_count() or 1, include_dashboard=False,
                 resources={device_resource(d): 1 for d in local_devices}, **options)
    return ray


def device_resource(device: str) -> str:
    """The custom resource a worker node advertises for a device kind it can run."""
    return f"device:{device}"


def cluster_devices(ray) -> list[str]:
    """The device kinds some node of the cluster advertises."""
    return sorted(name.partition(":")[2] for name in ray.cluster_resources() if name.startswith("device:"))


def device_nodes(ray) -> dict[str, list[dict]]:
    """Device kind -> the live nodes that advertise it ({"node_id", "hostname"}), kinds in order."""
    offered: dict[str, list[dict]] = {}
    for node in ray.nodes():
        if not node.get("Alive"):
            continue
        for kind in _kinds(node):
            offered.setdefault(kind, []).append(_described(node))
    return dict(sorted(offered.items()))


def find_node(ray, node: str, devices=()) -> dict:
    """The live node that `node` names ({"node_id", "hostname"}): its Ray node id, a prefix of one
    (the 12 digits `run --cluster` prints), or its host name when only one node has it. A ClusterError
    says why not in one line: no such node, a host name of several nodes (two workers of one machine),
    or a node that does not offer one of `devices`."""
    live = [n for n in ray.nodes() if n.get("Alive")]
    wanted = node.strip().lower()
    matches = [n for n in live if wanted and n["NodeID"].lower().startswith(wanted)]
    if not matches:   # a host name: of its nodes, those that offer the devices (not the head beside them)
        matches = [n for n in live if _described(n)["hostname"] == node.strip()]
        offering = [n for n in matches if set(devices) <= set(_kinds(n))]
        matches = offering or matches
    listed = ", ".join(_label(n) for n in live) or "none"
    if not matches:
        raise ClusterError(f"no live node of the Ray cluster is '{node}' (nodes: {listed})")
    if len(matches) > 1:
        raise ClusterError(f"'{node}' names {len(matches)} nodes of the Ray cluster "
                           f"({', '.join(_label(n) for n in matches)}): give a node id")
    missing = [d for d in devices if d not in _kinds(matches[0])]
    if missing:
        raise ClusterError(f"node {_label(matches[0])} does not offer device '{missing[0]}' (it offers: "
                           f"{', '.join(_kinds(matches[0])) or 'none'})")
    return _described(matches[0])


def placement(node_id: str | None) -> dict:
    """Ray task options that place a task on node `node_id` and nowhere else (none: anywhere that has
    the task's resources)."""
    if node_id is None:
        return {}
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
    return {"scheduling_strategy": NodeAffinitySchedulingStrategy(node_id=node_id, soft=False)}


def _kinds(node: dict) -> list[str]:
    return sorted(name.partition(":")[2] for name in node.get("Resources", {}) if name.startswith("device:"))


def _described(node: dict) -> dict:
    return {"node_id": node["NodeID"], "hostname": node.get("NodeManagerHostname") or
            node.get("NodeManagerAddress", "?")}


def _label(node: dict) -> str:
    return f"{node['NodeID'][:12]} ({_described(node)['hostname']})"


def node_info() -> dict:
    """Where the calling Ray task runs."""
    import ray
    return {"node_id": ray.get_runtime_context().get_node_id(), "hostname": socket.gethostname(),
            "pid": os.getpid()}
