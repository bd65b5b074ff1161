"""vulkan-spirv: each loops-level kernel as a SPIR-V compute shader (assembly, then `spirv-as`).

Written directly from scf/memref/arith/math, which map onto SPIR-V's structured control flow
one to one (`scf.for` is a loop construct with OpLoopMerge, `scf.while` one whose before-region
ends in a conditional break, `scf.if` a selection with OpSelectionMerge, loop-carried values are
OpPhis), instead of through LLVM's SPIR-V backend,
whose Vulkan flavour cannot address buffers by computed offsets.

Conventions (what the `vulkan` device binds, see vm/vulkan_device.py):
- one storage buffer per kernel argument, in order (inputs, then outputs), set 0, binding i; a
  scalar input is a one-element buffer; `i1` is stored as one byte;
- `index` is a 32-bit integer, held in memory as an i64 (the VM's int64 index buffers, so no
  conversion on the host; needs the Int64 capability); element offsets come from the memref
  type's static layout, so views (subview, reshapes) address their root buffer;
- temporaries (`memref.alloc` at the kernel's top level) are scratch storage buffers bound after
  the arguments (a split kernel's threads each use their own rows of them); constants
  (`memref.global`) are Private arrays initialised from constants, a constant splat just its value;
- float constants are integer bit patterns bitcast once at the entry (exact, NaN and -0 kept);
- the thread's global id is GlobalInvocationId.x: a split kernel's row range is [gid, gid + 1),
  and threads at or past the kernel's thread count do nothing;
- a tiled kernel (tiling.py, reductions.py) takes its id arguments from WorkgroupId and
  LocalInvocationId, runs every thread through its body (which checks its own bounds), keeps its
  tiles in Workgroup storage and meets at OpControlBarrier (workgroup scope).
"""
from __future__ import annotations

import os
import struct
import tempfile

import numpy as np

from ...dialects.memref import VIEWS, view_source
from ...ir import types as T
from ...ir.arrays import dense_to_array, dtype_of
from ...ir.attributes import FloatAttr, IntegerAttr
from ...ir.core import Operation
from .executable import GpuCompileError

_FLOAT_BINARY = {"arith.addf": "OpFAdd", "arith.subf": "OpFSub", "arith.mulf": "OpFMul", "arith.divf": "OpFDiv",
                 "arith.remf": "OpFRem"}
_INT_BINARY = {"arith.addi": "OpIAdd", "arith.subi": "OpISub", "arith.muli": "OpIMul", "arith.divsi": "OpSDiv",
               "arith.divui": "OpUDiv", "arith.remsi": "OpSRem", "arith.remui": "OpUMod",
               "arith.andi": "OpBitwiseAnd", "arith.ori": "OpBitwiseOr", "arith.xori": "OpBitwiseXor",
               "arith.shli": "OpShiftLeftLogical", "arith.shrsi": "OpShiftRightArithmetic",
               "arith.shrui": "OpShiftRightLogical"}
_BOOL_BINARY = {"arith.andi": "OpLogicalAnd", "arith.ori": "OpLogicalOr", "arith.xori": "OpLogicalNotEqual"}
_GLSL_BINARY = {"arith.maxsi": "SMax", "arith.minsi": "SMin", "arith.maxui": "UMax", "arith.minui": "UMin",
                "arith.maxnumf": "NMax", "arith.minnumf": "NMin", "math.powf": "Pow", "math.atan2": "Atan2"}
_GLSL_UNARY = {"math.sqrt": "Sqrt", "math.rsqrt": "InverseSqrt", "math.exp": "Exp", "math.exp2": "Exp2",
               "math.log": "Log", "math.log2": "Log2", "math.tanh": "Tanh", "math.sin": "Sin", "math.cos": "Cos",
               "math.tan": "Tan", "math.asin": "Asin", "math.acos": "Acos", "math.atan": "Atan",
               "math.sinh": "Sinh", "math.cosh": "Cosh", "math.asinh": "Asinh", "math.acosh": "Acosh",
               "math.atanh": "Atanh", "math.floor": "Floor", "math.ceil": "Ceil", "math.roundeven": "RoundEven",
               "math.trunc": "Trunc", "math.absf": "FAbs", "math.absi": "SAbs"}
_CMPF = {1: "OpFOrdEqual", 2: "OpFOrdGreaterThan", 3: "OpFOrdGreaterThanEqual", 4: "OpFOrdLessThan",
         5: "OpFOrdLessThanEqual", 6: "OpFOrdNotEqual", 8: "OpFUnordEqual", 9: "OpFUnordGreaterThan",
         10: "OpFUnordGreaterThanEqual", 11: "OpFUnordLessThan", 12: "OpFUnordLessThanEqual",
         13: "OpFUnordNotEqual"}
_CMPI = {0: "OpIEqual", 1: "OpINotEqual", 2: "OpSLessThan", 3: "OpSLessThanEqual", 4: "OpSGreaterThan",
         5: "OpSGreaterThanEqual", 6: "OpULessThan", 7: "OpULessThanEqual", 8: "OpUGreaterThan",
         9: "OpUGreaterThanEqual"}
_CASTS = {"arith.sitofp": "OpConvertSToF", "arith.uitofp": "OpConvertUToF", "arith.fptosi": "OpConvertFToS",
          "arith.fptoui": "OpConvertFToU", "arith.extf": "OpFConvert", "arith.truncf": "OpFConvert",
          "arith.extsi": "OpSConvert", "arith.extui": "OpUConvert", "arith.trunci": "OpUConvert",
          "arith.bitcast": "OpBitcast"}


#: lavapipe (llvmpipe) ends a shader invocation's loops after this many iterations in all (its
#: guard against endless loops), so innermost loops with a known trip count are unrolled by up to:
LOOP_LIMIT = 65535
UNROLL = 16
#: The most scratch memory a kernel's per-thread temporaries may take (else Function storage).
SCRATCH_LIMIT = 256 << 20


