"""scf, memref, check, util and flow: the dialects around the main ones in the corpus tests.

Valid snippets parse, verify, print as a fixed point and keep their meaning: the
generic form iree-opt gives for our print (custom and generic) equals the one it
gives for the original. StableHLO's `check` ops (iree-opt knows IREE's check
dialect, which spells them differently) are checked without the oracle: they
print back in StableHLO's spelling and read again. Invalid snippets get MLIR's
diagnostic.
"""
from __future__ import annotations

import pytest

from mlirtext.api import parse_and_verify, to_text

from .oracle import custom_forms, generic_form, generic_forms


def _fn(args: str, body: str, results: str = "") -> str:
    lines = "\n".join("  " + line for line in body.strip("\n").split("\n"))
    res = f" -> {results}" if results else ""
    return f"func.func @f({args}){res} {{\n{lines}\n}}\n"


SNIPPETS: dict[str, str] = {
    # ---- scf -------------------------------------------------------------------------------
    "scf_for_iter_args": _fn("%lb: index, %ub: index, %s: index, %init: f32", """
%r = scf.for %i = %lb to %ub step %s iter_args(%acc = %init) -> (f32) {
  %x = arith.addf %acc, %acc : f32
  scf.yield %x : f32
} {foo}
return %r : f32""", "f32"),
    "scf_for_implicit_yield": _fn("%lb: index, %m: memref<?xf32>, %v: f32", """
scf.for %i = %lb to %lb step %lb {
  memref.store %v, %m[%i] : memref<?xf32>
}
scf.for %i = %lb to %lb step %lb {
}
return"""),
    "scf_for_i32_unsigned": _fn("%a: i32", """
scf.for %i = %a to %a step %a : i32 {
}
scf.for unsigned %j = %a to %a step %a : i32 {
}
return"""),
    "scf_for_two_iter_args": _fn("%c: index, %x: f32, %y: i32", """
%r:2 = scf.for %i = %c to %c step %c iter_args(%a = %x, %b = %y) -> (f32, i32) {
  scf.yield %a, %b : f32, i32
}
return"""),
    "scf_if": _fn("%c: i1, %x: f32, %y: f32, %m: memref<f32>", """
%r = scf.if %c -> (f32) {
  scf.yield %x : f32
} else {
  scf.yield %y : f32
}
%s = scf.if %c -> f32 {
  scf.yield %x : f32
} else {
  scf.yield %y : f32
}
scf.if %c {
  memref.store %x, %m[] : memref<f32>
}
scf.if %c {
} else {
  memref.store %y, %m[] : memref<f32>
} {bar}
return"""),
    "scf_while": _fn("%x: i32, %c: i1", """
%w:2 = scf.while (%a = %x, %b = %x) : (i32, i32) -> (i32, i32) {
  scf.condition(%c) %a, %b : i32, i32
} do {
^bb0(%a2: i32, %b2: i32):
  scf.yield %a2, %b2 : i32, i32
} attributes {baz}
return"""),
    "scf_execute_region": _fn("%x: i32", """
%e = scf.execute_region -> i32 {
  scf.yield %x : i32
}
%n = scf.execute_region -> i32 no_inline {
  scf.yield %x : i32
}
return"""),
    "scf_index_switch": _fn("%i: index, %x: f32", """
%r = scf.index_switch %i -> f32
case 2 {
  scf.yield %x : f32
}
case 5 {
  scf.yield %x : f32
}
default {
  scf.yield %x : f32
}
scf.index_switch %i
default {
  scf.yield
}
return"""),
    "scf_parallel_reduce": _fn("%lb: index, %ub: index, %s: index, %init: f32, %m: memref<?xf32>", """
scf.parallel (%i, %j) = (%lb, %lb) to (%ub, %ub) step (%s, %s) {
  memref.store %init, %m[%i] : memref<?xf32>
}
%red = scf.parallel (%i) = (%lb) to (%ub) step (%s) init (%init) -> f32 {
  %v = memref.load %m[%i] : memref<?xf32>
  scf.reduce(%v : f32) {
  ^bb0(%l: f32, %r: f32):
    %z = arith.addf %l, %r : f32
    scf.reduce.return %z : f32
  }
}
return"""),
    "scf_generic": _fn("%c: index", """
"scf.for"(%c, %c, %c) ({
^bb0(%i: index):
  "scf.yield"() : () -> ()
}) : (index, index, index) -> ()
return"""),
    # ---- memref ---------------------------------------------------------------------------
    "memref_alloc_load_store": _fn("%i: index, %v: f32", """
%a = memref.alloc(%i, %i) : memref<?x?xf32>
%b = memref.alloca() : memref<4xf32>
%c = memref.alloc(%i)[%i] : memref<?xf32, affine_map<(d0)[s0] -> (d0 + s0)>>
%l = memref.load %a[%i, %i] : memref<?x?xf32>
memref.store %v, %a[%i, %i] : memref<?x?xf32>
%d = memref.dim %a, %i : memref<?x?xf32>
%r = memref.rank %a : memref<?x?xf32>
memref.dealloc %a : memref<?x?xf32>
return"""),
    "memref_views": _fn("%m: memref<?x?xf32>, %t: memref<4x6xf32>, %b: memref<?xi8>, %i: index", """
%c = memref.cast %m : memref<?x?xf32> to memref<*xf32>
memref.copy %t, %t : memref<4x6xf32> to memref<4x6xf32>
%s = memref.subview %m[0, %i] [%i, 1] [1, 1] : memref<?x?xf32> to memref<?xf32, strided<[?], offset: ?>>
%r = memref.reinterpret_cast %t to offset: [0], sizes: [%i, 6], strides: [6, 1] : memref<4x6xf32> to memref<?x6xf32, strided<[6, 1]>>
%cs = memref.collapse_shape %t [[0, 1]] : memref<4x6xf32> into memref<24xf32>
%es = memref.expand_shape %t [[0, 1], [2]] output_shape [2, 2, 6] : memref<4x6xf32> into memref<2x2x6xf32>
%v = memref.view %b[%i][%i, %i] : memref<?xi8> to memref<?x?xf32>
%tr = memref.transpose %m (i, j) -> (j, i) : memref<?x?xf32> to memref<?x?xf32, affine_map<(d0, d1)[s0] -> (d1 * s0 + d0)>>
%s2 = memref.subview %t[1, 1] [1, 2] [1, 2] : memref<4x6xf32> to memref<2xf32, strided<[2], offset: 7>>
%s3 = memref.subview %t[%i, 1] [2, 2] [1, 2] : memref<4x6xf32> to memref<2x2xf32, strided<[6, 2], offset: ?>>
%ms = memref.memory_space_cast %t : memref<4x6xf32> to memref<4x6xf32, 1>
return"""),
    "memref_metadata_atomic": _fn("%m: memref<?x?xf32>, %i: index, %v: f32", """
%base, %off, %sz:2, %st:2 = memref.extract_strided_metadata %m : memref<?x?xf32> -> memref<f32>, index, index, index, index, index
%p = memref.extract_aligned_pointer_as_index %m : memref<?x?xf32> -> index
%al = memref.assume_alignment %m, 16 : memref<?x?xf32>
%at = memref.atomic_rmw addf %v, %m[%i, %i] : (f32, memref<?x?xf32>) -> f32
memref.prefetch %m[%i, %i], read, locality<3>, data : memref<?x?xf32>
return"""),
    "memref_globals": """memref.global "private" constant @c : memref<2xf32> = dense<[1.0, 2.0]>
memref.global @u : memref<2xf32> = uninitialized
memref.global "private" @e : memref<2xi32>
func.func @f() -> memref<2xf32> {
  %g = memref.get_global @c : memref<2xf32>
  return %g : memref<2xf32>
}
""",
    "memref_alignment_nontemporal": """memref.global "private" @x : memref<2xf32> = dense<0.0> alignment = 64
func.func @f(%m: memref<4xf32>, %i: index, %v: f32) {
  %a = memref.alloc() alignment = 64 : memref<4xf32>
  %l = memref.load %m[%i] nontemporal(true) : memref<4xf32>
  memref.store %v, %m[%i] nontemporal(true) : memref<4xf32>
  %l2 = memref.load %m[%i] alignment(16) : memref<4xf32>
  return
}
""",
    # ---- util -----------------------------------------------------------------------------
    "util_ops": _fn("%a: tensor<2xf32>", """
%0 = util.unfoldable_constant dense<[1.0, 2.0]> : tensor<2xf32>
%1 = util.unfoldable_constant 16 : index
%2 = util.unfoldable_constant 1
%3 = util.optimization_barrier %0 : tensor<2xf32>
%4:2 = util.optimization_barrier %0, %1 : tensor<2xf32>, index
%5 = util.optimization_barrier {foo} %a : tensor<2xf32>
return"""),
    # ---- flow (IREE) ---------------------------------------------------------------------------
    "flow_tensor_ops": _fn("%t: tensor<?x?xi32>, %h: index, %w: index, %b: tensor<4xi8>, %d: tensor<?xi8>", """
%0 = flow.tensor.dynamic_constant dense<[[2], [4]]> : tensor<2x1xi32> -> tensor<?x1xi32>
%1 = flow.tensor.tie_shape %t : tensor<?x?xi32>{%h, %w}
%2 = flow.tensor.bitcast %b : tensor<4xi8> -> tensor<8xf4E2M1FN>
%3 = flow.tensor.bitcast %d : tensor<?xi8>{%h} -> tensor<?xi16>{%w}
%4 = flow.tensor.dynamic_constant {bar} dense<1> : tensor<2xi32> -> tensor<?xi32>
return"""),
    # ---- check (IREE's spelling) ---------------------------------------------------------------
    "check_iree": _fn("%a: tensor<2xf32>, %b: tensor<2xf32>, %t: tensor<2xi32>, %i: i32, %d: !hal.device", """
check.expect_eq(%t, %t) : tensor<2xi32>
check.expect_eq_const(%t, dense<[1, 2]> : tensor<2xi32>) : tensor<2xi32>
check.expect_almost_eq(%a, %b) : tensor<2xf32>
check.expect_almost_eq(%a, %b, atol 1.0e-2, rtol 1.0e-3) : tensor<2xf32>
check.expect_almost_eq_const(%a, dense<[1.0, 2.0]> : tensor<2xf32>) : tensor<2xf32>
check.expect_almost_eq_const(%a, dense<1.0> : tensor<2xf32>, atol 0.5) : tensor<2xf32>
check.expect_true(%i) : i32
check.expect_false(%i) : i32
check.expect_all_true(%t) : tensor<2xi32>
check.expect_eq<%d>(%t, %t) {foo} : tensor<2xi32>
return"""),
}

