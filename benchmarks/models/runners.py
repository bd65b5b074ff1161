"""The runtimes a zoo model is timed on, each at a given thread count, with its inputs staged once:
mlirtext's VM (local-sync for one thread, local-task for more), IREE (`iree-compile` for the host
CPU, an ONNX model after IREE's own `iree-import-onnx`; `iree.runtime` local-sync / local-task,
inputs staged with `asdevicearray` as `iree-benchmark-module` does), torch eager (`torch.set_num_threads`) and ONNX Runtime
(`intra_op_num_threads`). Both compilers' modules are written to files and loaded from them the
fastest way each runtime has: mapped (`runtime.load_module(path)`, `VmModule.mmap`)."""
from __future__ import annotations

import gc
import resource
import time
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np


@dataclass
class Runner:
    runtime: str
    threads: int
    call: Callable          # one inference on the staged inputs
    outputs: Callable       # one inference, its results as numpy arrays
    load_seconds: float
    peak_bytes: int         # resident memory the load and first call added (VmHWM growth)


@dataclass
class Artifact:
    data: bytes
    compile_seconds: float
    path: str   # the module file, written: both runtimes load it from there, mapped
    compile_cpu_seconds: float = 0.0   # the compiler's CPU time (iree-compile's: all its threads)
    function: Optional[str] = None     # the entry, where this compiler's importer named it


def _written(data: bytes, seconds: float, path: str, cpu_seconds: float) -> Artifact:
    with open(path, "wb") as f:
        f.write(data)
    return Artifact(data, seconds, path, cpu_seconds)


def peak_growth(fn) -> tuple[object, int]:
    """(fn(), how far the process's peak resident set rose above its resident set before the call).
    Linux: writing 5 to clear_refs resets the peak (VmHWM) to the current size. The garbage an
    earlier compile left is collected first, so that neither a load's time nor its memory counts a
    pass of the collector over it (0.4-0.6 s in a load of efficientnet_b0 after its compile)."""
    gc.collect()
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        before = _status_kib("VmRSS")
    except OSError:
        return fn(), 0
    result = fn()
    return result, max(0, _status_kib("VmHWM") - before) * 1024


def _status_kib(key: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def mlirtext_artifact(text: str, path: str) -> Artifact:
    from mlirtext import runtime
    start, cpu = time.perf_counter(), time.process_time()
    data = runtime.compile_text(text, filename="model")
    return _written(data, time.perf_counter() - start, path, time.process_time() - cpu)


def mlirtext_runner(artifact: Artifact, function: str, inputs: list, threads: int) -> Runner:
    from mlirtext import runtime
    device = "local-sync" if threads == 1 else "local-task"

    def load():
        start = time.perf_counter()
        fn = runtime.load_module(artifact.path, device=device).vm_module.function(function)
        seconds = time.perf_counter() - start
        fn(*inputs)
        return fn, seconds
    (fn, seconds), peak = peak_growth(load)
    return Runner("mlirtext", threads, lambda: fn(*inputs), lambda: list(fn(*inputs)), seconds, peak)


def iree_artifact(text: str, path: str) -> Artifact:
    from mlirtext.bench.iree import iree_compile
    (data, seconds), cpu = _children_cpu(lambda: iree_compile(text))
    return _written(data, seconds, path, cpu)


def iree_onnx_artifact(onnx_path: str, path: str) -> Artifact:
    """IREE's own ONNX flow: iree-import-onnx on the .onnx file, then iree-compile (both timed);
    `function` is the entry the importer named."""
    from mlirtext.bench.iree import iree_compile_onnx
    (data, seconds, entry), cpu = _children_cpu(lambda: iree_compile_onnx(onnx_path))
    artifact = _written(data, seconds, path, cpu)
    artifact.function = entry
    return artifact


def _children_cpu(fn) -> tuple[object, float]:
    """(fn(), the CPU time of the child processes it ran and waited for: IREE's tools, all threads)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = fn()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return result, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def iree_runner(artifact: Artifact, function: str, inputs: list, threads: int) -> Runner:
    import iree.runtime as ireert
    driver = "local-sync" if threads == 1 else "local-task"
    if threads > 1:   # read when the local-task driver is first created
        ireert.flags.parse_flags(f"--task_topology_max_group_count={threads}")

    def load():
        start = time.perf_counter()
        config = ireert.Config(driver)
        context = ireert.SystemContext(config=config)
        module = ireert.VmModule.mmap(context.instance, artifact.path)
        context.add_vm_module(module)
        # bound under the MLIR module's name: `module` unless it has one (JAX's: `@jit_<function>`)
        fn = context.modules[module.name][function]
        seconds = time.perf_counter() - start
        staged = [ireert.asdevicearray(config.device, a) for a in inputs]
        fn(*staged)
        return fn, staged, seconds
    (fn, staged, seconds), peak = peak_growth(load)

    def outputs():
        out = fn(*staged)
        return [np.asarray(o.to_host()) for o in (out if isinstance(out, (tuple, list)) else [out])]
    return Runner("iree", threads, lambda: fn(*staged), outputs, seconds, peak)


def torch_runner(model, inputs: list, threads: int) -> Runner:
    import torch
    tensors = [torch.from_numpy(a) for a in inputs]

    def call():
        if torch.get_num_threads() != threads:   # one setting for the process: set before each timing
            torch.set_num_threads(threads)
        with torch.no_grad():
            return model(*tensors)
    _, peak = peak_growth(call)
    return Runner("torch", threads, call, lambda: [call().numpy()], 0.0, peak)


def ort_runner(onnx_path: str, inputs: list, threads: int) -> Runner:
    import onnxruntime as ort

    def load():
        start = time.perf_counter()
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        session = ort.InferenceSession(onnx_path, options, providers=["CPUExecutionProvider"])
        seconds = time.perf_counter() - start
        feed = {i.name: a for i, a in zip(session.get_inputs(), inputs)}
        session.run(None, feed)
        return session, feed, seconds
    (session, feed, seconds), peak = peak_growth(load)
    return Runner("onnxruntime", threads, lambda: session.run(None, feed), lambda: session.run(None, feed),
                  seconds, peak)


def max_relative_error(got: list, want: list) -> float:
    """Largest |got - want| over the largest |want|, across the outputs."""
    if len(got) != len(want):
        return float("inf")
    worst = 0.0
    for g, w in zip(got, want):
        g, w = np.asarray(g, dtype=np.float64), np.asarray(w, dtype=np.float64)
        if g.shape != w.shape:
            return float("inf")
        scale = max(float(np.max(np.abs(w))) if w.size else 0.0, 1e-30)
        worst = max(worst, float(np.max(np.abs(g - w))) / scale if w.size else 0.0)
    return worst
