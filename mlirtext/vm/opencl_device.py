"""The `opencl` device: a module's opencl-spirv kernels on an OpenCL implementation (pocl's CPU
driver where there is no GPU), through `pyopencl`.

pocl as Debian builds it reads no SPIR-V (no IL support), so each kernel's SPIR-V is translated
back to SPIR 1.2 bitcode by `llvm-spirv-15 -r`, from which the program is built as a binary. That
reader (LLVM 15's) asserts on OpConstantNull of a scalar, which SPIR-V allows and LLVM 22's
backend writes: such constants become the equal OpConstant 0 / OpConstantFalse first
(`_scalar_nulls`), and it knows no OpIAddCarry / OpISubBorrow (which the backend writes for
an add or subtract whose carry is used, as the f64 sine's argument reduction does): those become
the add (subtract) and the unsigned compare that gives the carry (borrow), read where the
struct's members were (`_carries`). A dispatch copies its inputs into buffers (and allocates the kernel's
scratch buffers, bound after the outputs), enqueues the kernel over its
NDRange (a tiled kernel's grid of 2-D workgroups; any other kernel, which reads only its global
id, one item per thread with the workgroup size left to the driver: pocl gives each item of a
workgroup its own copy of the kernel's private temporaries, and 64 copies of a large one overflow
its stack), and reads the outputs back; buffers do not outlive the dispatch, as on `vulkan`.
"""
from __future__ import annotations

import os
import subprocess
import tempfile
import threading

import numpy as np

from .devices import SCALAR_CTYPES, DeviceError, check_device_buffers

_state: dict = {}
_lock = threading.Lock()   # one queue: one dispatch at a time


def _cl():
    try:
        import pyopencl
    except ImportError:
        raise DeviceError("the opencl device needs the `pyopencl` Python package (pip install 'mlirtext[gpu]', "
                          "or `make gpu-deps`)") from None
    return pyopencl


def context():
    """(pyopencl, context, device, queue), opened once per process: the first device of the
    first platform that has one."""
    with _lock:
        if "ready" not in _state:
            cl = _cl()
            try:
                platforms = cl.get_platforms()
            except Exception:  # noqa: BLE001 - pyopencl raises its own error types for "no ICD"
                platforms = []
            devices = [d for p in platforms for d in p.get_devices()]
            if not devices:
                raise DeviceError("no OpenCL platform or device (on a machine without a GPU install pocl: Debian "
                                  "pocl-opencl-icd and ocl-icd-libopencl1, `make gpu-deps`)")
            ctx = cl.Context([devices[0]])
            _state["ready"] = (cl, ctx, devices[0], cl.CommandQueue(ctx))
        return _state["ready"]


def spir_bitcode(spirv: bytes, name: str) -> bytes:
    """The kernel's SPIR-V as SPIR 1.2 bitcode (what pocl builds), by `llvm-spirv-15 -r`."""
    from ..targets.gpu.validate import find_tool
    tool = find_tool("llvm-spirv")
    if tool is None:
        raise DeviceError("the opencl device needs llvm-spirv (Debian llvm-spirv-15, `make gpu-deps`) to turn "
                          "SPIR-V into the SPIR bitcode pocl reads")
    with tempfile.TemporaryDirectory(prefix="mlirtext-opencl-") as tmp:
        src, out = os.path.join(tmp, f"{name}.spv"), os.path.join(tmp, f"{name}.bc")
        with open(src, "wb") as f:
            f.write(_carries(_scalar_nulls(spirv)))
        proc = subprocess.run([tool, "-r", src, "-o", out], capture_output=True, text=True, timeout=300)
        if proc.returncode != 0:
            why = (proc.stderr.strip() or f"exit code {proc.returncode}").splitlines()[0]
            raise DeviceError(f"opencl kernel @{name}: llvm-spirv cannot read its SPIR-V: {why}")
        with open(out, "rb") as f:
            return f.read()


_OP_TYPE_BOOL, _OP_TYPE_INT, _OP_TYPE_FLOAT = 20, 21, 22
_OP_CONSTANT_FALSE, _OP_CONSTANT, _OP_CONSTANT_NULL = 41, 43, 46