#: StableHLO interpreter's check ops (iree-opt rejects them: IREE's check dialect wins the prefix).
STABLEHLO_CHECK: dict[str, str] = {
    "eq": _fn("%a: tensor<3xi64>, %b: tensor<3xi64>", "check.expect_eq %a, %b : tensor<3xi64>\nreturn"),
    "eq_const": _fn("%a: tensor<3xi64>", "check.expect_eq_const %a, dense<[-2, 0, 2]> : tensor<3xi64>\nreturn"),
    "almost_eq": _fn("%a: tensor<f64>, %b: tensor<f64>",
                     "check.expect_almost_eq %a, %b : tensor<f64>\n"
                     "check.expect_almost_eq %a, %b, tolerance = 0.1 : tensor<f64>\nreturn"),
    "almost_eq_const": _fn("%a: tensor<2xcomplex<f32>>", "check.expect_almost_eq_const %a, "
                           "dense<[(1.5, 2.5), (3.5, 4.5)]> : tensor<2xcomplex<f32>>\nreturn"),
    "almost_eq_const_tolerance": _fn("%a: tensor<f64>",
                                     "check.expect_almost_eq_const %a, dense<5.1> : tensor<f64> "
                                     "{tolerance = 0.1 : f64}\nreturn"),
    "close": _fn("%a: tensor<f16>, %b: tensor<f16>",
                 "check.expect_close %a, %b, max_ulp_difference = 3 : tensor<f16>, tensor<f16>\n"
                 "check.expect_close %a, %b, max_ulp_difference = 3, min_ulp_difference = 1 : "
                 "tensor<f16>, tensor<f16>\nreturn"),
    "serialized_eq": _fn("%a: tensor<3x1xi1>",
                         'check.expect_serialized_eq %a, probe_id = "probe_i1" : tensor<3x1xi1>\n'
                         'check.expect_serialized_eq %a, probe_id = "p", iter = 1 : tensor<3x1xi1>\nreturn'),
    "interpreter_probe_print": _fn("%a: tensor<3x1xi1>", """
%p = interpreter.probe %a, probe_id = "probe_i1" : tensor<3x1xi1>
check.expect_serialized_eq %p, probe_id = "probe_i1" : tensor<3x1xi1>
interpreter.print %p : tensor<3x1xi1>
return"""),
    "multi_result_use": _fn("%a: tensor<2xi32>", """
%r:2 = util.optimization_barrier %a, %a : tensor<2xi32>, tensor<2xi32>
check.expect_eq_const %r#1, dense<[1, 2]> : tensor<2xi32>
return"""),
}

