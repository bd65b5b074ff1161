"""The llvm dialect as LLVM IR text (what `mlir-translate --mlir-to-llvmir` does).

`translate_module(module)` walks the module's `llvm.func`s and `llvm.mlir.global`s
and writes each op as the LLVM instruction it models. MLIR's block arguments
become `phi` nodes fed by the branches into the block; constant-like ops
(`llvm.mlir.constant`, `undef`, `poison`, `zero`, `addressof`) are folded into
their uses as constant operands, as mlir-translate does; intrinsics become calls
to declared `@llvm.*` functions with their overload suffixes. Fast-math flags,
`nsw`/`nuw`, `exact`, `disjoint`, `nneg` and GEP's `inbounds` are carried over.

Only what is understood is translated: anything else raises `TranslateError`
naming the op, so LLVM (which aborts on some bad input) never sees it.
"""
from __future__ import annotations

from ..dialects.branches import case_values
from ..dialects import llvm_types as LT
from ..dialects.llvm import DYNAMIC_INDEX, FCMP_PREDICATES, ICMP_PREDICATES, INT_BINARY, FLOAT_BINARY
from ..ir import types as T
from ..ir.attributes import DenseArrayAttr, IntegerAttr, OpaqueAttr, StringAttr, SymbolRefAttr, TypeAttr
from ..ir.core import Operation
from .ir_intrinsics import immediate_arguments, intrinsic_name
from .ir_types import Untranslatable, attr_constant, ir_type, quote_name, zero_constant


class TranslateError(Exception):
    """An op (or type, or attribute) with no LLVM IR translation; `span` locates it."""

    def __init__(self, message: str, span=None):
        super().__init__(message)
        self.message, self.span = message, span


_CASTS = ("trunc", "zext", "sext", "fptrunc", "fpext", "fptoui", "fptosi", "uitofp", "sitofp", "bitcast",
          "ptrtoint", "ptrtoaddr", "inttoptr", "addrspacecast")
_FASTMATH_WORDS = ("nnan", "ninf", "nsz", "arcp", "contract", "afn", "reassoc", "fast")
_LINKAGES = {"private", "internal", "available_externally", "linkonce", "weak", "common", "appending",
             "extern_weak", "linkonce_odr", "weak_odr", "external"}


#: Prefix of the C-callable wrappers of functions that return several values (see translate_module).
RESULTS_WRAPPER = "_mlirtext_results_"


def translate_module(module: Operation, errors: list | None = None, result_wrappers: bool = False) -> str:
    """LLVM IR text for `module`, a builtin.module of llvm-dialect functions and globals.

    Raises TranslateError at the first op it cannot translate; when `errors` is a
    list, collects the errors there instead and leaves what failed out (a function
    becomes a declaration), so the rest can still be checked.

    With `result_wrappers`, each public function returning a struct (several
    results) also gets `@_mlirtext_results_<name>(ptr %out, args...)`, which stores
    the struct at %out: LLVM returns a first-class struct of more than two
    pointers in registers that no C caller (ctypes) expects."""
    return _ModuleWriter(module, errors, result_wrappers).run()


# ---- attributes to IR words ---------------------------------------------------------------------
def fastmath(op) -> str:
    attr = op.attr("fastmathFlags")
    if not isinstance(attr, OpaqueAttr):
        return ""
    words = [w.strip() for w in attr.body.split(",") if w.strip() in _FASTMATH_WORDS]
    if "fast" in words:
        return "fast "
    return "".join(w + " " for w in words)


def call_fastmath(op) -> str:
    """Fast-math flags of a call: LLVM allows them only on calls returning floats."""
    if len(op.results) != 1 or not isinstance(T.element_type(op.results[0].type), T.FloatType):
        return ""
    return fastmath(op)


def _flag(op, name) -> int:
    attr = op.attributes.get(name)
    return attr.value if isinstance(attr, IntegerAttr) else 0


def overflow(op) -> str:
    flags = _flag(op, "overflowFlags")
    return ("nuw " if flags & 2 else "") + ("nsw " if flags & 1 else "")


def linkage_of(op, default="") -> str:
    attr = op.attr("linkage")
    if isinstance(attr, OpaqueAttr):
        word = attr.body.strip()
        if word in _LINKAGES:
            return "" if word == "external" else word + " "
    return default


def _align(op) -> str:
    a = op.attr("alignment")
    return f", align {a.value}" if isinstance(a, IntegerAttr) and a.value else ""


