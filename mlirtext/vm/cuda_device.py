"""The `cuda` device: a module's cuda kernels (PTX) on an NVIDIA GPU, through the CUDA driver API
(`libcuda.so.1`, called with ctypes: the driver is all it needs, no toolkit or Python package).

The driver JIT-compiles each kernel's PTX for the GPU it finds (cuModuleLoadData). A dispatch
copies its inputs to device memory (and allocates the kernel's scratch buffers, passed after the
outputs), launches `workgroups x 64` threads (a tiled kernel: its grid of 2-D workgroups) and
copies the outputs back. Without a driver (no NVIDIA GPU) the device refuses to open with a
clear message.
"""
from __future__ import annotations

import ctypes
import threading

import numpy as np

from .devices import SCALAR_CTYPES, DeviceError, check_device_buffers

_state: dict = {}
_lock = threading.Lock()


def _check(result: int, what: str, lib=None) -> None:
    if result != 0:
        name = ctypes.c_char_p()
        if lib is not None:
            lib.cuGetErrorName(result, ctypes.byref(name))
        raise DeviceError(f"cuda: {what} failed ({(name.value or b'').decode() or f'CUresult {result}'})")


def driver():
    """(libcuda, context, device name, device memory in bytes), opened once per process."""
    with _lock:
        if "ready" in _state:
            return _state["ready"]
        try:
            lib = ctypes.CDLL("libcuda.so.1")
        except OSError:
            raise DeviceError("no CUDA driver: libcuda.so.1 is not on this machine (the cuda device needs an "
                              "NVIDIA GPU and its driver; compile with --target=cuda works anywhere)") from None
        result = lib.cuInit(0)
        if result != 0:
            raise DeviceError(f"no CUDA driver: cuInit failed (CUresult {result}): no usable NVIDIA GPU")
        device = ctypes.c_int()
        _check(lib.cuDeviceGet(ctypes.byref(device), 0), "cuDeviceGet", lib)
        context = ctypes.c_void_p()
        _check(lib.cuDevicePrimaryCtxRetain(ctypes.byref(context), device), "cuDevicePrimaryCtxRetain", lib)
        name = ctypes.create_string_buffer(256)
        lib.cuDeviceGetName(name, 256, device)
        memory = ctypes.c_size_t()
        _check(lib.cuDeviceTotalMem_v2(ctypes.byref(memory), device), "cuDeviceTotalMem", lib)
        _state["ready"] = (lib, context, name.value.decode(), memory.value)
        return _state["ready"]


class CudaDevice:
    name = "cuda"

    def __init__(self, executable: dict, code: dict, kernels: dict):
        self.lib, self.context, self.device_name, self.capacity = driver()
        self.kernels, self.launches, self.code = kernels, executable["kernels"], code
        self.functions: dict = {}

    def _function(self, name: str):
        if name not in self.functions:
            lib = self.lib
            _check(lib.cuCtxSetCurrent(self.context), "cuCtxSetCurrent", lib)
            module = ctypes.c_void_p()
            _check(lib.cuModuleLoadData(ctypes.byref(module), self.code[name] + b"\0"),
                   f"loading the PTX of @{name}", lib)
            fn = ctypes.c_void_p()
            entry = self.launches[name].get("entry", name)   # (module files before entry symbols: the name)
            _check(lib.cuModuleGetFunction(ctypes.byref(fn), module, entry.encode()), f"finding @{name}", lib)
            self.functions[name] = fn
        return self.functions[name]

    def kernel(self, name: str):
        if name not in self.code:
            raise DeviceError(f"the cuda executable has no kernel @{name}")
        launch = self.launches[name]
        spec = self.kernels[name]

        def run(inputs, outputs) -> None:
            with _lock:
                self._dispatch(name, launch, spec, inputs, outputs)
        return run

    def _dispatch(self, name, launch, spec, inputs, outputs) -> None:
        lib = self.lib
        _check(lib.cuCtxSetCurrent(self.context), "cuCtxSetCurrent", lib)
        fn = self._function(name)
        check_device_buffers("cuda", name, [max(1, np.asarray(a).nbytes) for a, rec in zip(inputs, spec["inputs"])
                                            if rec["shape"] is not None]
                             + [max(1, o.nbytes) for o in outputs] + launch.get("scratch", []), self.capacity)
        pointers, params = [], []
        try:
            for a, rec in zip(inputs, spec["inputs"]):
                a = np.ascontiguousarray(np.asarray(a))
                if rec["shape"] is None:    # a scalar is passed by value
                    ctype = SCALAR_CTYPES.get(rec["element"])
                    if ctype is None:
                        raise DeviceError(f"cuda kernel @{name}: scalar {rec['element']} arguments are not supported")
                    params.append(ctype(a[()].item()))
                    continue
                params.append(self._upload(a, pointers))
            outs = []
            for o in outputs:
                ptr = self._alloc(max(1, o.nbytes), pointers)
                outs.append(ptr)
                params.append(ptr)
            for nbytes in launch.get("scratch", []):   # large temporaries: a slice per thread, device only
                params.append(self._alloc(nbytes, pointers))
            args = (ctypes.c_void_p * len(params))(*[ctypes.cast(ctypes.pointer(p), ctypes.c_void_p) for p in params])
            grid = launch.get("grid") or (launch["workgroups"], 1, 1)
            block = (*launch["workgroup"], 1) if launch.get("workgroup") else (launch["workgroup_size"], 1, 1)
            _check(lib.cuLaunchKernel(fn, *grid, *block, 0, None, args, None), f"launching @{name}", lib)
            _check(lib.cuCtxSynchronize(), f"running @{name}", lib)
            for o, ptr in zip(outputs, outs):
                host = np.empty(o.shape, o.dtype)
                _check(lib.cuMemcpyDtoH_v2(host.ctypes.data_as(ctypes.c_void_p), ptr, ctypes.c_size_t(o.nbytes)),
                       "cuMemcpyDtoH", lib)
                np.copyto(o, host)
        finally:
            for ptr in pointers:
                lib.cuMemFree_v2(ptr)

    def _alloc(self, nbytes: int, pointers: list):
        ptr = ctypes.c_uint64()
        _check(self.lib.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(nbytes)), "cuMemAlloc", self.lib)
        pointers.append(ptr)
        return ptr

    def _upload(self, a: np.ndarray, pointers: list):
        ptr = self._alloc(max(1, a.nbytes), pointers)
        _check(self.lib.cuMemcpyHtoD_v2(ptr, a.ctypes.data_as(ctypes.c_void_p), ctypes.c_size_t(a.nbytes)),
               "cuMemcpyHtoD", self.lib)
        return ptr

    def execute(self, steps, waves) -> None:
        for step in steps:
            step()