#: (snippet, the diagnostic message expected, as MLIR words it)
INVALID: dict[str, tuple[str, str]] = {
    "scf_yield_outside": (_fn("", "scf.yield\nreturn"),
                          "'scf.yield' op expects parent op to be one of 'scf.execute_region, scf.for, "
                          "scf.if, scf.index_switch, scf.while'"),
    "scf_for_missing_yield_values": (_fn("%c: index", """
%r = scf.for %i = %c to %c step %c iter_args(%a = %c) -> index {
}
return"""), "along control flow edge from Operation scf.yield to Region #0: region branch point has 0 "
                "operands, but region successor needs 1 inputs"),
    "scf_for_yield_type": (_fn("%c: index, %b: i1", """
%r = scf.for %i = %c to %c step %c iter_args(%a = %c) -> index {
  scf.yield %b : i1
}
return"""), "successor operand type #0 'i1' should match successor input type #0 'index'"),
    "scf_if_no_else": (_fn("%c: i1, %x: f32", """
%r = scf.if %c -> f32 {
  scf.yield %x : f32
}
return"""), "'scf.if' op must have an else block if defining values"),
    "scf_if_yield_type": (_fn("%c: i1, %x: f32", """
%r = scf.if %c -> f32 {
  scf.yield %x : f32
} else {
  scf.yield %c : i1
}
return"""), "along control flow edge from Operation scf.yield to Operation scf.if: successor operand type "
                "#0 'i1' should match successor input type #0 'f32'"),
    "scf_condition_outside": (_fn("%c: i1", "scf.condition(%c)\nreturn"),
                              "'scf.condition' op expects parent op 'scf.while'"),
    "memref_load_indices": (_fn("%m: memref<4x4xf32>, %i: index", """
%v = memref.load %m[%i] : memref<4x4xf32>
return"""), "incorrect number of indices for load, expected 2 but got 1"),
    "memref_store_indices": (_fn("%m: memref<4x4xf32>, %i: index, %v: f32", """
memref.store %v, %m[%i] : memref<4x4xf32>
return"""), "store index operand count not equal to memref rank"),
    "memref_alloc_dims": (_fn("%i: index", """
%a = memref.alloc() : memref<?xf32>
return"""), "dimension operand count does not equal memref dynamic dimension count"),
    "memref_cast_incompatible": (_fn("%m: memref<4xf32>", """
%c = memref.cast %m : memref<4xf32> to memref<4xi32>
return"""), "operand type 'memref<4xf32>' and result type 'memref<4xi32>' are cast incompatible"),
    "memref_subview_sizes": (_fn("%m: memref<4xf32>", """
%s = memref.subview %m[0] [2] [1] : memref<4xf32> to memref<3xf32>
return"""), "expected result type to be 'memref<2xf32, strided<[1]>>' or a rank-reduced version. (mismatch "
                "of result sizes), but got 'memref<3xf32>'"),
    "memref_subview_layout": (_fn("%m: memref<4x4xf32>", """
%s = memref.subview %m[1, 1] [1, 2] [1, 2] : memref<4x4xf32> to memref<2xf32, strided<[2], offset: 4>>
return"""), "expected result type to be 'memref<1x2xf32, strided<[4, 2], offset: 5>>' or a rank-reduced "
                "version. (mismatch of result layout)"),
    "memref_subview_ranks": (_fn("%m: memref<4xf32>", """
%s = memref.subview %m[0, 0] [2] [1] : memref<4xf32> to memref<2xf32>
return"""), "expected mixed offsets rank to match mixed sizes rank (2 vs 1) so the rank of the result type "
                "is well-formed."),
    "memref_copy_shape": (_fn("%a: memref<4xf32>, %b: memref<5xf32>", """
memref.copy %a, %b : memref<4xf32> to memref<5xf32>
return"""), "requires the same shape for all operands"),
    "memref_get_global_missing": (_fn("", """
%g = memref.get_global @nope : memref<2xf32>
return"""), "'nope' does not reference a valid global memref"),
    "memref_global_init_type": ('memref.global @g : memref<2xf32> = dense<1> : tensor<2xi32>\n', None),
    "check_eq_types": (_fn("%a: tensor<2xf32>, %b: tensor<3xf32>", "check.expect_eq(%a, %b) : tensor<2xf32>\nreturn"),
                       "use of value '%b' expects different type than prior uses"),
    "check_eq_const_type": (_fn("%a: tensor<2xi32>", """
check.expect_eq_const(%a, dense<[1, 2, 3]> : tensor<3xi32>) : tensor<2xi32>
return"""), "failed to verify that all of {lhs, value} have same type"),
    "check_true_float": (_fn("%a: f32", "check.expect_true(%a) : f32\nreturn"),
                         "operand #0 must be signless integer, but got 'f32'"),
    "check_hlo_close_types": (_fn("%a: tensor<2xf32>, %b: tensor<3xf32>", """
check.expect_close %a, %b, max_ulp_difference = 3 : tensor<2xf32>, tensor<3xf32>
return"""), "failed to verify that all of {actual, expected} have same type"),
    "flow_tie_shape_dims": (_fn("%t: tensor<?x?xi32>, %h: index", """
%1 = flow.tensor.tie_shape %t : tensor<?x?xi32>{%h}
return"""), None),
    "util_barrier_count": (_fn("%a: tensor<2xf32>", """
%r = "util.optimization_barrier"(%a) : (tensor<2xf32>) -> tensor<3xf32>
return"""), "failed to verify that all of {operands, results} have same type"),
}