# ---- the module -----------------------------------------------------------------------------------
class _ModuleWriter:
    def __init__(self, module: Operation, errors: list | None = None, result_wrappers: bool = False):
        self.module = module
        self.errors = errors
        self.result_wrappers = result_wrappers
        self.declared: dict[str, str] = {}     # intrinsic name -> declaration
        self.symbols = self._symbol_types()

    def _symbol_types(self) -> dict:
        table = {}
        for op in self._body():
            if op.name in ("llvm.func", "func.func"):
                try:
                    table[op.sym_name] = function_type(op)
                except Untranslatable:
                    pass  # reported when the function itself is translated
        return table

    def _body(self):
        if not self.module.regions or not self.module.regions[0].blocks:
            return []
        return self.module.regions[0].blocks[0].ops

    def run(self) -> str:
        parts = []
        for op in self._body():
            part = self.symbol_or_fallback(op)
            if part:
                parts.append(part)
                if self.result_wrappers and op.name == "llvm.func":
                    parts.append(self.results_wrapper(op))
        name = self.module.attr("sym_name")
        header = [f"; ModuleID = '{name.value if isinstance(name, StringAttr) else 'LLVMDialectModule'}'",
                  'source_filename = "LLVMDialectModule"']
        structs = {}
        for op in self.module.walk():  # identified struct types are defined once at the top
            for t in _types_in(op):
                _collect_structs(t, structs)
        for sname, t in structs.items():
            try:
                body = ", ".join(ir_type(f) for f in t.body or ())
            except Untranslatable:
                continue  # only used by what failed to translate
            header.append(f"%{quote_name(sname)} = type " + ("opaque" if t.opaque or t.body is None else
                                                             (f"<{{ {body} }}>" if t.packed else f"{{ {body} }}")))
        return "\n".join(header) + "\n\n" + "\n\n".join(parts + list(self.declared.values())) + "\n"

    def symbol_or_fallback(self, op) -> str:
        """The IR of one module-level op; on failure raise, or (collecting mode) record the error and
        return a declaration standing for it."""
        try:
            try:
                return self.symbol_text(op)
            except (KeyError, IndexError, AttributeError, TypeError, ValueError) as e:
                # a malformed op the verifier let through: a diagnostic, never a traceback
                raise TranslateError(f"cannot translate '{op.name}' @{op.sym_name}: malformed "
                                     f"({type(e).__name__}: {e})", op.span) from None
        except TranslateError as e:
            if self.errors is None:
                raise
            self.errors.append(e)
            return self.fallback_declaration(op)

    def results_wrapper(self, fn) -> str:
        ftype = self.symbols.get(fn.sym_name)
        if not isinstance(ftype, LT.LLVMFunctionType) or not isinstance(ftype.result, LT.LLVMStructType) \
                or not fn.regions or not fn.regions[0].blocks or linkage_of(fn) or ftype.vararg:
            return ""
        params = [ir_type(p) for p in ftype.params]
        args = ", ".join(f"{t} %a{i}" for i, t in enumerate(params))
        ret = ir_type(ftype.result)
        wrapper = quote_name(RESULTS_WRAPPER + fn.sym_name)
        return (f"define void @{wrapper}(ptr %out{', ' if args else ''}{args}) {{\n"
                f"  %r = call {ret} @{quote_name(fn.sym_name)}({args})\n  store {ret} %r, ptr %out\n  ret void\n}}")

    def fallback_declaration(self, op) -> str:
        """What stands for a symbol that failed to translate (collecting mode): a declaration."""
        ftype = self.symbols.get(op.sym_name) if op.sym_name else None
        if not isinstance(ftype, LT.LLVMFunctionType):
            return ""
        try:
            params = [ir_type(p) for p in ftype.params] + (["..."] if ftype.vararg else [])
            return f"declare {ir_type(ftype.result)} @{quote_name(op.sym_name)}({', '.join(params)})"
        except Untranslatable:
            return ""

    def symbol_text(self, op) -> str:
        if op.name in ("llvm.func", "func.func"):
            return _FunctionWriter(op, self).run()
        if op.name == "llvm.mlir.global":
            return self.global_text(op)
        if op.name in ("llvm.module_flags", "llvm.comdat", "llvm.mlir.global_ctors", "llvm.mlir.global_dtors",
                       "llvm.named_metadata", "llvm.mlir.alias", "llvm.mlir.ifunc"):
            raise TranslateError(f"cannot translate '{op.name}' to LLVM IR yet", op.name_span or op.span)
        raise TranslateError(f"cannot translate '{op.name}' to LLVM IR: not an llvm-dialect module-level "
                             "op (lower to the llvm level first: mlirtext opt --lower-to=llvm)",
                             op.name_span or op.span)

    def global_text(self, op: Operation) -> str:
        try:
            t = op.attr("global_type").type
            name = "@" + quote_name(op.sym_name)
            words = linkage_of(op)
            if "unnamed_addr" in op.attributes:
                u = _flag(op, "unnamed_addr")
                words += {1: "local_unnamed_addr ", 2: "unnamed_addr "}.get(u, "")
            space = _flag(op, "addr_space")
            if space:
                words += f"addrspace({space}) "
            if "thread_local_" in op.attributes:
                words += "thread_local "
            kind = "constant" if "constant" in op.attributes else "global"
            value = op.attr("value")
            if value is not None:
                init = " " + attr_constant(value, t)
            elif op.regions and op.regions[0].blocks:
                init = " " + self.initializer(op, t)
            else:
                init = ""
                if not words.strip():
                    words = "external "
            if init == "" and linkage_of(op).strip() in ("private", "internal"):
                init = " " + zero_constant(t)  # private globals need an initializer
            return f"{name} = {words}{kind} {ir_type(t)}{init}{_align(op)}"
        except Untranslatable as e:
            raise TranslateError(f"cannot translate global @{op.sym_name}: {e}", op.span) from None

    def initializer(self, op: Operation, t) -> str:
        """A global's initializer region, when it is a constant expression (constants, addresses,
        insertvalue chains) ending in llvm.return."""
        writer = _FunctionWriter(None, self)
        block = op.regions[0].blocks[0]
        for inner in block.ops:
            if inner.name == "llvm.return":
                return writer.operand_value(inner.operand("arg"))
            if inner.name == "llvm.insertvalue":
                agg, val = inner.operand("container"), inner.operand("value")
                pos = list(inner.attr("position").values)
                writer.constants[inner.results[0]] = _insert_constant(writer.operand_value(agg), agg.type, pos,
                                                                      writer.operand(val))
            elif not writer.fold_constant(inner):
                raise Untranslatable(f"the initializer uses '{inner.name}' (only constants are supported)")
        raise Untranslatable("the initializer region has no llvm.return")

    def declare_intrinsic(self, name: str, result: str, args: list[str]) -> None:
        if name not in self.declared and name not in self.symbols:
            self.declared[name] = f"declare {result} @{name}({', '.join(args)})"