def _constant(value):
    """The integer value of an `arith.constant`, else None."""
    owner = getattr(value, "op", None)
    if owner is None or owner.name != "arith.constant":
        return None
    return getattr(owner.attr("value"), "value", None)


class Unsupported(Exception):
    """An op or type this emitter has no SPIR-V form for."""


def emit_kernels(loops: Operation, launches: dict, workgroup_size: int) -> tuple[dict, dict, dict]:
    """({kernel: SPIR-V assembly}, {kernel: SPIR-V binary}, {kernel: [scratch buffer bytes]})."""
    from .validate import need_tool, run_tool
    body = loops.regions[0].blocks[0]
    globals_ = {op.sym_name: op for op in body.ops if op.name == "memref.global"}
    functions = {op.sym_name: op for op in body.ops if op.name == "func.func"}
    assembly, code, scratch = {}, {}, {}
    spirv_as = need_tool("spirv-as")
    with tempfile.TemporaryDirectory(prefix="mlirtext-spirv-") as tmp:
        for name, launch in launches.items():
            try:
                writer = ShaderWriter(functions[name], launch, globals_, workgroup_size)
                text = writer.run()
                scratch[name] = writer.scratch
            except Unsupported as e:
                raise GpuCompileError(f"kernel @{name}: vulkan-spirv: {e}") from None
            src, out = os.path.join(tmp, f"{name}.spvasm"), os.path.join(tmp, f"{name}.spv")
            with open(src, "w") as f:
                f.write(text)
            run_tool([spirv_as, "--target-env", "vulkan1.3", src, "-o", out],
                     f"kernel @{name}: spirv-as rejects its SPIR-V assembly")
            with open(out, "rb") as f:
                code[name] = f.read()
            assembly[name] = text
    return assembly, code, scratch


def _layout(t: T.MemRefType):
    from ...transforms.conversions.loops_to_llvm import layout
    try:
        return layout(t)
    except ValueError as e:
        raise Unsupported(str(e)) from None