#: Older spellings iree-opt 3.13 no longer reads: accepted, printed the way it prints them now.
OLDER_SPELLINGS: dict[str, tuple[str, str]] = {
    "alloc_alignment_attr": (_fn("", "%a = memref.alloc() {alignment = 64 : i64} : memref<4xf32>\nreturn"),
                             "memref.alloc() alignment = 64 : memref<4xf32>"),
    "global_alignment_attr": ('memref.global "private" @x : memref<2xf32> = dense<0.0> {alignment = 64 : i64}\n',
                              'memref.global "private" @x : memref<2xf32> = dense<0.0> alignment = 64'),
    "load_nontemporal_attr": (_fn("%m: memref<4xf32>, %i: index",
                                  "%l = memref.load %m[%i] {nontemporal = true} : memref<4xf32>\nreturn"),
                              "memref.load %m[%i] nontemporal(true) : memref<4xf32>"),
}


@pytest.mark.parametrize("name", list(OLDER_SPELLINGS))
def test_older_spellings(name):
    text, want = OLDER_SPELLINGS[name]
    printed = to_text(_parsed(text))
    assert want in printed, printed
    _parsed(printed)


def _parsed(text):
    result = parse_and_verify(text, "<snippet>")
    problems = "\n".join(d.format() for d in result.diagnostics)
    assert result.ok, f"mlirtext rejects valid IR:\n{problems}\n{text}"
    return result