def _insert_constant(agg_text: str, agg_type, position: list, value_text: str) -> str:
    """`insertvalue` folded on constants: only the common case of filling a literal struct/array."""
    if len(position) != 1:
        raise Untranslatable("nested insertvalue positions in an initializer")
    if isinstance(agg_type, LT.LLVMStructType):
        fields = list(agg_type.body or ())
    elif isinstance(agg_type, LT.LLVMArrayType):
        fields = [agg_type.element] * agg_type.size
    else:
        raise Untranslatable(f"insertvalue into {agg_type}")
    items = _constant_items(agg_text, fields)
    items[position[0]] = value_text
    open_, close = ("[", "]") if isinstance(agg_type, LT.LLVMArrayType) else ("{ ", " }")
    return open_ + ", ".join(items) + close


def _constant_items(text: str, fields) -> list:
    if text in ("undef", "poison", "zeroinitializer"):
        return [f"{ir_type(f)} {'zeroinitializer' if text == 'zeroinitializer' else text}"
                if not isinstance(f, (T.IntegerType, T.FloatType)) or text != "zeroinitializer"
                else f"{ir_type(f)} {zero_constant(f)}" for f in fields]
    inner = text.strip()[1:-1].strip()
    items, depth, start = [], 0, 0
    for i, c in enumerate(inner):
        if c in "[{<(":
            depth += 1
        elif c in "]}>)":
            depth -= 1
        elif c == "," and depth == 0:
            items.append(inner[start:i].strip())
            start = i + 1
    items.append(inner[start:].strip())
    return items


def _types_in(op):
    for v in op.results:
        yield v.type
    for r in op.regions:
        for b in r.blocks:
            for a in b.arguments:
                yield a.type
    for a in op.attributes.values():
        if isinstance(a, TypeAttr):
            yield a.type


def _collect_structs(t, out: dict) -> None:
    if isinstance(t, LT.LLVMStructType):
        if t.name is not None and (t.body is not None or t.opaque):
            out.setdefault(t.name, t)
        for f in t.body or ():
            _collect_structs(f, out)
    elif isinstance(t, LT.LLVMArrayType):
        _collect_structs(t.element, out)
    elif isinstance(t, LT.LLVMFunctionType):
        _collect_structs(t.result, out)
        for p in t.params:
            _collect_structs(p, out)