class ShaderWriter:
    def __init__(self, fn: Operation, launch, globals_: dict, workgroup_size: int):
        self.fn, self.launch, self.globals, self.wg = fn, launch, globals_, workgroup_size
        self.caps = {"Shader"}
        self.decorations: list[str] = []
        self.declarations: list[str] = []   # types, constants, global variables, in dependency order
        self.interface: list[str] = []
        self.variables: list[str] = []      # Function-storage variables (entry block)
        self.prologue: list[str] = []       # float constants, scalar argument loads (entry block)
        self.code: list[str] = []
        self.cache: dict = {}
        self.values: dict = {}              # MLIR value -> id
        self.memrefs: dict = {}             # MLIR memref value -> (variable id, storage class, elem type)
        self.counter = 0
        self.block = "%entry"
        self.scratch: list = []             # bytes of each scratch buffer (bindings after the arguments)
        self.next_binding = 0

    # -- ids, types and constants ---------------------------------------------------------------------
    def fresh(self, hint: str = "v") -> str:
        self.counter += 1
        return f"%{hint}{self.counter}"

    def declare(self, key, text_of_id) -> str:
        """The id for `key`, declaring it once with `text_of_id(id)`."""
        if key not in self.cache:
            ident = f"%k{len(self.cache)}"
            self.cache[key] = ident
            self.declarations.append(text_of_id(ident))
        return self.cache[key]

    def scalar(self, t: T.Type) -> str:
        if isinstance(t, T.IndexType):
            t = T.i32
        if isinstance(t, T.IntegerType):
            if t.width == 1:
                return self.declare("bool", lambda i: f"{i} = OpTypeBool")
            if t.width not in (8, 16, 32, 64):
                raise Unsupported(f"integer type {t}")
            self.caps |= {8: {"Int8"}, 16: {"Int16"}, 32: set(), 64: {"Int64"}}[t.width]
            return self.declare(("int", t.width), lambda i: f"{i} = OpTypeInt {t.width} 0")
        if isinstance(t, T.FloatType) and t.name in ("f16", "f32", "f64"):
            self.caps |= {16: {"Float16"}, 32: set(), 64: {"Float64"}}[t.width]
            return self.declare(("float", t.width), lambda i: f"{i} = OpTypeFloat {t.width}")
        raise Unsupported(f"type {t}")

    def memory_element(self, t: T.Type) -> T.Type:
        """How an element is held in memory: i1 as a byte (numpy's bool); index as i64, the VM's
        layout of index buffers (a 32-bit value in registers: loads truncate, stores sign-extend)."""
        if isinstance(t, T.IntegerType) and t.width == 1:
            return T.i8
        if isinstance(t, T.IndexType):
            return T.i64
        return t

    def pointer(self, storage: str, pointee: str) -> str:
        return self.declare(("ptr", storage, pointee), lambda i: f"{i} = OpTypePointer {storage} {pointee}")

    def const(self, value, t: T.Type) -> str:
        tid = self.scalar(t)
        if isinstance(t, T.IntegerType) and t.width == 1:
            return self.declare(("bool", bool(value)), lambda i: f"{i} = {'OpConstantTrue' if value else 'OpConstantFalse'} {tid}")
        if isinstance(t, T.FloatType):
            return self.float_const(float(value), t)
        width = 32 if isinstance(t, T.IndexType) else t.width
        value = int(value) & ((1 << width) - 1)
        return self.declare(("const", tid, value), lambda i: f"{i} = OpConstant {tid} {value}")

    def float_const(self, value: float, t: T.FloatType) -> str:
        fmt = {16: "<e", 32: "<f", 64: "<d"}[t.width]
        bits = int.from_bytes(struct.pack(fmt, value), "little")
        key = ("float", t.width, bits)
        if key not in self.cache:
            as_int = self.const(bits, T.IntegerType(t.width))
            ident = f"%k{len(self.cache)}"
            self.cache[key] = ident
            self.prologue.append(f"{ident} = OpBitcast {self.scalar(t)} {as_int}")
        return self.cache[key]

    # -- the shader --------------------------------------------------------------------------------
    def run(self) -> str:
        from ...dialects.func import function_type
        void = self.declare("void", lambda i: f"{i} = OpTypeVoid")
        fn_type = self.declare("fnvoid", lambda i: f"{i} = OpTypeFunction {void}")
        u32 = self.scalar(T.i32)
        v3 = self.declare("v3", lambda i: f"{i} = OpTypeVector {u32} 3")
        args = self.fn.regions[0].blocks[0].arguments
        if self.launch.workgroup:
            return self.tiled(args, void, fn_type)
        gid_var = self.builtin("GlobalInvocationId")
        inputs = list(function_type(self.fn).inputs)
        pairs = len(self.launch.axes) if self.launch.split else 0
        range_at = -1
        if pairs:   # the [begin, end) pairs: the last 2 * pairs index arguments (before the outputs)
            range_at = max(i for i, t in enumerate(inputs) if isinstance(t, T.IndexType)) - 2 * pairs + 1
        gid3 = self.fresh("g")
        gid = self.gid = self.fresh("gid")
        self.prologue += [f"{gid3} = OpLoad {v3} {gid_var}", f"{gid} = OpCompositeExtract {u32} {gid3} 0"]
        indices = []   # the thread's index on each mapped axis, the innermost varying fastest
        rest = gid
        for k in reversed(range(pairs)):
            if k:
                extent = self.const(self.launch.axes[k], T.i32)
                index, outer = self.fresh("idx"), self.fresh("rest")
                self.prologue += [f"{index} = OpUMod {u32} {rest} {extent}", f"{outer} = OpUDiv {u32} {rest} {extent}"]
                indices.insert(0, index)
                rest = outer
            else:
                indices.insert(0, rest)
        for k, index in enumerate(indices):
            end = self.fresh("end")
            self.prologue.append(f"{end} = OpIAdd {u32} {index} {self.const(1, T.i32)}")
            self.values[args[range_at + 2 * k]] = index
            self.values[args[range_at + 2 * k + 1]] = end
        binding = 0
        for i, arg in enumerate(args):
            if range_at <= i < range_at + 2 * pairs:
                continue
            self.bind_argument(arg, binding)
            binding += 1
        self.next_binding = binding
        inside = self.fresh("inside")
        run, done = self.fresh("run"), self.fresh("done")
        self.code += [f"{inside} = OpULessThan {self.scalar(T.i1)} {gid} {self.const(self.launch.threads, T.i32)}",
                      f"OpSelectionMerge {done} None", f"OpBranchConditional {inside} {run} {done}",
                      f"{run} = OpLabel"]
        self.block = run
        self.emit_ops(self.fn.regions[0].blocks[0].ops)
        self.code += [f"OpBranch {done}", f"{done} = OpLabel", "OpReturn", "OpFunctionEnd"]
        return self.shader(void, fn_type, (self.wg, 1, 1))

    def builtin(self, name: str) -> str:
        """The Input variable of a uvec3 builtin (GlobalInvocationId, WorkgroupId, ...)."""
        v3 = self.declare("v3", lambda i: f"{i} = OpTypeVector {self.scalar(T.i32)} 3")
        var = self.declare(("builtin", name), lambda i: f"{i} = OpVariable {self.pointer('Input', v3)} Input")
        if var not in self.interface:
            self.decorations.append(f"OpDecorate {var} BuiltIn {name}")
            self.interface.append(var)
        return var

    def tiled(self, args, void: str, fn_type: str) -> str:
        """A tiled kernel (tiling.py): its id arguments are the workgroup's and the thread's ids;
        every thread runs the whole body (the barriers need them all; the body checks bounds)."""
        from .tiling import ID_ARGUMENTS
        ids = [a for a in args if isinstance(a.type, T.IndexType)]
        if len(ids) != len(ID_ARGUMENTS):
            raise Unsupported("a tiled kernel without its id arguments")
        u32 = self.scalar(T.i32)
        v3 = self.declare("v3", lambda i: f"{i} = OpTypeVector {u32} 3")
        for builtin, targets in (("WorkgroupId", ids[:3]), ("LocalInvocationId", ids[3:])):
            loaded = self.fresh("ids")
            self.prologue.append(f"{loaded} = OpLoad {v3} {self.builtin(builtin)}")
            for component, arg in enumerate(targets):
                ident = self.values[arg] = self.fresh("id")
                self.prologue.append(f"{ident} = OpCompositeExtract {u32} {loaded} {component}")
        binding = 0
        for arg in args:
            if arg not in ids:
                self.bind_argument(arg, binding)
                binding += 1
        self.emit_ops(self.fn.regions[0].blocks[0].ops)
        self.code += ["OpReturn", "OpFunctionEnd"]
        return self.shader(void, fn_type, (*self.launch.workgroup, 1))

    def op_func_call(self, op: Operation) -> None:
        from .tiling import BARRIER
        callee = op.attr("callee").root
        if callee != BARRIER:
            raise Unsupported(f"a call to @{callee}")
        # Workgroup execution and memory scope (2); AcquireRelease | WorkgroupMemory semantics.
        scope, semantics = self.const(2, T.i32), self.const(0x8 | 0x100, T.i32)
        self.code.append(f"OpControlBarrier {scope} {scope} {semantics}")

    def shader(self, void: str, fn_type: str, local_size: tuple) -> str:
        name = self.fn.sym_name
        head = [f"OpCapability {c}" for c in sorted(self.caps)]
        if self.caps & {"StorageBuffer8BitAccess", "StorageBuffer16BitAccess"}:
            head += ['OpExtension "SPV_KHR_8bit_storage"', 'OpExtension "SPV_KHR_16bit_storage"']
        head += ['%glsl = OpExtInstImport "GLSL.std.450"', "OpMemoryModel Logical GLSL450",
                 f'OpEntryPoint GLCompute %main "{name}" {" ".join(self.interface)}',
                 f"OpExecutionMode %main LocalSize {' '.join(map(str, local_size))}"]
        function = [f"%main = OpFunction {void} None {fn_type}", "%entry = OpLabel",
                    *self.variables, *self.prologue, *self.code]
        how = f"tiled ({self.launch.tiling}), " if self.launch.tiling else ""
        return "\n".join(["; SPIR-V", f"; kernel @{name}: {how}{self.launch.threads} threads", *head,
                          *self.decorations, *self.declarations, *function]) + "\n"

    def bind_argument(self, arg, binding: int) -> None:
        t = arg.type
        elt = t.element if isinstance(t, T.MemRefType) else t
        mem = self.memory_element(elt)
        if isinstance(mem, T.IntegerType) and mem.width in (8, 16) or isinstance(mem, T.FloatType) and mem.width == 16:
            self.caps.add("StorageBuffer8BitAccess" if mem.width == 8 else "StorageBuffer16BitAccess")
        etid = self.scalar(mem)
        size = max(1, (mem.width + 7) // 8)
        runtime = self.declare(("rtarray", etid), lambda i: f"{i} = OpTypeRuntimeArray {etid}")
        if ("stride", runtime) not in self.cache:
            self.cache[("stride", runtime)] = True
            self.decorations.append(f"OpDecorate {runtime} ArrayStride {size}")
        block = self.fresh("Block")
        self.declarations.append(f"{block} = OpTypeStruct {runtime}")
        self.decorations += [f"OpDecorate {block} Block", f"OpMemberDecorate {block} 0 Offset 0"]
        var = self.fresh("buffer")
        self.declarations.append(f"{var} = OpVariable {self.pointer('StorageBuffer', block)} StorageBuffer")
        self.decorations += [f"OpDecorate {var} DescriptorSet 0", f"OpDecorate {var} Binding {binding}"]
        self.interface.append(var)
        if isinstance(t, T.MemRefType):
            self.memrefs[arg] = (var, "StorageBuffer", mem)
        else:
            self.values[arg] = self.load_element((var, "StorageBuffer", mem), self.const(0, T.i32), elt,
                                                 into=self.prologue)

    # -- memory ----------------------------------------------------------------------------------
    def element_pointer(self, ref, index: str, out: list) -> str:
        var, storage, mem = ref[:3]
        if len(ref) > 3:   # a thread's slice of a scratch buffer
            at = self.fresh()
            out.append(f"{at} = OpIAdd {self.scalar(T.i32)} {ref[3]} {index}")
            index = at
        ptr = self.fresh("p")
        ptype = self.pointer(storage, self.scalar(mem))
        path = f"{self.const(0, T.i32)} {index}" if storage == "StorageBuffer" else index
        out.append(f"{ptr} = OpAccessChain {ptype} {var} {path}")
        return ptr

    def load_element(self, ref, index: str, elt: T.Type, into=None) -> str:
        if ref[1] == "Splat":   # a constant splat global: every element is its value
            return ref[0]
        out = self.code if into is None else into
        ptr = self.element_pointer(ref, index, out)
        raw = self.fresh()
        mem = ref[2]
        out.append(f"{raw} = OpLoad {self.scalar(mem)} {ptr}")
        if mem == elt:
            return raw
        value = self.fresh()
        if isinstance(elt, T.IndexType):   # i64 to the 32-bit index
            out.append(f"{value} = OpSConvert {self.scalar(elt)} {raw}")
        else:                              # a byte to i1
            out.append(f"{value} = OpINotEqual {self.scalar(T.i1)} {raw} {self.const(0, mem)}")
        return value

    def store_element(self, ref, index: str, value: str, elt: T.Type) -> None:
        if ref[1] == "Splat":
            raise Unsupported("a store to a constant memref.global")
        mem = ref[2]
        if mem != elt:
            held = self.fresh()
            if isinstance(elt, T.IndexType):   # the 32-bit index sign-extended to i64
                self.code.append(f"{held} = OpSConvert {self.scalar(mem)} {value}")
            else:                              # i1 as a byte
                one, zero = self.const(1, mem), self.const(0, mem)
                self.code.append(f"{held} = OpSelect {self.scalar(mem)} {value} {one} {zero}")
            value = held
        ptr = self.element_pointer(ref, index, self.code)
        self.code.append(f"OpStore {ptr} {value}")

    def linear_index(self, memref, indices) -> str:
        return self.linear_ids(memref.type, [self.v(i) for i in indices])

    def root(self, memref):
        if memref not in self.memrefs:
            raise Unsupported(f"a memref defined by {getattr(getattr(memref, 'op', None), 'name', 'a block')}")
        return self.memrefs[memref]

    def array_variable(self, t: T.MemRefType, storage: str, initial=None) -> tuple:
        if not t.has_static_shape:
            raise Unsupported("dynamic shapes")
        mem = self.memory_element(t.element)
        etid = self.scalar(mem)
        count = max(1, t.num_elements)
        length = self.const(count, T.i32)
        array = self.declare(("array", etid, count), lambda i: f"{i} = OpTypeArray {etid} {length}")
        var = self.fresh("array")
        init = ""
        if initial is not None:
            init = " " + self.composite(array, initial, mem)
        line = f"{var} = OpVariable {self.pointer(storage, array)} {storage}{init}"
        (self.variables if storage == "Function" else self.declarations).append(line)
        if storage in ("Private", "Workgroup"):
            self.interface.append(var)
        return var, storage, mem

    def composite(self, array: str, values: np.ndarray, mem: T.Type) -> str:
        consts = [self.const(int(v), mem) for v in values.reshape(-1).tolist()]
        return self.declare(("composite", array, tuple(consts)),
                            lambda i: f"{i} = OpConstantComposite {array} {' '.join(consts)}")

    def global_array(self, name: str, t: T.MemRefType):
        g = self.globals.get(name)
        if g is None:
            raise Unsupported(f"unknown memref.global @{name}")
        value = g.attr("initial_value")
        mem = self.memory_element(t.element)
        try:
            array = dense_to_array(value, dtype_of(t.element), tuple(t.shape)) if value is not None else \
                np.zeros(t.shape, dtype_of(t.element))
        except Exception as e:  # noqa: BLE001 - an initialiser the interpreter cannot read
            raise Unsupported(f"the initial value of @{name} ({e})") from None
        flat = array.reshape(-1)
        if "constant" in g.attributes and flat.size and flat.tobytes() == flat[:1].tobytes() * flat.size:
            # A constant splat (what util.unfoldable_constant leaves in test programs) is just its
            # value: lavapipe turns each load of a Private array at a computed index into a ladder
            # of branches over the elements, which took its compiler minutes at 1,024 elements.
            return self.const(flat[0].item(), t.element), "Splat", t.element
        if isinstance(mem, T.FloatType):
            # Private array filled in the prologue from the integer bit patterns (exact).
            ref = self.array_variable(t, "Private")
            for i, v in enumerate(array.reshape(-1).tolist()):
                ptr = self.element_pointer(ref, self.const(i, T.i32), self.prologue)
                self.prologue.append(f"OpStore {ptr} {self.float_const(v, mem)}")
            return ref
        return self.array_variable(t, "Private", array.astype(np.int64))

    # -- ops ------------------------------------------------------------------------------------
    def v(self, value) -> str:
        if value not in self.values:
            owner = getattr(getattr(value, "op", None), "name", "a block argument")
            raise Unsupported(f"a value defined by {owner}")
        return self.values[value]

    def emit_ops(self, ops) -> None:
        for op in ops:
            if op.name == "func.return":
                if op.operands:
                    raise Unsupported("a kernel that returns values")
                continue
            self.emit(op)

    def emit(self, op: Operation) -> None:
        name = op.name
        handler = getattr(self, "op_" + name.replace(".", "_"), None)
        if handler is not None:
            return handler(op)
        if name in _FLOAT_BINARY or name in _INT_BINARY:
            return self.binary(op)
        if name in _GLSL_BINARY or name in _GLSL_UNARY or name == "math.fma":
            return self.glsl(op)
        if name in _CASTS:
            return self.cast(op)
        if name in VIEWS:
            self.memrefs[op.results[0]] = self.root(view_source(op))
            return None
        raise Unsupported(f"'{name}' has no SPIR-V form here")

    def result(self, op: Operation, text: str) -> None:
        ident = self.fresh()
        self.code.append(f"{ident} = {text}")
        self.values[op.results[0]] = ident

    def op_arith_constant(self, op: Operation) -> None:
        attr = op.attr("value")
        if not isinstance(attr, (IntegerAttr, FloatAttr)):
            raise Unsupported("a non-scalar constant")
        self.values[op.results[0]] = self.const(attr.value, op.results[0].type)

    def binary(self, op: Operation) -> None:
        t = op.results[0].type
        a, b = (self.v(x) for x in op.operands)
        if isinstance(t, T.IntegerType) and t.width == 1:
            if op.name not in _BOOL_BINARY:
                raise Unsupported(f"'{op.name}' on i1")
            return self.result(op, f"{_BOOL_BINARY[op.name]} {self.scalar(t)} {a} {b}")
        code = _FLOAT_BINARY.get(op.name) or _INT_BINARY[op.name]
        self.result(op, f"{code} {self.scalar(t)} {a} {b}")
        if op.name in _FLOAT_BINARY:
            self.exact(op)

    def glsl(self, op: Operation) -> None:
        t = op.results[0].type
        name = {"math.fma": "Fma"}.get(op.name) or _GLSL_BINARY.get(op.name) or _GLSL_UNARY[op.name]
        self.result(op, f"OpExtInst {self.scalar(t)} %glsl {name} {' '.join(self.v(x) for x in op.operands)}")
        if op.name == "math.fma":
            self.exact(op)

    def exact(self, op: Operation) -> None:
        """NoContraction on a float op: without it a Vulkan compiler may fuse, split or reassociate
        float arithmetic (Mesa folds (a + M) - M to a), which breaks the range reductions of the
        polynomial expansions (the 1.5 * 2^23 rounding trick) and Fma's single rounding."""
        self.decorations.append(f"OpDecorate {self.values[op.results[0]]} NoContraction")

    def _nan_aware(self, op: Operation, compare: str) -> None:
        """maximumf / minimumf: NaN if either is NaN (GLSL's FMax leaves that undefined)."""
        t = op.results[0].type
        a, b = (self.v(x) for x in op.operands)
        boolean = self.scalar(T.i1)
        wins, a_nan, take_a = self.fresh(), self.fresh(), self.fresh()
        self.code += [f"{wins} = {compare} {boolean} {a} {b}", f"{a_nan} = OpIsNan {boolean} {a}",
                      f"{take_a} = OpLogicalOr {boolean} {wins} {a_nan}"]
        self.result(op, f"OpSelect {self.scalar(t)} {take_a} {a} {b}")

    def op_arith_maximumf(self, op: Operation) -> None:
        self._nan_aware(op, "OpFOrdGreaterThan")

    def op_arith_minimumf(self, op: Operation) -> None:
        self._nan_aware(op, "OpFOrdLessThan")

    def op_math_copysign(self, op: Operation) -> None:
        """The magnitude bits of the first operand, the sign bit of the second."""
        t = op.results[0].type
        bits = T.IntegerType(t.width)
        it = self.scalar(bits)
        a, b, mag, sign, both = (self.fresh() for _ in range(5))
        self.code += [f"{a} = OpBitcast {it} {self.v(op.operand('lhs'))}",
                      f"{b} = OpBitcast {it} {self.v(op.operand('rhs'))}",
                      f"{mag} = OpBitwiseAnd {it} {a} {self.const((1 << (t.width - 1)) - 1, bits)}",
                      f"{sign} = OpBitwiseAnd {it} {b} {self.const(1 << (t.width - 1), bits)}",
                      f"{both} = OpBitwiseOr {it} {mag} {sign}"]
        self.result(op, f"OpBitcast {self.scalar(t)} {both}")

    def op_math_round(self, op: Operation) -> None:
        """Half away from zero (GLSL's Round leaves halves to the implementation)."""
        t = op.results[0].type
        ft, boolean = self.scalar(t), self.scalar(T.i1)
        x = self.v(op.operand("operand"))
        whole, frac, size, away, step = (self.fresh() for _ in range(5))
        self.code += [f"{whole} = OpExtInst {ft} %glsl Trunc {x}", f"{frac} = OpFSub {ft} {x} {whole}",
                      f"{size} = OpExtInst {ft} %glsl FAbs {frac}",
                      f"{away} = OpFOrdGreaterThanEqual {boolean} {size} {self.const(0.5, t)}",
                      f"{step} = OpExtInst {ft} %glsl FSign {x}"]
        moved = self.fresh()
        self.code.append(f"{moved} = OpFAdd {ft} {whole} {step}")
        self.result(op, f"OpSelect {ft} {away} {moved} {whole}")

    def op_arith_floordivsi(self, op: Operation) -> None:
        """a / b rounded toward -inf: the quotient minus one where the remainder is non-zero and
        has the other sign than b (as the CPU lowering does)."""
        t = op.results[0].type
        it, boolean = self.scalar(t), self.scalar(T.i1)
        a, b = (self.v(x) for x in op.operands)
        zero = self.const(0, t)
        q, r, nonzero, r_neg, b_neg, differ, fix, one = (self.fresh() for _ in range(8))
        self.code += [f"{q} = OpSDiv {it} {a} {b}", f"{r} = OpSRem {it} {a} {b}",
                      f"{nonzero} = OpINotEqual {boolean} {r} {zero}", f"{r_neg} = OpSLessThan {boolean} {r} {zero}",
                      f"{b_neg} = OpSLessThan {boolean} {b} {zero}", f"{differ} = OpLogicalNotEqual {boolean} {r_neg} {b_neg}",
                      f"{fix} = OpLogicalAnd {boolean} {nonzero} {differ}",
                      f"{one} = OpSelect {it} {fix} {self.const(1, t)} {zero}"]
        self.result(op, f"OpISub {it} {q} {one}")

    def op_arith_negf(self, op: Operation) -> None:
        self.result(op, f"OpFNegate {self.scalar(op.results[0].type)} {self.v(op.operand('operand'))}")

    def op_arith_select(self, op: Operation) -> None:
        c, a, b = (self.v(x) for x in op.operands)
        self.result(op, f"OpSelect {self.scalar(op.results[0].type)} {c} {a} {b}")

    def op_arith_cmpf(self, op: Operation) -> None:
        pred = op.attr("predicate").value
        a, b = (self.v(x) for x in op.operands)
        boolean = self.scalar(T.i1)
        if pred in _CMPF:
            return self.result(op, f"{_CMPF[pred]} {boolean} {a} {b}")
        if pred in (0, 15):
            self.values[op.results[0]] = self.const(pred == 15, T.i1)
            return None
        a_nan, b_nan, either = self.fresh(), self.fresh(), self.fresh()
        self.code += [f"{a_nan} = OpIsNan {boolean} {a}", f"{b_nan} = OpIsNan {boolean} {b}",
                      f"{either} = OpLogicalOr {boolean} {a_nan} {b_nan}"]
        if pred == 14:   # uno
            self.values[op.results[0]] = either
        else:            # ord
            self.result(op, f"OpLogicalNot {boolean} {either}")

    def op_arith_cmpi(self, op: Operation) -> None:
        pred = op.attr("predicate").value
        a, b = (self.v(x) for x in op.operands)
        t = op.operand("lhs").type
        if isinstance(t, T.IntegerType) and t.width == 1:
            code = {0: "OpLogicalEqual", 1: "OpLogicalNotEqual"}.get(pred)
            if code is None:   # ordered: compare as i32, true being -1 for the signed predicates
                true = self.const(-1 if pred in (2, 3, 4, 5) else 1, T.i32)
                a, b = (self.bool_as_i32(x, true) for x in (a, b))
                code = _CMPI[pred]
        else:
            code = _CMPI[pred]
        self.result(op, f"{code} {self.scalar(T.i1)} {a} {b}")

    def bool_as_i32(self, value: str, true: str) -> str:
        widened = self.fresh()
        self.code.append(f"{widened} = OpSelect {self.scalar(T.i32)} {value} {true} {self.const(0, T.i32)}")
        return widened

    def cast(self, op: Operation) -> None:
        source = op.operand("in")
        src, dst = source.type, op.results[0].type
        x = self.v(source)
        src_bool = isinstance(src, T.IntegerType) and src.width == 1
        if src_bool:   # i1 -> int / float: a select (extsi and sitofp of true are -1)
            minus = op.name in ("arith.extsi", "arith.sitofp")
            one = self.const(-1.0 if minus else 1.0, dst) if isinstance(dst, T.FloatType) else \
                self.const(-1 if minus else 1, dst)
            return self.result(op, f"OpSelect {self.scalar(dst)} {x} {one} {self.const(0, dst)}")
        if isinstance(dst, T.IntegerType) and dst.width == 1:   # trunci to i1: the low bit
            low = self.fresh()
            self.code.append(f"{low} = OpBitwiseAnd {self.scalar(src)} {x} {self.const(1, src)}")
            return self.result(op, f"OpINotEqual {self.scalar(dst)} {low} {self.const(0, src)}")
        self.result(op, f"{_CASTS[op.name]} {self.scalar(dst)} {x}")

    def op_arith_index_cast(self, op: Operation) -> None:
        source = op.operand("in")
        src, dst = source.type, op.results[0].type
        width = lambda t: 32 if isinstance(t, T.IndexType) else t.width  # noqa: E731
        x = self.v(source)
        if width(src) == width(dst):
            self.values[op.results[0]] = x
            return
        unsigned = op.name == "arith.index_castui"
        self.result(op, f"{'OpUConvert' if unsigned else 'OpSConvert'} {self.scalar(dst)} {x}")

    op_arith_index_castui = op_arith_index_cast

    def op_memref_load(self, op: Operation) -> None:
        memref, *indices = op.operands
        index = self.linear_index(memref, indices)
        self.values[op.results[0]] = self.load_element(self.root(memref), index, op.results[0].type)

    def op_memref_store(self, op: Operation) -> None:
        value, memref, *indices = op.operands
        index = self.linear_index(memref, indices)
        self.store_element(self.root(memref), index, self.v(value), value.type)

    def op_memref_alloc(self, op: Operation) -> None:
        """A kernel-level temporary is a scratch storage buffer the device provides: one for all
        threads when it has a row per split row (each thread touches only its own rows), else a
        slice per thread (a one-row buffer reused row by row). Anything else, or a slice too big,
        is the thread's own Function-storage array (slow on lavapipe)."""
        t = op.results[0].type
        mem = self.memory_element(t.element)
        nbytes = max(1, t.num_elements) * max(1, (mem.width + 7) // 8)
        shared = not self.launch.split or (t.rank > 0 and t.shape[0] == self.launch.axes[0])
        copies = 1 if shared else self.launch.threads
        if op.parent is not self.fn.regions[0].blocks[0] or copies * nbytes > SCRATCH_LIMIT:
            self.memrefs[op.results[0]] = self.array_variable(t, "Function")
            return
        self.scratch.append(copies * nbytes)
        self.bind_argument(op.results[0], self.next_binding)
        self.next_binding += 1
        if not shared:   # this thread's slice starts at gid * elements
            var, storage, _ = self.memrefs[op.results[0]]
            base = self.fresh("slice")
            self.prologue.append(f"{base} = OpIMul {self.scalar(T.i32)} {self.gid} {self.const(max(1, t.num_elements), T.i32)}")
            self.memrefs[op.results[0]] = (var, storage, mem, base)

    op_memref_alloca = op_memref_alloc

    def op_memref_dealloc(self, op: Operation) -> None:
        return None

    def op_memref_get_global(self, op: Operation) -> None:
        from .tiling import WORKGROUP_SPACE
        name = op.attr("name").root
        key = ("global", name)
        t = op.results[0].type
        if key not in self.cache and getattr(t.memory_space, "value", None) == WORKGROUP_SPACE:
            self.cache[key] = self.array_variable(t, "Workgroup")   # a tile shared by the workgroup
        elif key not in self.cache:
            self.cache[key] = self.global_array(name, t)
        self.memrefs[op.results[0]] = self.cache[key]

    def op_memref_copy(self, op: Operation) -> None:
        """Element by element over the flat index (each side addressed through its own layout)."""
        src, dst = op.operands
        shape = list(src.type.shape)
        count = int(np.prod(shape, dtype=np.int64))
        i32 = self.scalar(T.i32)

        def body(flat: str) -> None:
            indices, rest = [], flat
            for k, extent in enumerate(shape):
                inner = int(np.prod(shape[k + 1:], dtype=np.int64))
                q, r = self.fresh(), self.fresh()
                self.code += [f"{q} = OpSDiv {i32} {rest} {self.const(inner, T.i32)}",
                              f"{r} = OpSMod {i32} {rest} {self.const(inner, T.i32)}"]
                indices.append(q)
                rest = r
            src_index = self.linear_ids(src.type, indices)
            value = self.load_element(self.root(src), src_index, src.type.element)
            self.store_element(self.root(dst), self.linear_ids(dst.type, indices), value, src.type.element)
        unroll = next(u for u in (UNROLL, 8, 4, 2, 1) if count % u == 0)
        self.loop(self.const(0, T.i32), self.const(count, T.i32), self.const(1, T.i32), [], [],
                  lambda iv, _: body(iv) or [], unroll)

    def linear_ids(self, t: T.MemRefType, indices: list) -> str:
        strides, offset = _layout(t)
        i32 = self.scalar(T.i32)
        total = self.const(offset, T.i32)
        for index, stride in zip(indices, strides):
            if stride != 1:
                scaled = self.fresh()
                self.code.append(f"{scaled} = OpIMul {i32} {index} {self.const(stride, T.i32)}")
                index = scaled
            summed = self.fresh()
            self.code.append(f"{summed} = OpIAdd {i32} {total} {index}")
            total = summed
        return total

    def loop(self, lower: str, upper: str, step: str, types: list, inits: list, body, unroll: int = 1) -> list:
        """A structured loop `for iv in [lower, upper) by step` carrying values of `types` (ids):
        `body(iv, carried)` emits the body and returns the yielded ids; returns the final values.
        With `unroll` (which divides the trip count), each iteration runs the body that many times:
        lavapipe (llvmpipe) ends a shader invocation's loops after LOOP_LIMIT iterations in all,
        and a thread that loops over a row or a whole reduction gets past that otherwise."""
        if unroll == 1:
            return self._loop(lower, upper, step, types, inits, body)
        i32 = self.scalar(T.i32)
        big = self.fresh()
        self.code.append(f"{big} = OpIMul {i32} {step} {self.const(unroll, T.i32)}")

        def unrolled(iv: str, carried: list) -> list:
            for k in range(unroll):
                at = iv
                if k:
                    offset, at = self.fresh(), self.fresh()
                    self.code += [f"{offset} = OpIMul {i32} {step} {self.const(k, T.i32)}",
                                  f"{at} = OpIAdd {i32} {iv} {offset}"]
                carried = body(at, carried)
            return carried
        return self._loop(lower, upper, big, types, inits, unrolled)

    def _loop(self, lower: str, upper: str, step: str, types: list, inits: list, body) -> list:
        i32, boolean = self.scalar(T.i32), self.scalar(T.i1)
        header, first, cont, merge = (self.fresh(h) for h in ("header", "body", "continue", "merge"))
        iv, nxt, cond = self.fresh("i"), self.fresh("inext"), self.fresh()
        carried = [self.fresh("c") for _ in inits]
        yielded = [self.fresh("y") for _ in inits]   # bound where the body yields
        before = self.block
        self.code += [f"OpBranch {header}", f"{header} = OpLabel",
                      f"{iv} = OpPhi {i32} {lower} {before} {nxt} {cont}"]
        self.code += [f"{c} = OpPhi {t} {init} {before} {y} {cont}"
                      for c, t, init, y in zip(carried, types, inits, yielded)]
        self.code += [f"{cond} = OpSLessThan {boolean} {iv} {upper}", f"OpLoopMerge {merge} {cont} None",
                      f"OpBranchConditional {cond} {first} {merge}", f"{first} = OpLabel"]
        self.block = first
        values = body(iv, carried)
        self.code += [f"{y} = OpCopyObject {t} {v}" for y, t, v in zip(yielded, types, values)]
        self.code += [f"OpBranch {cont}", f"{cont} = OpLabel", f"{nxt} = OpIAdd {i32} {iv} {step}",
                      f"OpBranch {header}", f"{merge} = OpLabel"]
        self.block = merge
        return carried

    def op_scf_for(self, op: Operation) -> None:
        lower, upper, step, *inits = (self.v(x) for x in op.operands)
        body = op.regions[0].blocks[0]
        types = [self.scalar(a.type) for a in body.arguments[1:]]

        def emit_body(iv: str, carried: list) -> list:
            self.values[body.arguments[0]] = iv
            for arg, c in zip(body.arguments[1:], carried):
                self.values[arg] = c
            self.emit_ops(body.ops[:-1])
            return [self.v(x) for x in body.ops[-1].operands]
        bounds = [_constant(x) for x in op.operands[:3]]
        unroll = 1
        innermost = not any(o.name in ("scf.for", "scf.while") for inner in body.ops for o in inner.walk())
        if innermost and None not in bounds and bounds[2] > 0:
            trip = max(0, -(-(bounds[1] - bounds[0]) // bounds[2]))
            unroll = next(u for u in (UNROLL, 8, 4, 2, 1) if trip % u == 0 and trip >= u)
        for result, value in zip(op.results, self.loop(lower, upper, step, types, inits, emit_body, unroll)):
            self.values[result] = value

    def op_scf_while(self, op: Operation) -> None:
        """A structured loop whose header only holds the before-region's arguments (OpPhis of the
        initial values and of what the after-region yields) and the OpLoopMerge; the before-region
        follows in blocks of its own (it may hold selections and loops), and its scf.condition
        either enters the after-region (the body, then the continue block) or breaks out to the
        merge block, where the results are OpPhis of the condition's arguments."""
        before, after = (region.blocks[0] for region in op.regions)
        types = [self.scalar(a.type) for a in before.arguments]
        header, start, body, cont, merge = (self.fresh(h) for h in ("header", "before", "body", "continue", "merge"))
        carried = [self.fresh("c") for _ in before.arguments]
        yielded = [self.fresh("y") for _ in before.arguments]   # bound where the after-region yields
        inits = [self.v(x) for x in op.operands]
        self.code += [f"OpBranch {header}", f"{header} = OpLabel"]
        self.code += [f"{c} = OpPhi {t} {init} {self.block} {y} {cont}"
                      for c, t, init, y in zip(carried, types, inits, yielded)]
        self.code += [f"OpLoopMerge {merge} {cont} None", f"OpBranch {start}", f"{start} = OpLabel"]
        self.block = start
        for arg, c in zip(before.arguments, carried):
            self.values[arg] = c
        self.emit_ops(before.ops[:-1])
        condition, *forwarded = (self.v(x) for x in before.ops[-1].operands)
        exit_block = self.block
        self.code += [f"OpBranchConditional {condition} {body} {merge}", f"{body} = OpLabel"]
        self.block = body
        for arg, value in zip(after.arguments, forwarded):
            self.values[arg] = value
        self.emit_ops(after.ops[:-1])
        self.code += [f"{y} = OpCopyObject {t} {self.v(x)}" for y, t, x in zip(yielded, types, after.ops[-1].operands)]
        self.code += [f"OpBranch {cont}", f"{cont} = OpLabel", f"OpBranch {header}", f"{merge} = OpLabel"]
        self.block = merge
        for result, value in zip(op.results, forwarded):
            self.result_at(result, f"OpPhi {self.scalar(result.type)} {value} {exit_block}")

    def op_scf_if(self, op: Operation) -> None:
        cond = self.v(op.operand("condition"))
        then, other, merge = self.fresh("then"), self.fresh("else"), self.fresh("endif")
        self.code += [f"OpSelectionMerge {merge} None", f"OpBranchConditional {cond} {then} {other}"]
        incoming = []
        for region, label in zip(op.regions, (then, other)):
            self.code.append(f"{label} = OpLabel")
            self.block = label
            if region.blocks:
                self.emit_ops(region.blocks[0].ops[:-1])
                values = [self.v(x) for x in region.blocks[0].ops[-1].operands]
            else:
                values = []
            incoming.append((values, self.block))
            self.code.append(f"OpBranch {merge}")
        self.code.append(f"{merge} = OpLabel")
        self.block = merge
        for k, result in enumerate(op.results):
            pairs = " ".join(f"{vals[k]} {blk}" for vals, blk in incoming)
            self.result_at(result, f"OpPhi {self.scalar(result.type)} {pairs}")

    def result_at(self, result, text: str) -> None:
        ident = self.fresh()
        self.code.append(f"{ident} = {text}")
        self.values[result] = ident