@pytest.mark.parametrize("name", list(SNIPPETS) + [f"stablehlo_check_{n}" for n in STABLEHLO_CHECK])
def test_parse_print_fixed_point(name):
    text = SNIPPETS.get(name) or STABLEHLO_CHECK[name[len("stablehlo_check_"):]]
    first = _parsed(text)
    for generic in (False, True):
        printed = to_text(first, generic=generic)
        again = to_text(_parsed(printed), generic=generic)
        assert again == printed, f"printing is not idempotent (generic={generic}):\n{printed}\n---\n{again}"


def test_custom_forms_are_used():
    for name in SNIPPETS:
        if "generic" in name:
            continue
        printed = to_text(_parsed(SNIPPETS[name]))
        for prefix in ("scf.", "memref.", "util.", "check.", "flow."):
            assert f'"{prefix}' not in printed, printed


def test_implicit_terminators_are_materialised():
    result = _parsed(SNIPPETS["scf_for_implicit_yield"])
    generic = to_text(result, generic=True)
    assert generic.count('"scf.yield"() : () -> ()') == 2, generic
    custom = to_text(result)
    assert "scf.yield" not in custom, custom  # MLIR leaves them out again
    result = _parsed(SNIPPETS["scf_parallel_reduce"])
    assert '"scf.reduce"() : () -> ()' in to_text(result, generic=True)


