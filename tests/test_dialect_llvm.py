"""The llvm and cf dialects: custom syntax, LLVM types, verification.

Each snippet parses and verifies cleanly and our print is a fixed point;
against iree-opt, the generic form of our custom print and of our generic print
equals the generic form of the snippet, and iree-opt's own custom print reads
back with the same meaning. Invalid snippets report MLIR's message on the right
line.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from mlirtext.api import parse_and_verify, to_text
from mlirtext.dialects import llvm_types as LT
from mlirtext.ir import types as T

from .oracle import custom_forms, generic_form, generic_forms

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "llvm-project"

SNIPPETS = {
    "arith": """
llvm.func @arith(%a: i32, %b: i32, %x: f32, %y: f32, %v: vector<4xf32>) -> i32 {
  %0 = llvm.add %a, %b : i32
  %1 = llvm.sub %a, %b overflow<nsw> : i32
  %2 = llvm.mul %a, %b overflow<nsw, nuw> : i32
  %3 = llvm.sdiv exact %a, %b : i32
  %4 = llvm.or disjoint %a, %b : i32
  %5 = llvm.shl %a, %b overflow<nuw> : i32
  %6 = llvm.ashr %a, %b : i32
  %7 = llvm.xor %a, %b : i32
  %8 = llvm.fadd %x, %y : f32
  %9 = llvm.fmul %x, %y fastmath<fast> : f32
  %10 = llvm.fdiv %v, %v fastmath<nnan, ninf> : vector<4xf32>
  %11 = llvm.fneg %x : f32
  %12 = llvm.freeze %a : i32
  llvm.return %0 : i32
}
""",
    "compare_select_cast": """
llvm.func @cmp(%a: i32, %b: i64, %x: f32, %p: !llvm.ptr, %vp: vector<2x!llvm.ptr>) {
  %0 = llvm.icmp "slt" %a, %a : i32
  %1 = llvm.icmp "eq" %p, %p : !llvm.ptr
  %2 = llvm.icmp "ne" %vp, %vp : vector<2x!llvm.ptr>
  %3 = llvm.fcmp "olt" %x, %x fastmath<fast> : f32
  %4 = llvm.fcmp "_true" %x, %x : f32
  %5 = llvm.select %0, %a, %a : i1, i32
  %6 = llvm.sext %a : i32 to i64
  %7 = llvm.zext nneg %a : i32 to i64
  %8 = llvm.trunc %b overflow<nsw> : i64 to i32
  %9 = llvm.sitofp %a : i32 to f32
  %10 = llvm.fptoui %x : f32 to i32
  %11 = llvm.fpext %x : f32 to f64
  %12 = llvm.bitcast %a : i32 to f32
  %13 = llvm.ptrtoint %p : !llvm.ptr to i64
  %14 = llvm.inttoptr %b : i64 to !llvm.ptr
  %15 = llvm.addrspacecast %p : !llvm.ptr to !llvm.ptr<1>
  llvm.return
}
""",
    "memory": """
llvm.func @mem(%p: !llvm.ptr, %n: i64, %v: f32, %i: i32) {
  %0 = llvm.alloca %n x f32 {alignment = 16 : i64} : (i64) -> !llvm.ptr
  %1 = llvm.getelementptr %0[%n] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %2 = llvm.getelementptr inbounds|nuw %p[0, 1, %n] : (!llvm.ptr, i64) -> !llvm.ptr, !llvm.struct<(i32, array<4 x f32>)>
  %3 = llvm.load %1 : !llvm.ptr -> f32
  %4 = llvm.load volatile %1 <alignment = 4> : !llvm.ptr -> f32
  %5 = llvm.load %1 atomic syncscope("singlethread") acquire <alignment = 4> : !llvm.ptr -> f32
  llvm.store %v, %1 : f32, !llvm.ptr
  llvm.store volatile %v, %1 atomic release <alignment = 4> : f32, !llvm.ptr
  %6 = llvm.atomicrmw add %p, %i monotonic : !llvm.ptr, i32
  %7 = llvm.cmpxchg %p, %i, %i acq_rel monotonic : !llvm.ptr, i32
  llvm.fence syncscope("agent") seq_cst
  llvm.return
}
""",
    "control_flow": """
llvm.func @cfg(%c: i1, %a: i32) -> i32 {
  llvm.cond_br %c weights([3, 1]), ^bb1(%a : i32), ^bb2
^bb1(%x: i32):
  llvm.switch %x : i32, ^bb2 [
    0: ^bb1(%x : i32),
    -7: ^bb3(%x, %x : i32, i32)
  ]
^bb2:
  llvm.br ^bb3(%a, %a : i32, i32)
^bb3(%p: i32, %q: i32):
  llvm.return %p : i32
}
llvm.func @unreachable() {
  llvm.unreachable
}
""",
    "calls_functions_globals": """