# ---- functions ----------------------------------------------------------------------------------------
class _FunctionWriter:
    def __init__(self, fn: Operation | None, module: _ModuleWriter):
        self.fn, self.module = fn, module
        self.names: dict = {}           # Value -> '%name'
        self.constants: dict = {}       # Value -> constant text (folded into uses)
        self.used: set = set()
        # base -> the suffix the next name made from it tries first: names are only added, so
        # the smallest free suffix never goes down (without it, N unnamed values cost O(N^2)).
        self.next_suffix: dict = {}
        self.labels: dict = {}          # Block -> label
        self.lines: list[str] = []

    # -- names and operands ---------------------------------------------------------------------
    def fresh(self, hint: str | None) -> str:
        base = hint if hint and (hint[0].isalpha() or hint[0] == "_") and \
            all(c.isalnum() or c in "_." for c in hint) and hint.isascii() else "v"
        n = self.next_suffix.get(base, 0)
        name = base if n == 0 else f"{base}.{n}"
        while name in self.used:
            n += 1
            name = f"{base}.{n}"
        self.next_suffix[base] = n
        self.used.add(name)
        return name

    def define(self, value) -> str:
        name = "%" + self.fresh(value.name if isinstance(getattr(value, "name", None), str) else None)
        self.names[value] = name
        return name

    def operand_value(self, value) -> str:
        text = self.constants.get(value)
        if text is not None:
            return text
        name = self.names.get(value)
        if name is None:
            raise Untranslatable("uses a value defined in a way that was not translated")
        return name

    def operand(self, value) -> str:
        return f"{ir_type(value.type)} {self.operand_value(value)}"

    # -- the function ----------------------------------------------------------------------------
    def run(self) -> str:
        fn = self.fn
        try:
            ftype = function_type(fn)
        except Untranslatable as e:
            raise TranslateError(f"cannot translate @{fn.sym_name}: {e}", fn.span) from None
        blocks = fn.regions[0].blocks if fn.regions else []
        try:
            ret = ir_type(ftype.result)
            head_words = linkage_of(fn)
            cconv = fn.attr("CConv")
            if isinstance(cconv, OpaqueAttr) and cconv.body.strip() not in ("ccc", ""):
                head_words += cconv.body.strip() + " "
            name = "@" + quote_name(fn.sym_name)
            if not blocks:
                params = [ir_type(p) for p in ftype.params] + (["..."] if ftype.vararg else [])
                return f"declare {head_words}{ret} {name}({', '.join(params)})"
            params = []
            for arg in blocks[0].arguments:
                params.append(f"{ir_type(arg.type)} {self.define(arg)}")
            if ftype.vararg:
                params.append("...")
        except Untranslatable as e:
            raise TranslateError(f"cannot translate @{fn.sym_name}: {e}", fn.span) from None
        for i, block in enumerate(blocks):
            self.labels[block] = self.fresh("entry" if i == 0 else f"bb{i}")
        # Block arguments become phis: first name them, then collect incoming edges.
        for block in blocks[1:]:
            for arg in block.arguments:
                self.define(arg)
        for block in blocks:  # constants first: a phi may take one as an incoming value
            for op in block.ops:
                self.fold_constant(op)
        for block in blocks:  # every result is named up front: phis refer to values defined later
            for op in block.ops:
                if op not in self.constants_ops:
                    for r in op.results:
                        self.define(r)
        incoming = self.incoming_edges(blocks)
        body = []
        for block in blocks:
            body.append(f"{self.labels[block]}:")
            for arg_index, arg in enumerate(block.arguments if block is not blocks[0] else []):
                edges = incoming.get(block, [])
                try:
                    pairs = ", ".join(f"[ {self.operand_value(vals[arg_index])}, %{self.labels[pred]} ]"
                                      for pred, vals in edges)
                    body.append(f"  {self.names[arg]} = phi {ir_type(arg.type)} {pairs}")
                except Untranslatable as e:
                    raise TranslateError(f"cannot translate @{fn.sym_name}: {e}", fn.span) from None
            for op in block.ops:
                if op in self.constants_ops:
                    continue
                try:
                    text = self.instruction(op)
                except Untranslatable as e:
                    raise TranslateError(f"cannot translate '{op.name}' to LLVM IR: {e}",
                                         op.name_span or op.span) from None
                except (KeyError, IndexError, AttributeError, TypeError) as e:
                    raise TranslateError(f"cannot translate '{op.name}' to LLVM IR: malformed op ({e})",
                                         op.name_span or op.span) from None
                body.extend("  " + line for line in text)
        abi = fn.attributes.get("mlirtext.abi")
        comment = f"; mlirtext.abi = {abi.type}\n" if isinstance(abi, TypeAttr) else ""
        personality = fn.attr("personality")
        tail = f" personality ptr @{quote_name(personality.root)}" if isinstance(personality, SymbolRefAttr) else ""
        return f"{comment}define {head_words}{ret} {name}({', '.join(params)}){tail} {{\n" + "\n".join(body) + "\n}"

    @property
    def constants_ops(self) -> set:
        return self.__dict__.setdefault("_constant_ops", set())

    def fold_constant(self, op: Operation) -> bool:
        """Constant-like ops become constant operand text; True when `op` is one."""
        name = op.name
        try:
            if name == "llvm.mlir.constant":
                text = attr_constant(op.attr("value"), op.results[0].type)
            elif name == "llvm.mlir.undef":
                text = "undef"
            elif name == "llvm.mlir.poison":
                text = "poison"
            elif name == "llvm.mlir.zero":
                text = zero_constant(op.results[0].type)
            elif name == "llvm.mlir.addressof":
                text = "@" + quote_name(op.attr("global_name").root)
            else:
                return False
        except Untranslatable as e:
            raise TranslateError(f"cannot translate '{name}' to LLVM IR: {e}", op.name_span or op.span) from None
        self.constants[op.results[0]] = text
        self.constants_ops.add(op)
        return True

    def incoming_edges(self, blocks) -> dict:
        """block -> [(predecessor block, values passed)] from every branch."""
        edges: dict = {}
        for block in blocks:
            term = block.ops[-1] if block.ops else None
            if term is None:
                continue
            for succ, values in successor_operands(term):
                edges.setdefault(succ, []).append((block, values))
        return edges

    # -- instructions -----------------------------------------------------------------------------
    def result(self, op) -> str:
        return self.names.get(op.results[0]) or self.define(op.results[0])

    def instruction(self, op: Operation) -> list[str]:
        name = op.name
        kind = name[5:]
        ops = op.operands
        if kind in INT_BINARY:
            flags = overflow(op) + ("exact " if "isExact" in op.attributes else "") + \
                ("disjoint " if "isDisjoint" in op.attributes else "")
            return [f"{self.result(op)} = {kind} {flags}{self.operand(ops[0])}, {self.operand_value(ops[1])}"]
        if kind in FLOAT_BINARY:
            return [f"{self.result(op)} = {kind} {fastmath(op)}{self.operand(ops[0])}, "
                    f"{self.operand_value(ops[1])}"]
        if kind == "fneg":
            return [f"{self.result(op)} = fneg {fastmath(op)}{self.operand(ops[0])}"]
        if kind in ("icmp", "fcmp"):
            table = ICMP_PREDICATES if kind == "icmp" else FCMP_PREDICATES
            pred = table[op.attr("predicate").value].lstrip("_")
            fm = fastmath(op) if kind == "fcmp" else ""
            return [f"{self.result(op)} = {kind} {fm}{pred} {self.operand(ops[0])}, {self.operand_value(ops[1])}"]
        if kind in _CASTS:
            flags = ("nneg " if "nonNeg" in op.attributes else "") + (overflow(op) if kind == "trunc" else "")
            return [f"{self.result(op)} = {kind} {flags}{self.operand(ops[0])} to {ir_type(op.results[0].type)}"]
        if kind == "select":
            return [f"{self.result(op)} = select {fastmath(op)}{self.operand(ops[0])}, {self.operand(ops[1])}, "
                    f"{self.operand(ops[2])}"]
        if kind == "freeze":
            return [f"{self.result(op)} = freeze {self.operand(ops[0])}"]
        handler = _HANDLERS.get(name)
        if handler is not None:
            return handler(self, op)
        if name.startswith("llvm.intr."):
            return self.intrinsic(op)
        raise Untranslatable("no translation for this op")

    def load(self, op):
        vol = "volatile " if "volatile_" in op.attributes else ""
        return [f"{self.result(op)} = load {vol}{ir_type(op.results[0].type)}, {self.operand(op.operand('addr'))}"
                f"{_align(op)}"]

    def store(self, op):
        vol = "volatile " if "volatile_" in op.attributes else ""
        return [f"store {vol}{self.operand(op.operand('value'))}, {self.operand(op.operand('addr'))}{_align(op)}"]

    def gep(self, op):
        raw = list(op.attr("rawConstantIndices").values)
        dynamic = iter(op.operands_named("dynamicIndices"))
        indices = []
        for r in raw:
            indices.append(self.operand(next(dynamic)) if r == DYNAMIC_INDEX else f"i32 {r}")
        flags = _flag(op, "noWrapFlags")
        words = ("inbounds " if flags & 1 else "nusw " if flags & 2 else "") + ("nuw " if flags & 4 else "")
        elem = ir_type(op.attr("elem_type").type)
        return [f"{self.result(op)} = getelementptr {words}{elem}, {self.operand(op.operand('base'))}, "
                + ", ".join(indices)]

    def alloca(self, op):
        elem = ir_type(op.attr("elem_type").type)
        return [f"{self.result(op)} = alloca {elem}, {self.operand(op.operand('arraySize'))}{_align(op)}"]

    def call(self, op):
        text = "call " + self.callee_text(op)
        tail = op.attr("TailCallKind")
        if isinstance(tail, OpaqueAttr) and tail.body.strip() in ("tail", "musttail", "notail"):
            text = tail.body.strip() + " " + text
        return [f"{self.result(op)} = {text}" if op.results else text]

    def invoke(self, op):
        normal, unwind = op.successors
        if op.results and any(use.op.parent is unwind for use in op.results[0].uses):
            raise Untranslatable("its result is used on the unwind path, where LLVM does not define it")
        text = f"invoke {self.callee_text(op)} to {self.label(normal)} unwind {self.label(unwind)}"
        return [f"{self.result(op)} = {text}" if op.results else text]

    def landingpad(self, op):
        clauses = []
        for v in op.operands:
            kind = "filter" if isinstance(v.type, LT.LLVMArrayType) else "catch"
            if kind == "filter" and self.operand_value(v) != "zeroinitializer":
                # LLVM wants a ConstantArray there, which its own parser never builds from i8 data
                raise Untranslatable("landingpad filter clauses other than an empty filter")
            clauses.append(f" {kind} {self.operand(v)}")
        cleanup = " cleanup" if "cleanup" in op.attributes else ""
        return [f"{self.result(op)} = landingpad {ir_type(op.results[0].type)}{cleanup}{''.join(clauses)}"]

    def resume(self, op):
        return [f"resume {self.operand(op.operand('value'))}"]

    def callee_text(self, op) -> str:
        """`fast T @f(args)` of a call or invoke: fast-math flags, callee type, callee and arguments."""
        if len(op.results) > 1:
            raise Untranslatable("calls with several results")
        callee = op.attr("callee")
        seg = op.attr("operandSegmentSizes")
        n_args = seg.values[0] if isinstance(seg, DenseArrayAttr) and seg.values else len(op.operands)
        args = list(op.operands[:n_args])
        if isinstance(callee, SymbolRefAttr):
            target = "@" + quote_name(callee.root)
            ftype = self.module.symbols.get(callee.root)
        else:
            target = self.operand_value(args[0])
            args = args[1:]
            ftype = None
        var = op.attr("var_callee_type")
        if isinstance(var, TypeAttr):
            ftype = var.type
        ret = ir_type(op.results[0].type) if op.results else "void"
        callee_type = ret
        if isinstance(ftype, LT.LLVMFunctionType) and ftype.vararg:
            callee_type = ir_type(ftype)
        return f"{call_fastmath(op)}{callee_type} {target}({', '.join(self.operand(a) for a in args)})"

    def intrinsic(self, op):
        name = intrinsic_name(op)
        kind = op.name[len("llvm.intr."):]
        if kind in ("lifetime.start", "lifetime.end") and getattr(getattr(op.operand("ptr"), "op", None), "name",
                                                                   None) != "llvm.alloca":
            raise Untranslatable("LLVM requires the pointer of a lifetime marker to come from an alloca")
        operands, bundles = self.bundles(op)
        args = [self.operand(a) for a in operands]
        immediates = immediate_arguments(op)
        args += [f"{t} {v}" for t, v in immediates]
        ret = ir_type(op.results[0].type) if op.results else "void"
        params = [ir_type(a.type) for a in operands] + [t for t, _ in immediates]
        self.module.declare_intrinsic(name, ret, params)
        text = f"call {call_fastmath(op)}{ret} @{name}({', '.join(args)}){bundles}"
        return [f"{self.result(op)} = {text}" if op.results else text]

    def bundles(self, op) -> tuple[list, str]:
        """The call operands and the ` [ "tag"(T %v, ...) ]` operand bundles of an op that has them."""
        sizes = op.attr("op_bundle_sizes")
        tags = op.attr("op_bundle_tags")
        if not isinstance(sizes, DenseArrayAttr) or not sizes.values:
            return list(op.operands), ""
        n = sum(sizes.values)
        operands = list(op.operands[:len(op.operands) - n])
        rest = list(op.operands[len(op.operands) - n:])
        parts, i = [], 0
        known = {"align", "nonnull", "dereferenceable", "dereferenceable_or_null", "noundef", "separate_storage",
                 "ignore", "cold", "noalias"}
        if op.name == "llvm.intr.assume" and any(t.value not in known for t in tags.items):
            raise Untranslatable("LLVM takes only attribute names as llvm.assume bundle tags")
        for tag, size in zip(tags.items, sizes.values):
            parts.append(f'"{tag.value}"(' + ", ".join(self.operand(v) for v in rest[i:i + size]) + ")")
            i += size
        return operands, " [ " + ", ".join(parts) + " ]"

    def extractvalue(self, op):
        pos = ", ".join(str(p) for p in op.attr("position").values)
        return [f"{self.result(op)} = extractvalue {self.operand(op.operand('container'))}, {pos}"]

    def insertvalue(self, op):
        pos = ", ".join(str(p) for p in op.attr("position").values)
        container, value = op.operand("container"), op.operand("value")
        return [f"{self.result(op)} = insertvalue {self.operand(container)}, {self.operand(value)}, "
                f"{pos}"]

    def extractelement(self, op):
        vec, pos = op.operands
        return [f"{self.result(op)} = extractelement {self.operand(vec)}, {self.operand(pos)}"]

    def insertelement(self, op):
        vec, value, pos = op.operands
        return [f"{self.result(op)} = insertelement {self.operand(vec)}, {self.operand(value)}, {self.operand(pos)}"]

    def shufflevector(self, op):
        mask = list(op.attr("mask").values)
        t = op.results[0].type
        if isinstance(t, T.VectorType) and t.scalable and t.scalable[0]:
            if any(mask):
                raise Untranslatable("a scalable shuffle mask other than all zeros")
            mask_text = f"<vscale x {len(mask)} x i32> zeroinitializer"
        else:
            mask_text = f"<{len(mask)} x i32> <" + ", ".join("i32 poison" if m < 0 else f"i32 {m}" for m in mask) + ">"
        v1, v2 = self.operand(op.operand("v1")), self.operand(op.operand("v2"))
        return [f"{self.result(op)} = shufflevector {v1}, {v2}, {mask_text}"]

    def call_intrinsic(self, op):
        name = op.attr("intrin").value
        seg = op.attr("operandSegmentSizes")
        n_args = seg.values[0] if isinstance(seg, DenseArrayAttr) and seg.values else len(op.operands)
        args = list(op.operands[:n_args])
        if len(op.results) > 1:
            raise Untranslatable("several results")
        ret = ir_type(op.results[0].type) if op.results else "void"
        self.module.declare_intrinsic(name, ret, [ir_type(a.type) for a in args])
        text = f"call {call_fastmath(op)}{ret} @{name}({', '.join(self.operand(a) for a in args)})"
        return [f"{self.result(op)} = {text}" if op.results else text]

    def atomicrmw(self, op):
        from ..dialects.llvm import ATOMIC_BIN_OPS, ORDERING_NAMES
        kind = ATOMIC_BIN_OPS[_flag(op, "bin_op")].lstrip("_")
        if kind in ("fmaximumnum", "fminimumnum"):
            raise Untranslatable(f"'atomicrmw {kind}' is newer than the LLVM that compiles it here")
        vol = "volatile " if "volatile_" in op.attributes else ""
        scope = op.attr("syncscope")
        scope = f'syncscope("{scope.value}") ' if isinstance(scope, StringAttr) else ""
        return [f"{self.result(op)} = atomicrmw {vol}{kind} {self.operand(op.operand('ptr'))}, "
                f"{self.operand(op.operand('val'))} {scope}{ORDERING_NAMES[_flag(op, 'ordering')]}{_align(op)}"]

    def cmpxchg(self, op):
        from ..dialects.llvm import ORDERING_NAMES
        words = ("weak " if "weak" in op.attributes else "") + ("volatile " if "volatile_" in op.attributes else "")
        scope = op.attr("syncscope")
        scope = f'syncscope("{scope.value}") ' if isinstance(scope, StringAttr) else ""
        ptr, cmp, new = op.operands
        return [f"{self.result(op)} = cmpxchg {words}{self.operand(ptr)}, {self.operand(cmp)}, {self.operand(new)} "
                f"{scope}{ORDERING_NAMES[_flag(op, 'success_ordering')]} "
                f"{ORDERING_NAMES[_flag(op, 'failure_ordering')]}{_align(op)}"]

    def va_arg(self, op):
        return [f"{self.result(op)} = va_arg {self.operand(op.operand('arg'))}, {ir_type(op.results[0].type)}"]

    # -- terminators ---------------------------------------------------------------------------------
    def label(self, block) -> str:
        return f"label %{self.labels[block]}"

    def br(self, op):
        return [f"br {self.label(op.successors[0])}"]

    def cond_br(self, op):
        t, f = op.successors
        return [f"br {self.operand(op.operand('condition'))}, {self.label(t)}, {self.label(f)}"]

    def switch(self, op):
        values = case_values(op.attr("case_values"))
        flag = op.operand("value")
        t = ir_type(flag.type)
        cases = " ".join(f"{t} {int(v)}, {self.label(b)}" for v, b in zip(values, op.successors[1:]))
        return [f"switch {self.operand(flag)}, {self.label(op.successors[0])} [ {cases} ]"]

    def ret(self, op):
        """llvm.return, or a func.return left in an llvm.func: of one value or none."""
        if not op.operands:
            return ["ret void"]
        if len(op.operands) > 1:
            raise Untranslatable("an LLVM function returns one value")
        (value,) = op.operands
        return [f"ret {self.operand(value)}"]

    def unreachable(self, op):
        return ["unreachable"]

    def fence(self, op):
        from ..dialects.llvm import ORDERING_NAMES
        return [f"fence {ORDERING_NAMES[_flag(op, 'ordering')]}"]