def test_stablehlo_check_keeps_its_spelling():
    for name, text in STABLEHLO_CHECK.items():
        printed = to_text(_parsed(text))
        assert '"interpreter.' not in printed, printed
        assert "check.expect_" in printed and "check.expect_eq(" not in printed, printed
        assert ") :" not in printed.split("check.", 1)[1].split("\n", 1)[0], printed
    op = _op(_parsed(STABLEHLO_CHECK["almost_eq"]), "check.expect_almost_eq", 1)
    assert op.form == "stablehlo" and op.attributes["tolerance"].value == 0.1


def _op(result, name, index=0):
    ops = [o for o in result.module.walk() if o.name == name]
    return ops[index]


def test_check_attributes_are_real():
    result = _parsed(SNIPPETS["check_iree"])
    op = _op(result, "check.expect_almost_eq_const", 1)
    from mlirtext.ir.dense import DenseElementsAttr
    assert isinstance(op.attributes["value"], DenseElementsAttr)
    assert op.attributes["atol"].value == 0.5 and str(op.attributes["atol"].type) == "f32"
    assert op.attributes["rtol"].value == 0.0
    assert _op(result, "check.expect_eq", 1).operands[0].type.text == "hal.device"
    const = _op(_parsed(SNIPPETS["util_ops"]), "util.unfoldable_constant")
    assert isinstance(const.attributes["value"], DenseElementsAttr)


@pytest.mark.parametrize("name", list(INVALID))
def test_invalid(name):
    text, message = INVALID[name]
    result = parse_and_verify(text, "<snippet>")
    assert not result.ok, f"accepted invalid IR:\n{text}"
    if message is not None:
        got = [d.message for d in result.diagnostics]
        assert any(message in m for m in got), got


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
        pytest.fail("iree-opt rejects something (not found one by one)")
    k = len(names)
    for i, n in enumerate(names):
        assert forms[k + i] == forms[i], f"{n}: custom print means something else:\n{ours[False][i]}"
        assert forms[2 * k + i] == forms[i], f"{n}: generic print means something else:\n{ours[True][i]}"


@pytest.mark.oracle
def test_reads_iree_opt_custom_print():
    names = list(SNIPPETS)
    theirs = custom_forms([SNIPPETS[n] for n in names])
    assert theirs is not None
    ours = []
    for n, text in zip(names, theirs):
        result = parse_and_verify(text, "<iree-opt output>")
        problems = "\n".join(d.format() for d in result.diagnostics)
        assert result.ok, f"{n}: mlirtext rejects iree-opt's print:\n{problems}\n{text}"
        ours.append(to_text(result, generic=True))
    want = generic_forms([SNIPPETS[n] for n in names])
    got = generic_forms(ours)
    assert want is not None and got is not None
    for n, w, g in zip(names, want, got):
        assert w == g, n


@pytest.mark.oracle
def test_invalid_rejected_by_iree_opt_too():
    import subprocess
    from concurrent.futures import ThreadPoolExecutor

    from .oracle import iree_opt_path

    def rejects(text: str) -> bool:
        proc = subprocess.run([iree_opt_path(), "--allow-unregistered-dialect", "-"], input=text,
                              capture_output=True, text=True, timeout=120)
        return proc.returncode != 0
    names = list(INVALID)
    with ThreadPoolExecutor(8) as pool:
        outcomes = list(pool.map(lambda n: rejects(INVALID[n][0]), names))
    accepted = [n for n, bad in zip(names, outcomes) if not bad]
    assert not accepted, f"iree-opt accepts: {accepted}"
