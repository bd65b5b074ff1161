"""The editor's devices on a Ray cluster (the `mlirtext.cluster` setting): the device list that the
Run Function pick shows (the local devices, then each device kind that the cluster's nodes advertise,
`mlirtext worker --devices ...`), and a run on one of them, by the path `mlirtext run --cluster` takes:
the function compiled here for the device's target, the module file and the inputs shipped to a node
that offers the device (`remote.RemoteModule`), the outputs and the time of the call brought back.

A cluster device is named `cluster:KIND` (any node that offers it) or `cluster:KIND@NODE_ID` (that node:
the pick lists one entry per node, so that of two workers with the same device kind the user says which)
in `mlirtext.run`'s device argument. An unreachable cluster, a device no node offers or a node that is
gone is a one-line error (the connection gives up after `cluster.CONNECT_TIMEOUT`).
The cluster is joined by a child process (`cluster_driver`), not by the language server.
"""
from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Optional

from ..vm.device_names import DEVICES as VM_DEVICES, GPU_DEVICES
from .cluster_driver import ClusterDriver, ClusterRunError
from .device_run import DEVICES as LOCAL_DEVICES

PREFIX = "cluster:"
#: Module files kept (per function text and target), so that a run again ships without a compile.
CACHE_SIZE = 8
_module_files: "OrderedDict[tuple, bytes]" = OrderedDict()
_compiling = threading.Lock()

LOCAL_DETAILS = {
    "reference": "the interpreter, on the function as written (any level)",
    "local-sync": "compiled for llvm-cpu; native kernels one after another",
    "local-task": "compiled for llvm-cpu; native kernels on a thread pool",
}


def is_cluster_device(device: str) -> bool:
    return isinstance(device, str) and device.startswith(PREFIX)


def device_list(driver: ClusterDriver) -> dict:
    """{"devices": [{"id", "label", "detail", "where": "local" | "cluster"}], "cluster": the address or
    None, "error": one line or None}: the local devices, then (with an address) each device kind some
    live node of the cluster advertises. An unreachable cluster leaves the local ones and says why."""
    devices = [{"id": d, "label": d, "detail": LOCAL_DETAILS[d], "where": "local"} for d in LOCAL_DEVICES]
    address = driver.address
    if not address:
        return {"devices": devices, "cluster": None, "error": None}
    try:
        offered = driver.call("devices", address)
    except ClusterRunError as e:
        return {"devices": devices, "cluster": address, "error": str(e)}
    for kind, nodes in offered.items():
        compiled = f"on the Ray cluster at {address}: the module compiled here for {_target(kind)}, run on"
        if len(nodes) > 1:
            devices.append({"id": PREFIX + kind, "label": f"{kind} on any of {len(nodes)} nodes", "where": "cluster",
                            "detail": f"{compiled} whichever node that offers {kind} Ray picks"})
        hosts = [n["hostname"] for n in nodes]
        for n in nodes:
            shared = hosts.count(n["hostname"]) > 1   # (two workers of one machine: the node id tells them apart)
            devices.append({"id": f"{PREFIX}{kind}@{n['node_id']}", "where": "cluster", "node": n,
                            "label": f"{kind} on {n['hostname']}" + (f" ({n['node_id'][:12]})" if shared else ""),
                            "detail": f"{compiled} node {n['node_id'][:12]} ({n['hostname']}) only"})
    return {"devices": devices, "cluster": address, "error": None}


def _target(kind: str) -> str:
    return GPU_DEVICES.get(kind, "reference" if kind == "reference" else "llvm-cpu")


def run(text: str, name: str, args: list, device: str, driver: ClusterDriver, filename: str,
        cancelled: Optional[threading.Event] = None) -> tuple[list, dict]:
    """(the outputs, the run's fields: device, seconds, calls, timing, compile_seconds, node) of
    function `name` of the MLIR module `text` on the cluster device `device` (`cluster:KIND`) of the
    driver's cluster. ClusterRunError says why not, in one line."""
    kind, _, node = device[len(PREFIX):].partition("@")
    if not driver.address:
        raise ClusterRunError(f"device '{device}' is on a Ray cluster: set mlirtext.cluster to its HOST:PORT")
    if kind not in VM_DEVICES:
        raise ClusterRunError(f"unknown device '{kind}' (devices: {', '.join(VM_DEVICES)})")
    data, compile_seconds = _module_file(text, filename, _target(kind))
    outputs, where = driver.call("run", driver.address, data, kind, name, args, node or None, cancelled=cancelled)
    return outputs, {
        "device": device, "seconds": where["seconds"], "calls": 1, "compile_seconds": compile_seconds,
        "timing": f"one call on {where['hostname']} (node {where['node_id'][:12]}, pid {where['pid']}), "
                  f"after loading the module there in {where['load_seconds'] * 1e3:.1f} ms",
        "node": {key: where[key] for key in ("node_id", "hostname", "pid")}}


def _module_file(text: str, filename: str, target: str) -> tuple[bytes, Optional[float]]:
    """(`text` compiled for `target` as a module file, the compile time when it was not cached)."""
    from ..compiler.driver import CompileFailed, compile_source   # (0.3 s to import: on the first compile)
    from ..compiler.module_writer import pack
    key = (text, target)
    with _compiling:   # (one compile at a time: two runs of the same text compile it once)
        if key in _module_files:
            _module_files.move_to_end(key)
            return _module_files[key], None
        started = time.perf_counter()
        try:
            data = pack(compile_source(text, filename, target))
        except CompileFailed as e:
            first = e.diagnostics[0].message if e.diagnostics else str(e)
            raise ClusterRunError(f"cannot compile for {target}: {first}") from None
        _module_files[key] = data
        while len(_module_files) > CACHE_SIZE:
            _module_files.popitem(last=False)
        return data, time.perf_counter() - started