def _scalar_nulls(spirv: bytes) -> bytes:
    """`spirv` with every OpConstantNull of a scalar type written as the zero constant it is."""
    words = np.frombuffer(spirv, dtype="<u4")
    out, widths, at = [words[:5]], {}, 5   # (the header is 5 words; each instruction: count << 16 | opcode)
    while at < len(words):
        count, opcode = int(words[at]) >> 16, int(words[at]) & 0xFFFF
        if count == 0:
            raise DeviceError("the opencl-spirv kernel is not a well-formed SPIR-V module")
        instruction = words[at:at + count]
        if opcode in (_OP_TYPE_INT, _OP_TYPE_FLOAT):
            widths[int(instruction[1])] = int(instruction[2])
        elif opcode == _OP_TYPE_BOOL:
            widths[int(instruction[1])] = 0
        elif opcode == _OP_CONSTANT_NULL and int(instruction[1]) in widths:
            type_, result = int(instruction[1]), int(instruction[2])
            value = [0] * -(-widths[type_] // 32)   # the literal's words (a bool has none)
            opcode = _OP_CONSTANT if value else _OP_CONSTANT_FALSE
            instruction = np.array([(3 + len(value)) << 16 | opcode, type_, result, *value], dtype="<u4")
        out.append(instruction)
        at += count
    return np.concatenate(out).tobytes()


_OP_TYPE_STRUCT, _OP_FUNCTION, _OP_COMPOSITE_EXTRACT = 30, 54, 81
_OP_IADD, _OP_ISUB, _OP_ULESS_THAN, _OP_SELECT = 128, 130, 176, 169
_OP_IADD_CARRY, _OP_ISUB_BORROW = 149, 150


def _instructions(words):
    """(opcode, the instruction's words) of each instruction after the 5-word header."""
    at = 5
    while at < len(words):
        count, opcode = int(words[at]) >> 16, int(words[at]) & 0xFFFF
        if count == 0:
            raise DeviceError("the opencl-spirv kernel is not a well-formed SPIR-V module")
        yield opcode, [int(w) for w in words[at:at + count]]
        at += count


def _carries(spirv: bytes) -> bytes:
    """`spirv` with each OpIAddCarry (OpISubBorrow) of integers a, b written as s = a + b (a - b)
    and carry = s < a (borrow = a < b) unsigned, selected as 1 or 0; each OpCompositeExtract of
    the struct it gave becomes the member plus 0. (Building the struct instead, by
    OpCompositeConstruct, crashes llvm-spirv 15: it makes a constant of any struct composite.)"""
    words = np.frombuffer(spirv, dtype="<u4")
    found = list(_instructions(words))
    if not any(op in (_OP_IADD_CARRY, _OP_ISUB_BORROW) for op, _ in found):
        return spirv
    bound = int(words[3])
    widths = {ins[1]: ins[2] for op, ins in found if op == _OP_TYPE_INT}
    members = {ins[1]: ins[2] for op, ins in found if op == _OP_TYPE_STRUCT and len(ins) == 4}
    bools = [ins[1] for op, ins in found if op == _OP_TYPE_BOOL]
    constants = {(ins[1], tuple(ins[3:])): ins[2] for op, ins in found if op == _OP_CONSTANT}
    declared = []   # the types and constants this needs that the module lacks

    def new_id():
        nonlocal bound
        bound += 1
        return bound - 1
    if not bools:
        bools.append(new_id())
        declared.append([2 << 16 | _OP_TYPE_BOOL, bools[0]])

    def constant(type_, value):
        literal = (value,) + (0,) * (widths[type_] // 32 - 1)
        if (type_, literal) not in constants:
            constants[type_, literal] = new_id()
            declared.append([(3 + len(literal)) << 16 | _OP_CONSTANT, type_, constants[type_, literal], *literal])
        return constants[type_, literal]

    parts = {}   # an expanded instruction's result -> (its members' type, the ids of its two members)

    def expanded(op, ins):
        if op in (_OP_IADD_CARRY, _OP_ISUB_BORROW):
            struct, result, a, b = ins[1:]
            type_ = members[struct]
            s, carry, flag = new_id(), new_id(), new_id()
            parts[result] = (type_, (s, flag))
            arith, compared = (_OP_IADD, [s, a]) if op == _OP_IADD_CARRY else (_OP_ISUB, [a, b])
            return [5 << 16 | arith, type_, s, a, b,
                    5 << 16 | _OP_ULESS_THAN, bools[0], carry, *compared,
                    6 << 16 | _OP_SELECT, type_, flag, carry, constant(type_, 1), constant(type_, 0)]
        if op == _OP_COMPOSITE_EXTRACT and len(ins) == 5 and ins[3] in parts:
            type_, member = parts[ins[3]]
            return [5 << 16 | _OP_IADD, ins[1], ins[2], member[ins[4]], constant(type_, 0)]
        return ins
    found = [(op, expanded(op, ins)) for op, ins in found]
    out = []
    for op, ins in found:
        if op == _OP_FUNCTION and declared:   # (what it declares goes before the first function)
            out += [w for d in declared for w in d]
            declared = []
        out += ins
    header = [int(w) for w in words[:5]]
    header[3] = bound
    return np.array(header + out, dtype="<u4").tobytes()


class OpenCLDevice:
    name = "opencl"

    def __init__(self, executable: dict, code: dict, kernels: dict):
        self.cl, self.ctx, self.device, self.queue = context()
        self.kernels, self.launches, self.code = kernels, executable["kernels"], code
        self.programs: dict = {}

    def _kernel_object(self, name: str):
        if name not in self.programs:
            binary = spir_bitcode(self.code[name], name)
            try:
                program = self.cl.Program(self.ctx, [self.device], [binary]).build()
            except Exception as e:  # noqa: BLE001 - a build failure is the kernel's error, not a crash
                raise DeviceError(f"opencl kernel @{name}: the program does not build: {str(e).strip()[:400]}") \
                    from None
            self.programs[name] = program
        entry = self.launches[name].get("entry", name)
        return self.cl.Kernel(self.programs[name], entry)

    def kernel(self, name: str):
        if name not in self.code:
            raise DeviceError(f"the opencl-spirv executable has no kernel @{name}")
        launch, spec = self.launches[name], self.kernels[name]
        if launch.get("workgroup"):   # a tiled kernel: grid x workgroup items, 2-D workgroups
            local = (*launch["workgroup"], 1)
            global_ = tuple(g * l for g, l in zip(launch["grid"], local))
        else:
            local, global_ = None, (max(1, launch["threads"]),)   # (see the module docstring)

        def run(inputs, outputs) -> None:
            with _lock:
                try:
                    self._dispatch(name, spec, global_, local, inputs, outputs)
                except DeviceError:
                    raise
                except Exception as e:  # noqa: BLE001
                    raise DeviceError(f"opencl kernel @{name}: {type(e).__name__} {e}".strip()) from None
        return run

    def _dispatch(self, name, spec, global_, local, inputs, outputs) -> None:
        cl, ctx = self.cl, self.ctx
        kernel = self._kernel_object(name)
        scratch_bytes = self.launches[name].get("scratch", [])
        check_device_buffers("opencl", name, [max(4, np.asarray(a).nbytes) for a, rec in zip(inputs, spec["inputs"])
                                              if rec["shape"] is not None]
                             + [max(4, o.nbytes) for o in outputs] + scratch_bytes, self.device.global_mem_size)
        args, buffers = [], []
        for a, rec in zip(inputs, spec["inputs"]):
            a = np.ascontiguousarray(np.asarray(a))
            if rec["shape"] is None:   # a scalar is passed by value
                ctype = SCALAR_CTYPES.get(rec["element"])
                if ctype is None:
                    raise DeviceError(f"opencl kernel @{name}: scalar {rec['element']} arguments are not supported")
                args.append(np.dtype(ctype).type(a[()]))
                continue
            buffer = cl.Buffer(ctx, cl.mem_flags.READ_ONLY, max(4, a.nbytes))
            if a.nbytes:
                cl.enqueue_copy(self.queue, buffer, a.view(np.uint8) if a.dtype == np.bool_ else a)
            buffers.append(buffer)
            args.append(buffer)
        results = [cl.Buffer(ctx, cl.mem_flags.READ_WRITE, max(4, o.nbytes)) for o in outputs]
        # large temporaries: device memory only, a slice per thread (see targets/gpu/llvm_gpu.py)
        scratch = [cl.Buffer(ctx, cl.mem_flags.READ_WRITE, n) for n in scratch_bytes]
        buffers += results + scratch
        try:
            kernel.set_args(*args, *results, *scratch)
            cl.enqueue_nd_range_kernel(self.queue, kernel, global_, local)
            for o, buffer in zip(outputs, results):
                host = np.empty(o.shape, o.dtype)
                if o.nbytes:
                    cl.enqueue_copy(self.queue, host.view(np.uint8) if host.dtype == np.bool_ else host, buffer)
                np.copyto(o, host)
            self.queue.finish()
        finally:
            for buffer in buffers:
                buffer.release()

    def execute(self, steps, waves) -> None:
        for step in steps:
            step()