llvm.mlir.global internal constant @g(42 : i32) {addr_space = 0 : i32, alignment = 4 : i64} : i32
llvm.mlir.global private unnamed_addr constant @str("hi\\00") {addr_space = 0 : i32}
llvm.mlir.global external @init() {addr_space = 0 : i32} : !llvm.struct<(i32, ptr)> {
  %0 = llvm.mlir.undef : !llvm.struct<(i32, ptr)>
  %1 = llvm.mlir.constant(7 : i32) : i32
  %2 = llvm.insertvalue %1, %0[0] : !llvm.struct<(i32, ptr)>
  %3 = llvm.mlir.addressof @g : !llvm.ptr
  %4 = llvm.insertvalue %3, %2[1] : !llvm.struct<(i32, ptr)>
  llvm.return %4 : !llvm.struct<(i32, ptr)>
}
llvm.func @printf(!llvm.ptr, ...) -> i32
llvm.func @ext(i32 {llvm.noundef}) -> (i32 {llvm.signext})
llvm.func internal fastcc @callee(%a: i32, %b: f64) -> !llvm.struct<(i32, f64)> attributes {passthrough = ["noinline"]} {
  %0 = llvm.mlir.zero : !llvm.struct<(i32, f64)>
  %1 = llvm.insertvalue %a, %0[0] : !llvm.struct<(i32, f64)>
  %2 = llvm.insertvalue %b, %1[1] : !llvm.struct<(i32, f64)>
  llvm.return %2 : !llvm.struct<(i32, f64)>
}
llvm.func @caller(%a: i32, %b: f64) -> f64 {
  %0 = llvm.call fastcc @callee(%a, %b) : (i32, f64) -> !llvm.struct<(i32, f64)>
  %1 = llvm.extractvalue %0[1] : !llvm.struct<(i32, f64)>
  %2 = llvm.mlir.addressof @str : !llvm.ptr
  %3 = llvm.call @printf(%2, %a) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr, i32) -> i32
  %4 = llvm.mlir.addressof @callee : !llvm.ptr
  %5 = llvm.call tail %4(%a, %b) : !llvm.ptr, (i32, f64) -> !llvm.struct<(i32, f64)>
  %6 = llvm.call @ext(%a) : (i32 {llvm.noundef}) -> (i32 {llvm.signext})
  llvm.return %1 : f64
}
""",
    "constants_vectors_intrinsics": """
llvm.func @vec(%v: vector<4xf32>, %i: i32, %x: f32, %s: vector<[4]xf32>) -> f32 {
  %0 = llvm.mlir.constant(1 : i64) : i64
  %1 = llvm.mlir.constant(dense<1.000000e+00> : vector<4xf32>) : vector<4xf32>
  %2 = llvm.mlir.constant("abc") : !llvm.array<3 x i8>
  %3 = llvm.mlir.poison : vector<4xf32>
  %4 = llvm.extractelement %v[%i : i32] : vector<4xf32>
  %5 = llvm.insertelement %x, %v[%i : i32] : vector<4xf32>
  %6 = llvm.shufflevector %v, %1 [0, 1, -1, 7, 2] : vector<4xf32>
  %7 = llvm.intr.exp(%x) : (f32) -> f32
  %8 = llvm.intr.fma(%x, %x, %x) fastmath<contract> : (f32, f32, f32) -> f32
  %9 = llvm.intr.sqrt(%v) : (vector<4xf32>) -> vector<4xf32>
  %10 = llvm.intr.powi(%x, %i) : (f32, i32) -> f32
  %11 = llvm.intr.smax(%i, %i) : (i32, i32) -> i32
  %12 = llvm.intr.vector.reduce.fmax(%v) fastmath<nnan> : (vector<4xf32>) -> f32
  %13 = llvm.intr.vector.insert %v, %s[0] : vector<4xf32> into vector<[4]xf32>
  %14 = "llvm.intr.ctlz"(%i) <{is_zero_poison = false}> : (i32) -> i32
  llvm.return %4 : f32
}
""",
    "types": """
llvm.func @types(!llvm.ptr<3>, !llvm.array<4 x array<2 x i8>>, !llvm.struct<packed (i8, i32)>, !llvm.struct<"named", (i32, ptr<1>)>, vector<[4]xf32>) -> !llvm.void
llvm.func @opaque() -> !llvm.struct<"opaque_t", opaque>
llvm.func @fptr() -> !llvm.ptr
""",
    "cf": """