def function_type(fn: Operation) -> "LT.LLVMFunctionType":
    """The LLVM function type of an llvm.func, or of a func.func whose types are LLVM's
    (accepted as a function whose body is in the llvm dialect)."""
    attr = fn.attr("function_type")
    t = attr.type if isinstance(attr, TypeAttr) else None
    if isinstance(t, LT.LLVMFunctionType):
        return t
    if isinstance(t, T.FunctionType):
        if len(t.results) > 1:
            raise Untranslatable("a func.func with several results (LLVM functions return one value)")
        result = t.results[0] if t.results else LT.VOID
        return LT.LLVMFunctionType(result, t.inputs)
    raise Untranslatable("no function type")


def successor_operands(term: Operation) -> list:
    """(successor, operands passed to it) of a branch."""
    name = term.name
    if name == "llvm.br":
        return [(term.successors[0], list(term.operands))]
    if name == "llvm.cond_br":
        seg = term.attr("operandSegmentSizes")
        sizes = list(seg.values) if isinstance(seg, DenseArrayAttr) else [1, 0, 0]
        a, b = sizes[1], sizes[2]
        ops = term.operands
        return [(term.successors[0], list(ops[1:1 + a])), (term.successors[1], list(ops[1 + a:1 + a + b]))]
    if name == "llvm.invoke":
        seg = term.attr("operandSegmentSizes")
        sizes = list(seg.values) if isinstance(seg, DenseArrayAttr) else [len(term.operands), 0, 0, 0]
        ops, start = term.operands, sizes[0]
        return [(term.successors[0], list(ops[start:start + sizes[1]])),
                (term.successors[1], list(ops[start + sizes[1]:start + sizes[1] + sizes[2]]))]
    if name == "llvm.switch":
        seg = term.attr("operandSegmentSizes")
        sizes = list(seg.values) if isinstance(seg, DenseArrayAttr) else [1, 0, 0]
        default_n = sizes[1]
        ops = term.operands
        out = [(term.successors[0], list(ops[1:1 + default_n]))]
        case_seg = term.attr("case_operand_segments")
        case_sizes = list(case_seg.values) if isinstance(case_seg, DenseArrayAttr) else \
            [0] * (len(term.successors) - 1)
        i = 1 + default_n
        for succ, n in zip(term.successors[1:], case_sizes):
            out.append((succ, list(ops[i:i + n])))
            i += n
        return out
    return []


