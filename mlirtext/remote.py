"""Modules run on a device of a Ray cluster: the module file and the inputs go to a Ray task that
needs the device's resource (`device:KIND`, which nodes advertise when they join with `mlirtext
worker --devices ...`); the outputs, the time of the call and where it ran come back.

    m = runtime.load_module("mlp.vmpack", device="vulkan", cluster="head:6379")
    y = m.main(x, w1, b1, w2, b2)
    m.last_call   # {"seconds": ..., "load_seconds": ..., "node_id": ..., "hostname": ..., "pid": ...}

The module file is checked here (and its signature, with trusted keys) before it is shipped; the
worker loads it for the device and answers a VMError's message as one line, as a local load would.
`bisect --devices D --cluster ADDRESS` ships each dispatch's inputs the same way (`replay_all`) and
gets their outputs back.
"""
from __future__ import annotations

from . import cluster
from .vm.modfile import ModuleFileError, read_module_file
from .vm.vm import VMError, entry_function, exported_function


def _call_on_device(data: bytes, device: str, function: str, inputs: list) -> dict:
    """The Ray task: load the module for `device` on this node, call `function`, report."""
    import time

    from .vm.vm import LoadedModule
    started = time.perf_counter()
    try:
        module = LoadedModule(data, device)
        fn = module.function(function)
        loaded = time.perf_counter()
        outputs = fn(*inputs)
    except VMError as e:
        return {"error": str(e), **cluster.node_info()}
    done = time.perf_counter()
    return {"outputs": outputs, "load_seconds": loaded - started, "seconds": done - loaded, **cluster.node_info()}


def _replay_on_device(data: bytes, device: str, function: str, dispatch_inputs: list) -> dict:
    """The Ray task of a device bisect: load the module for `device` on this node and run each dispatch
    of `function` alone on its inputs (the reference device's); their outputs, in order."""
    import time

    from .vm.vm import LoadedModule
    started = time.perf_counter()
    try:
        fn = LoadedModule(data, device).function(function)
        outputs = [fn.replay(index, ins) for index, ins in enumerate(dispatch_inputs)]
    except VMError as e:
        return {"error": str(e), **cluster.node_info()}
    return {"outputs": outputs, "seconds": time.perf_counter() - started, **cluster.node_info()}


def connect_for(devices, address: str, node: str | None = None):
    """(Ray, on the cluster at `address`, where nodes offer every one of `devices` (a name or several),
    the task options that place a task there: on `node` (a node id, a prefix of one, or a host name:
    `cluster.find_node`) when given, else on any node with the devices); else a one-line VMError."""
    devices = [devices] if isinstance(devices, str) else list(devices)
    try:
        ray = cluster.connect(address)
        offered = cluster.cluster_devices(ray)
        for device in devices:
            if device not in offered:
                raise VMError(f"no node of the cluster at {address} offers device '{device}' (offered: "
                              f"{', '.join(offered) or 'none'}; start one with `mlirtext worker --devices {device}`)")
        pinned = cluster.find_node(ray, node, devices)["node_id"] if node else None
    except cluster.ClusterError as e:
        raise VMError(str(e)) from None
    return ray, {"resources": {cluster.device_resource(d): 1 for d in devices}, **cluster.placement(pinned)}


def _call_with_node_info(fn, args: tuple):
    try:
        return fn(*args), None, cluster.node_info()
    except Exception as e:  # noqa: BLE001 - the caller's to handle, as if raised here
        return None, e, cluster.node_info()


def call_on_node_with(devices: list, address: str, fn, *args, node: str | None = None):
    """(fn(*args), where it ran) on one node of the cluster that offers every device of `devices` (on
    `node` when given); what fn raises there is raised here."""
    ray, placed = connect_for(devices, address, node)
    task = ray.remote(_call_with_node_info).options(num_cpus=1, max_retries=2, **placed)
    value, raised, where = ray.get(task.remote(fn, args))
    if raised is not None:
        raise raised
    return value, where


class RemoteFunction:
    def __init__(self, module: "RemoteModule", name: str, program: dict):
        self.module, self.name = module, name
        self.inputs, self.results = program["inputs"], program["results"]
        self.__name__ = name

    def call(self, *args) -> list:
        """The results (a list), as LoadedModule's functions give them; `module.last_call` says where
        and how long."""
        return self._on_device(_call_on_device, list(args))

    def replay_all(self, dispatch_inputs: list) -> list:
        """Each dispatch run alone on the device on its inputs (one list per dispatch, in program order,
        as a traced call on the reference device saw them): their outputs (device_bisect's ReplayAll)."""
        return self._on_device(_replay_on_device, dispatch_inputs)

    def _on_device(self, body, payload: list) -> list:
        """body(module file, device, function, payload) as a Ray task on a node that offers the device."""
        ray, m = self.module.ray, self.module
        task = ray.remote(body).options(num_cpus=1, max_retries=2, **m.placed)
        answer = ray.get(task.remote(m.data_ref, m.device, self.name, payload))
        outputs = answer.pop("outputs", None)
        m.last_call = answer
        if "error" in answer:
            raise VMError(answer["error"])
        return outputs

    def __call__(self, *args):
        results = self.call(*args)
        return results[0] if len(results) == 1 else tuple(results)


class RemoteModule:
    """A module file run on `device` of the cluster at `address` (on `node` when given: a node id, a
    prefix of one, or a host name); exported functions as attributes."""

    def __init__(self, data: bytes, device: str, address: str, trusted_keys=None, node: str | None = None):
        try:
            file = read_module_file(bytes(data), trusted_keys)
        except ModuleFileError as e:
            raise VMError(str(e)) from None
        self.device, self.address, self.last_call = device, address, None
        self.ray, self.placed = connect_for(device, address, node)
        self.data_ref = self.ray.put(bytes(data))
        self.functions = {e["name"]: RemoteFunction(self, e["name"], file.json(e["program"]))
                          for e in file.manifest["exports"]}
        for name, fn in self.functions.items():
            setattr(self, name, fn)

    @property
    def exports(self) -> list[str]:
        return list(self.functions)

    def function(self, name: str) -> RemoteFunction:
        return exported_function(self.functions, name)

    def entry_function(self, name: str | None) -> RemoteFunction:
        return entry_function(self.functions, name)