func.func @cf(%c: i1, %a: i32, %t: tensor<i32>) -> tensor<i32> {
  cf.assert %c, "must hold"
  cf.cond_br %c weights([5, 1]), ^bb1(%t : tensor<i32>), ^bb2
^bb1(%x: tensor<i32>):
  cf.switch %a : i32, [
    default: ^bb2,
    4: ^bb1(%x : tensor<i32>),
    -1: ^bb3(%x : tensor<i32>)
  ]
^bb2:
  cf.br ^bb3(%t : tensor<i32>)
^bb3(%r: tensor<i32>):
  return %r : tensor<i32>
}
""",
}


def _parsed(text: str):
    result = parse_and_verify(text, "<snippet>")
    problems = "\n".join(d.format() for d in result.diagnostics)
    assert result.ok and not result.diagnostics, problems
    return result


@pytest.mark.parametrize("name", list(SNIPPETS))
def test_snippet_round_trip_is_a_fixed_point(name):
    printed = to_text(_parsed(SNIPPETS[name]))
    again = to_text(_parsed(printed))
    assert again == printed
    assert '"llvm.func"' not in printed and '"llvm.call"' not in printed and '"cf.' not in printed


def test_llvm_types_are_structured_and_canonical():
    r = _parsed("llvm.func @f(!llvm.array<4xi32>, !llvm.array<4 x i32>, !llvm.struct<(!llvm.ptr, i32)>)")
    ftype = r.module.regions[0].blocks[0].ops[0].attributes["function_type"].type
    assert isinstance(ftype, LT.LLVMFunctionType) and LT.is_void(ftype.result)
    a, b, s = ftype.params
    assert a == b and isinstance(a, LT.LLVMArrayType) and a.size == 4 and a.element == T.i32
    assert str(s) == "!llvm.struct<(ptr, i32)>" and s.body[0] == LT.PTR
    assert str(LT.LLVMFunctionType(LT.VOID, (T.i32,), True)) == "!llvm.func<void (i32, ...)>"
    assert LT.LLVMPointerType(0) == T.DialectType("llvm.ptr")
    assert str(LT.parse_llvm_type('llvm.struct<"a b", packed (i8)>')) == '!llvm.struct<"a b", packed (i8)>'
    assert LT.parse_llvm_type("llvm.vec<4 x ptr>") is None  # unknown to 3.13: stays verbatim


def test_older_spellings_print_in_the_newer_form():
    text = """