_HANDLERS = {
    "llvm.load": _FunctionWriter.load, "llvm.store": _FunctionWriter.store,
    "llvm.getelementptr": _FunctionWriter.gep, "llvm.alloca": _FunctionWriter.alloca,
    "llvm.call": _FunctionWriter.call, "llvm.extractvalue": _FunctionWriter.extractvalue,
    "llvm.insertvalue": _FunctionWriter.insertvalue, "llvm.extractelement": _FunctionWriter.extractelement,
    "llvm.insertelement": _FunctionWriter.insertelement, "llvm.shufflevector": _FunctionWriter.shufflevector,
    "llvm.br": _FunctionWriter.br, "llvm.cond_br": _FunctionWriter.cond_br, "llvm.switch": _FunctionWriter.switch,
    "llvm.return": _FunctionWriter.ret, "func.return": _FunctionWriter.ret, "func.call": _FunctionWriter.call, "llvm.unreachable": _FunctionWriter.unreachable,
    "llvm.fence": _FunctionWriter.fence, "llvm.call_intrinsic": _FunctionWriter.call_intrinsic,
    "llvm.atomicrmw": _FunctionWriter.atomicrmw, "llvm.cmpxchg": _FunctionWriter.cmpxchg,
    "llvm.va_arg": _FunctionWriter.va_arg, "llvm.invoke": _FunctionWriter.invoke,
    "llvm.landingpad": _FunctionWriter.landingpad, "llvm.resume": _FunctionWriter.resume,
}