llvm.func @f(%p: !llvm.ptr, %x: f32) {
  %0 = llvm.load %p atomic monotonic {alignment = 4 : i64} : !llvm.ptr -> f32
  %1 = llvm.fadd %x, %x {fastmathFlags = #llvm.fastmath<nnan,ninf>} : f32
  %2 = llvm.fadd %x, %x {fastmathFlags = #llvm.fastmath<none>} : f32
  %3 = llvm.mlir.constant(42) : i47
  %4 = llvm.mlir.constant(1.5) : f32
  %5 = llvm.getelementptr %p[1] {inbounds} : (!llvm.ptr) -> !llvm.ptr, f32
  llvm.return
}
"""
    printed = to_text(_parsed(text))
    assert "llvm.load %p atomic monotonic <alignment = 4> : !llvm.ptr -> f32" in printed
    assert "llvm.fadd %x, %x fastmath<nnan, ninf> : f32" in printed
    assert "%2 = llvm.fadd %x, %x : f32" in printed
    assert "llvm.mlir.constant(42 : i47) : i47" in printed
    assert "llvm.mlir.constant(1.5 : f32) : f32" in printed
    assert "llvm.getelementptr inbounds %p[1]" in printed


def test_branch_operands_are_split_by_successor():
    r = _parsed(SNIPPETS["control_flow"])
    func = r.module.regions[0].blocks[0].ops[0]
    cond_br = func.regions[0].blocks[0].ops[-1]
    assert cond_br.name == "llvm.cond_br" and list(cond_br.attributes["operandSegmentSizes"].values) == [1, 1, 0]
    from mlirtext.dialects.llvm import successor_groups
    switch = func.regions[0].blocks[1].ops[-1]
    assert [len(g) for g in successor_groups(switch)] == [0, 1, 2]


INVALID = [
    ("llvm.func @f(%a: i32) {\n  %0 = llvm.load %a : i32 -> f32\n  llvm.return\n}",
     2, "operand #0 must be LLVM pointer type, but got 'i32'"),
    ("llvm.func @f(%x: f32) {\n  %0 = llvm.add %x, %x : f32\n  llvm.return\n}",
     2, "operand #0 must be signless integer"),
    ("llvm.func @f(%p: !llvm.ptr, %i: i64) {\n"
     "  %0 = llvm.getelementptr %p[0, %i] : (!llvm.ptr, i64) -> !llvm.ptr, !llvm.struct<(i32, f32)>\n"
     "  llvm.return\n}", 2, "expected index 1 indexing a struct to be constant"),
    ("llvm.func @f(%p: !llvm.ptr, %i: i32) {\n"
     "  %0 = llvm.getelementptr %p[%i, 1, 2] : (!llvm.ptr, i32) -> !llvm.ptr, !llvm.struct<(i32, i32)>\n"
     "  llvm.return\n}", 2, "type 'i32' cannot be indexed (index #2)"),
    ("llvm.func @g(i32) -> i32\nllvm.func @f(%a: f32) {\n  %0 = llvm.call @g(%a) : (f32) -> i32\n"
     "  llvm.return\n}", 3, "operand type mismatch for operand 0: 'f32' != 'i32'"),
    ("llvm.func @g(i32) -> i32\nllvm.func @f(%a: i32) {\n  %0 = llvm.call @g(%a, %a) : (i32, i32) -> i32\n"
     "  llvm.return\n}", 3, "incorrect number of operands (2) for callee (expecting: 1)"),
    ("llvm.func @f() {\n  llvm.call @nope() : () -> ()\n  llvm.return\n}",
     2, "'nope' does not reference a valid LLVM function"),
    ("llvm.func @f(%a: i32) -> i64 {\n  llvm.return %a : i32\n}", 2, "mismatching result types"),
    ("llvm.func @f(%a: i32) {\n  llvm.return %a : i32\n}", 2, "expected no operands"),
    ("llvm.func internal @f()", 1, "external functions must have 'external' or 'extern_weak' linkage"),
    ("llvm.func @f(%a: i32) {\n  llvm.br ^bb1(%a : i32)\n^bb1(%b: i64):\n  llvm.return\n}",
     2, "type mismatch for bb argument #0 of successor #0"),
    ("llvm.func @f(%a: i32) {\n  llvm.br ^bb1\n^bb1(%b: i32):\n  llvm.return\n}",
     2, "branch has 0 operands for successor #0, but target block has 1"),
    ("func.func @f(%a: i32) {\n  cf.br ^bb1(%a : i32)\n^bb1:\n  return\n}",
     2, "branch has 1 operands for successor #0, but target block has 0"),
    ("llvm.func @f(%s: !llvm.struct<(i32, f32)>) {\n  %0 = llvm.extractvalue %s[2] : !llvm.struct<(i32, f32)>\n"
     "  llvm.return\n}", 2, "position out of bounds: 2"),
    ("llvm.func @f(%s: !llvm.struct<(i32, f32)>, %x: f64) {\n"
     "  %0 = llvm.insertvalue %x, %s[1] : !llvm.struct<(i32, f32)>\n  llvm.return\n}",
     2, "expects different type than prior uses"),
    ("llvm.func @f(%a: i32) {\n  %0 = llvm.icmp \"lt\" %a, %a : i32\n  llvm.return\n}",
     2, "'lt' is an incorrect value of the 'predicate' attribute"),
    ("llvm.func @f(%p: !llvm.ptr) {\n  %0 = llvm.load %p atomic monotonic : !llvm.ptr -> i32\n  llvm.return\n}",
     2, "expected alignment for atomic access"),
    ("llvm.func @f(%a: i64) {\n  %0 = llvm.sext %a : i64 to i32\n  llvm.return\n}",
     2, "integer width of the output type is smaller or equal to the integer width of the input type"),
    ("llvm.func @f(%p: !llvm.ptr) {\n  %0 = llvm.bitcast %p : !llvm.ptr to !llvm.ptr<1>\n  llvm.return\n}",
     2, "cannot cast pointers of different address spaces"),
    ("llvm.func @f(%x: f32) {\n  %0 = llvm.intr.powi(%x, %x) : (f32, f32) -> f32\n  llvm.return\n}",
     2, "operand #1 must be signless integer, but got 'f32'"),
    ("llvm.func @f() {\n  %0 = llvm.mlir.constant(\"abc\") : !llvm.array<4 x i8>\n  llvm.return\n}",
     2, "expected array type of 3 i8 elements for the string constant"),
    ("llvm.func @f() {\n  %0 = llvm.mlir.constant(dense<1> : vector<4xi32>) : vector<2xi32>\n  llvm.return\n}",
     2, "type and attribute have a different number of elements: 2 vs. 4"),
    ("llvm.func @v(i32, ...)\nllvm.func @f(%a: i32) {\n  llvm.call @v(%a, %a) : (i32, i32) -> ()\n"
     "  llvm.return\n}", 3, "missing var_callee_type attribute for vararg call"),
    ("llvm.func @f(%p: !llvm.ptr) {\n  %0 = llvm.load %p atomic release <alignment = 4> : !llvm.ptr -> i32\n"
     "  llvm.return\n}", 2, "unsupported ordering 'release'"),
    ("llvm.mlir.global internal @g() : i32 {\n  %0 = llvm.mlir.constant(1 : i64) : i64\n"
     "  llvm.return %0 : i64\n}", 3, "mismatching result types"),
]


@pytest.mark.parametrize("text,line,message", INVALID)
def test_invalid_ops_are_reported(text, line, message):
    result = parse_and_verify(text, "<invalid>")
    got = [(d.span.line_col[0] if d.span is not None else None, d.message) for d in result.diagnostics]
    assert any(message in m for _, m in got), got
    assert any(ln == line for ln, m in got if message in m), got


def test_corpus_llvm_files_parse_verify_and_reprint():
    for name in ("mlir__test__Dialect__LLVMIR__roundtrip.mlir", "mlir__test__Target__LLVMIR__llvmir-types.mlir"):
        path = CORPUS / name
        if not path.exists():
            pytest.skip("corpus not present")
        for chunk in path.read_text().split("\n// -----\n"):
            printed = to_text(_parsed(chunk))
            assert to_text(_parsed(printed)) == printed


@pytest.mark.oracle
def test_same_meaning_as_iree_opt():
    names = list(SNIPPETS)
    results = {n: _parsed(SNIPPETS[n]) for n in names}
    ours = {generic: [to_text(results[n], generic=generic) for n in names] for generic in (False, True)}
    texts = [SNIPPETS[n] for n in names] + ours[False] + ours[True]
    forms = generic_forms(texts)
    if forms is None:
        for n in names:
            out, err = generic_form(SNIPPETS[n])
            assert out is not None, f"{n}: iree-opt rejects the snippet itself:\n{err}"
        for generic in (False, True):
            for n, text in zip(names, ours[generic]):
                out, err = generic_form(text)
                assert out is not None, f"{n}: iree-opt rejects our print (generic={generic}):\n{err}\n{text}"
        pytest.fail("iree-opt rejects the batch")
    k = len(names)
    for generic, printed in ((False, forms[k:2 * k]), (True, forms[2 * k:])):
        for n, want, got, text in zip(names, forms[:k], printed, ours[generic]):
            assert got == want, f"{n}: our print (generic={generic}) means something else:\n{text}"


@pytest.mark.oracle
def test_reads_iree_opt_custom_print():
    names = list(SNIPPETS)
    theirs = custom_forms([SNIPPETS[n] for n in names])
    assert theirs is not None
    ours = []
    for n, text in zip(names, theirs):
        result = parse_and_verify(text, "<iree-opt output>")
        problems = "\n".join(d.format() for d in result.diagnostics)
        assert result.ok and not result.diagnostics, f"{n}: mlirtext rejects iree-opt's print:\n{problems}\n{text}"
        ours.append(to_text(result))
    forms = generic_forms(theirs + ours)
    assert forms is not None
    k = len(names)
    for n, want, got, text in zip(names, forms[:k], forms[k:], ours):
        assert got == want, f"{n}: iree-opt's print, read and printed by mlirtext, means something else:\n{text}"


@pytest.mark.oracle
def test_reads_iree_opt_generic_print():
    """iree-opt's generic form (every property spelled out) reads back and prints in our
    custom form with the same meaning."""
    names = list(SNIPPETS)
    theirs = generic_forms([SNIPPETS[n] for n in names])
    assert theirs is not None
    ours = [to_text(_parsed(text)) for text in theirs]
    for n, text in zip(names, ours):
        assert '"llvm.func"' not in text and '"llvm.call"' not in text, f"{n}: generic fallback used:\n{text}"
    forms = generic_forms(ours)
    assert forms is not None
    for n, want, got, text in zip(names, theirs, forms, ours):
        assert got == want, f"{n}: iree-opt's generic print, read by mlirtext, means something else:\n{text}"
