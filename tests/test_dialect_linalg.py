"""linalg (and the tensor ops used around it): custom syntax, implicit bodies, verification.

Each snippet parses and verifies; our custom print is a fixed point. Against
iree-opt (oracle): our custom print and our generic print (which carries the
implicit bodies of named ops) mean what the snippet means, and we read
iree-opt's own print back.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from mlirtext.api import parse_and_verify, to_text

from .oracle import custom_forms, generic_form, generic_forms

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "llvm-project"

SNIPPETS: dict[str, str] = {
    "generic_trait_alias": """
#map0 = affine_map<(i, j) -> (j, i)>
#map1 = affine_map<(i, j) -> ()>
#map2 = affine_map<(i, j) -> (i, j)>
#trait = {indexing_maps = [#map0, #map1, #map2], iterator_types = ["parallel", "parallel"], library_call = "f"}
func.func @g(%a: tensor<4x8xf32>, %s: f32, %o: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %0 = linalg.generic #trait ins(%a, %s : tensor<4x8xf32>, f32) outs(%o : tensor<8x4xf32>) attrs = {foo = 1} {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %1 = arith.addf %x, %y : f32
    linalg.yield %1 : f32
  } -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
""",
    "generic_reduction_two_results": """
func.func @argmax(%in: tensor<16xf32>, %v: tensor<f32>, %i: tensor<i32>) -> (tensor<f32>, tensor<i32>) {
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>, affine_map<(d0) -> ()>],
                         iterator_types = ["reduction"]}
      ins(%in : tensor<16xf32>) outs(%v, %i : tensor<f32>, tensor<i32>) {
  ^bb0(%a: f32, %b: f32, %c: i32):
    %k = linalg.index 0 : index
    %kc = arith.index_cast %k : index to i32
    %m = arith.maximumf %a, %b : f32
    %gt = arith.cmpf ogt, %a, %b : f32
    %s = arith.select %gt, %kc, %c : i32
    linalg.yield %m, %s : f32, i32
  } -> (tensor<f32>, tensor<i32>)
  return %r#0, %r#1 : tensor<f32>, tensor<i32>
}
""",
    "generic_memref_no_inputs": """
func.func @m(%o: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      outs(%o : memref<?x?xf32>) {
  ^bb0(%x: f32):
    %c = arith.constant 0.0 : f32
    linalg.yield %c : f32
  }
  return
}
""",
    "named_contractions": """
func.func @c(%a: tensor<4x8xi8>, %b: tensor<8x16xi8>, %c: tensor<4x16xi32>, %h: tensor<2x4x8xf16>,
             %hb: tensor<2x8x16xf16>, %hc: tensor<2x4x16xf32>, %v: tensor<8xf32>, %w: tensor<4xf32>,
             %m: tensor<4x8xf32>, %d: tensor<f32>, %t: tensor<8x4xf32>, %mc: tensor<4x4xf32>) -> tensor<4x16xi32> {
  %0 = linalg.matmul ins(%a, %b : tensor<4x8xi8>, tensor<8x16xi8>) outs(%c : tensor<4x16xi32>) -> tensor<4x16xi32>
  %1 = linalg.batch_matmul ins(%h, %hb : tensor<2x4x8xf16>, tensor<2x8x16xf16>) outs(%hc : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %2 = linalg.matvec ins(%m, %v : tensor<4x8xf32>, tensor<8xf32>) outs(%w : tensor<4xf32>) -> tensor<4xf32>
  %3 = linalg.dot ins(%v, %v : tensor<8xf32>, tensor<8xf32>) outs(%d : tensor<f32>) -> tensor<f32>
  %4 = linalg.matmul {cast = #linalg.type_fn<cast_unsigned>} ins(%a, %b : tensor<4x8xi8>, tensor<8x16xi8>) outs(%c : tensor<4x16xi32>) -> tensor<4x16xi32>
  %5 = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%t, %m : tensor<8x4xf32>, tensor<4x8xf32>) outs(%mc : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x16xi32>
}
""",
    "named_memref_and_fill": """
func.func @n(%a: memref<?x?xf32>, %x: memref<?xf32>, %y: memref<?xf32>, %f: f32) {
  linalg.matmul ins(%a, %a : memref<?x?xf32>, memref<?x?xf32>) outs(%a : memref<?x?xf32>)
  linalg.matvec ins(%a, %x : memref<?x?xf32>, memref<?xf32>) outs(%y : memref<?xf32>)
  linalg.fill ins(%f : f32) outs(%a : memref<?x?xf32>)
  linalg.copy ins(%x : memref<?xf32>) outs(%y : memref<?xf32>)
  return
}
""",
    "conv_and_pooling": """
func.func @conv(%i: tensor<1x8x8x4xi8>, %k: tensor<3x3x4x5xi8>, %o: tensor<1x6x6x5xi32>, %zi: i32, %zk: i32,
                %w: tensor<3x3xi8>, %po: tensor<1x6x6x4xi32>, %ni: tensor<1x2x4x4xf32>,
                %nk: tensor<1x2x3x2xf32>, %no: tensor<1x1x2x3xf32>) -> tensor<1x6x6x5xi32> {
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %k : tensor<1x8x8x4xi8>, tensor<3x3x4x5xi8>) outs(%o : tensor<1x6x6x5xi32>) -> tensor<1x6x6x5xi32>
  %1 = linalg.conv_2d_nhwc_hwcf_q {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %k, %zi, %zk : tensor<1x8x8x4xi8>, tensor<3x3x4x5xi8>, i32, i32) outs(%o : tensor<1x6x6x5xi32>) -> tensor<1x6x6x5xi32>
  %2 = linalg.pooling_nhwc_max_unsigned {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %w : tensor<1x8x8x4xi8>, tensor<3x3xi8>) outs(%po : tensor<1x6x6x4xi32>) -> tensor<1x6x6x4xi32>
  %3 = linalg.pooling_nhwc_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %w : tensor<1x8x8x4xi8>, tensor<3x3xi8>) outs(%po : tensor<1x6x6x4xi32>) -> tensor<1x6x6x4xi32>
  %4 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%ni, %nk : tensor<1x2x4x4xf32>, tensor<1x2x3x2xf32>) outs(%no : tensor<1x1x2x3xf32>) -> tensor<1x1x2x3xf32>
  return %0 : tensor<1x6x6x5xi32>
}
""",
    "map_reduce_transpose_broadcast": """
func.func @mr(%l: tensor<64xf32>, %r: tensor<64xf32>, %o: tensor<64xf32>, %i3: tensor<16x32x64xf32>,
              %i2: tensor<16x64xf32>, %t: tensor<32x64x16xf32>, %b: tensor<16x8x64xf32>) -> tensor<64xf32> {
  %0 = linalg.map ins(%l, %r : tensor<64xf32>, tensor<64xf32>) outs(%o : tensor<64xf32>)
    (%x: f32, %y: f32, %z: f32) {
      %s = arith.addf %x, %y : f32
      linalg.yield %s : f32
    }
  %1 = linalg.map outs(%o : tensor<64xf32>)
    (%z: f32) {
      %c = arith.constant 1.0 : f32
      linalg.yield %c : f32
    }
  %2 = linalg.map { arith.mulf } ins(%l, %r : tensor<64xf32>, tensor<64xf32>) outs(%o : tensor<64xf32>)
  %3 = linalg.reduce ins(%i3 : tensor<16x32x64xf32>) outs(%i2 : tensor<16x64xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %acc, %in : f32
      linalg.yield %s : f32
    }
  %4 = linalg.reduce { arith.maximumf } ins(%i3 : tensor<16x32x64xf32>) outs(%i2 : tensor<16x64xf32>) dimensions = [1]
  %5 = linalg.transpose ins(%i3 : tensor<16x32x64xf32>) outs(%t : tensor<32x64x16xf32>) permutation = [1, 2, 0]
  %6 = linalg.broadcast ins(%i2 : tensor<16x64xf32>) outs(%b : tensor<16x8x64xf32>) dimensions = [1]
  return %0 : tensor<64xf32>
}
""",
    "softmax_winograd_pack": """
func.func @s(%a: tensor<2x16x32xf32>, %f: tensor<2x3x3x5xf32>, %src: tensor<128x256xf32>,
             %p: tensor<16x8x8x32xf32>, %pad: f32, %m: memref<127x255xf32>, %pm: memref<16x8x8x32xf32>,
             %t: index, %dyn: tensor<?x8x?x32xf32>) -> tensor<2x16x32xf32> {
  %e = tensor.empty() : tensor<2x16x32xf32>
  %0 = linalg.softmax dimension(2) ins(%a : tensor<2x16x32xf32>) outs(%e : tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
  %w = tensor.empty() : tensor<6x6x5x2xf32>
  %1 = linalg.winograd_filter_transform fmr(F_4_3) ins(%f : tensor<2x3x3x5xf32>) outs(%w : tensor<6x6x5x2xf32>) -> tensor<6x6x5x2xf32>
  %2 = linalg.pack %src inner_dims_pos = [0, 1] inner_tiles = [8, 32] into %p : tensor<128x256xf32> -> tensor<16x8x8x32xf32>
  %3 = linalg.unpack %2 inner_dims_pos = [0, 1] inner_tiles = [8, 32] into %src : tensor<16x8x8x32xf32> -> tensor<128x256xf32>
  linalg.pack %m padding_value(%pad : f32) inner_dims_pos = [0, 1] inner_tiles = [8, 32] into %pm : memref<127x255xf32> -> memref<16x8x8x32xf32>
  %4 = linalg.pack %src outer_dims_perm = [1, 0] inner_dims_pos = [0, 1] inner_tiles = [%t, 32] into %dyn : tensor<128x256xf32> -> tensor<?x8x?x32xf32>
  return %0 : tensor<2x16x32xf32>
}
""",
    "tensor_slices_reshapes_pad": """
func.func @t(%t: tensor<?x8xf32>, %c: index, %pv: f32, %s: tensor<2xindex>, %u: tensor<4x8xi32>) -> tensor<?x8xf32> {
  %0 = tensor.extract_slice %t[%c, 0] [4, %c] [1, 2] : tensor<?x8xf32> to tensor<4x?xf32>
  %1 = tensor.insert_slice %0 into %t[%c, 0] [4, %c] [1, 2] : tensor<4x?xf32> into tensor<?x8xf32>
  %2 = tensor.extract_slice %t[0, 0] [1, 8] [1, 1] : tensor<?x8xf32> to tensor<8xf32>
  %3 = tensor.expand_shape %t [[0, 1], [2]] output_shape [%c, 1, 8] : tensor<?x8xf32> into tensor<?x1x8xf32>
  %4 = tensor.collapse_shape %3 [[0, 1], [2]] : tensor<?x1x8xf32> into tensor<?x8xf32>
  %5 = tensor.pad %t nofold low[0, %c] high[1, 2] {
  ^bb0(%i: index, %j: index):
    tensor.yield %pv : f32
  } : tensor<?x8xf32> to tensor<?x?xf32>
  %6 = tensor.reshape %u(%s) : (tensor<4x8xi32>, tensor<2xindex>) -> tensor<8x4xi32>
  %7 = tensor.concat dim(0) %u, %u : (tensor<4x8xi32>, tensor<4x8xi32>) -> tensor<8x8xi32>
  %8 = tensor.bitcast %u : tensor<4x8xi32> to tensor<4x8xf32>
  %9 = tensor.rank %t : tensor<?x8xf32>
  %10 = tensor.generate %c {
  ^bb0(%i: index, %j: index):
    tensor.yield %pv : f32
  } : tensor<?x3xf32>
  return %4 : tensor<?x8xf32>
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


@pytest.mark.parametrize("name", list(SNIPPETS))
def test_generic_print_parses_again(name):
    generic = to_text(_parsed(SNIPPETS[name]), generic=True)
    assert to_text(_parsed(generic)) == to_text(_parsed(SNIPPETS[name]))


def test_named_ops_carry_their_implicit_body():
    r = _parsed(SNIPPETS["named_contractions"])
    func = r.module.regions[0].blocks[0].ops[0]
    matmul = func.regions[0].blocks[0].ops[0]
    body = matmul.regions[0].blocks[0]
    assert [op.name for op in body.ops] == ["arith.extsi", "arith.extsi", "arith.muli", "arith.addi",
                                            "linalg.yield"]
    assert "arith" not in to_text(r).split("linalg.matmul", 1)[1].split("\n", 1)[0]


def test_results_follow_tensor_outs_only():
    r = _parsed(SNIPPETS["named_memref_and_fill"])
    func = r.module.regions[0].blocks[0].ops[0]
    assert all(not op.results for op in func.regions[0].blocks[0].ops if op.name.startswith("linalg."))


def test_short_forms_print_as_iree_opt_does():
    printed = to_text(_parsed(SNIPPETS["map_reduce_transpose_broadcast"]))
    assert "linalg.map { arith.addf } ins(%l, %r : tensor<64xf32>, tensor<64xf32>)" in printed
    assert "linalg.reduce { arith.addf } ins(%i3 : tensor<16x32x64xf32>)" in printed
    assert "permutation = [1, 2, 0]" in printed


INVALID = [
    ("func.func @f(%a: memref<2x4xf32>, %b: memref<3x4xf32>, %c: memref<2x4xf32>) {\n"
     "  linalg.matmul ins(%a, %b : memref<2x4xf32>, memref<3x4xf32>) outs(%c : memref<2x4xf32>)\n"
     "  return\n}", 2, "inferred input/output operand #1 has shape's dimension #0 to be 4, but found 3"),
    ("func.func @f(%i: memref<1x3x4x2xf32>, %k: memref<3x2x2x1xf32>, %o: memref<1x2x3x1xf32>) {\n"
     "  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}"
     " ins(%i, %k : memref<1x3x4x2xf32>, memref<3x2x2x1xf32>) outs(%o : memref<1x2x3x1xf32>)\n  return\n}",
     2, "inferred input/output operand #0 has shape's dimension #1 to be greater than or equal to 4, but found 3"),
    ("func.func @f(%a: tensor<4xf32>, %o: tensor<4xf32>) {\n"
     "  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = [\"parallel\"]}"
     " ins(%a : tensor<4xf32>) outs(%o : tensor<4xf32>) {\n  ^bb0(%x: f32, %y: f32):\n"
     "    linalg.yield %x : f32\n  } -> tensor<4xf32>\n  return\n}",
     2, "expected the number of indexing_map (1) to be equal to the number of input/output operands (2)"),
    ("func.func @f(%a: tensor<4xf32>, %o: tensor<4xf32>) {\n"
     "  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],"
     " iterator_types = [\"parallel\"]} ins(%a : tensor<4xf32>) outs(%o : tensor<4xf32>) {\n"
     "  ^bb0(%x: i32, %y: f32):\n    linalg.yield %y : f32\n  } -> tensor<4xf32>\n  return\n}",
     2, "expected type of bb argument #0 ('i32') to match element or self type of the corresponding operand"),
    ("func.func @f(%a: tensor<4xf32>, %o: tensor<4xf32>) {\n"
     "  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],"
     " iterator_types = [\"parallel\"]} ins(%a : tensor<4xf32>) outs(%o : tensor<4xf32>) {\n"
     "  ^bb0(%x: f32, %y: f32):\n    %i = linalg.index 1 : index\n    linalg.yield %y : f32\n"
     "  } -> tensor<4xf32>\n  return\n}",
     4, "expected dim (1) to be lower than the number of loops (1) of the enclosing LinalgOp"),
    ("func.func @f(%a: tensor<4xf32>, %o: tensor<4xf32>) {\n"
     "  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],"
     " iterator_types = [\"parallel\"]} ins(%a : tensor<4xf32>) outs(%o : tensor<4xf32>) {\n"
     "  ^bb0(%x: f32, %y: f32):\n    linalg.yield %x, %y : f32, f32\n  } -> tensor<4xf32>\n  return\n}",
     4, "expected number of yield values (2) to match the number of inits / outs operands"),
    ("func.func @f(%a: tensor<4x8xf32>, %o: tensor<4x8xf32>) {\n"
     "  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>],"
     " iterator_types = [\"parallel\", \"parallel\"]} ins(%a : tensor<4x8xf32>) outs(%o : tensor<4x8xf32>) {\n"
     "  ^bb0(%x: f32, %y: f32):\n    linalg.yield %y : f32\n  } -> tensor<4x8xf32>\n  return\n}",
     2, "expected operand rank (2) to match the result rank of indexing_map #0 (1)"),
    ("func.func @f(%a: tensor<4x8xf32>, %o: tensor<4x8xf32>) {\n"
     "  linalg.matmul ins(%a, %a : tensor<4x8xf32>, tensor<4x8xf32>) outs(%o : tensor<4x8xf32>)\n"
     "  return\n}", 2, "to be equal to the number of output tensors (1)"),
    ("func.func @f(%v: f64, %o: tensor<4xf32>) {\n"
     "  %0 = linalg.fill ins(%v : f64) outs(%o : tensor<4xf32>) -> tensor<4xf32>\n  return\n}",
     2, "expected fill value type ('f64') to match output element type ('f32')"),
    ("func.func @f(%a: tensor<16x32xf32>, %o: tensor<16x32xf32>) {\n"
     "  %0 = linalg.transpose ins(%a : tensor<16x32xf32>) outs(%o : tensor<16x32xf32>) permutation = [1, 0]\n"
     "  return\n}", 2, "dim(result, 0) = 16 doesn't match dim(input, permutation[0]) = 32"),
    ("func.func @f(%a: tensor<8x32xf32>, %o: tensor<8x16xf32>) {\n"
     "  %0 = linalg.broadcast ins(%a : tensor<8x32xf32>) outs(%o : tensor<8x16xf32>) dimensions = [1]\n"
     "  return\n}", 2, "input rank plus added dimensions does not match init rank"),
    ("func.func @f(%a: tensor<16x32xf32>, %o: tensor<16xf32>) {\n"
     "  %0 = linalg.reduce ins(%a : tensor<16x32xf32>) outs(%o : tensor<16xf32>) dimensions = [2]\n"
     "    (%x: f32, %y: f32) {\n      linalg.yield %x : f32\n    }\n  return\n}",
     2, "dimensions for reduction should be in the range [0, 1]."),
    ("func.func @f(%a: tensor<128x256xf32>, %p: tensor<8x16x8x32xf32>) {\n"
     "  %0 = linalg.pack %a inner_dims_pos = [0, 1] inner_tiles = [8, 32] into %p"
     " : tensor<128x256xf32> -> tensor<8x16x8x32xf32>\n  return\n}",
     2, "expected 'tensor<16x8x8x32xf32>' for the packed domain value, got 'tensor<8x16x8x32xf32>'"),
    ("func.func @f(%t: tensor<8x8xf32>) {\n"
     "  %0 = tensor.extract_slice %t[0, 0] [4, 4] [1, 1] : tensor<8x8xf32> to tensor<4x3xf32>\n  return\n}",
     2, "expected type to be 'tensor<4x4xf32>' or a rank-reduced version. (size mismatch)"),
    ("func.func @f(%t: tensor<3x4xf32>) {\n"
     "  %0 = tensor.collapse_shape %t [[0, 1]] : tensor<3x4xf32> into tensor<11xf32>\n  return\n}",
     2, "expected dimension 0 of collapsed type to be static value of 12"),
    ("func.func @f(%t: tensor<4x4xf32>, %v: f32) {\n"
     "  %0 = tensor.pad %t low[1, 1] high[1, 1] {\n  ^bb0(%i: index, %j: index):\n"
     "    tensor.yield %v : f32\n  } : tensor<4x4xf32> to tensor<5x6xf32>\n  return\n}",
     2, "specified type tensor<5x6xf32> does not match the inferred type tensor<6x6xf32>"),
]


@pytest.mark.parametrize("text,line,message", INVALID)
def test_invalid_ops_are_reported(text, line, message):
    result = parse_and_verify(text, "<invalid>")
    got = [(d.span.line_col[0] if d.span is not None else None, d.message) for d in result.diagnostics]
    assert any(message in m for _, m in got), got
    assert any(ln == line for ln, m in got if message in m), got


def test_corpus_linalg_files_parse_verify_and_reprint():
    for name in ("mlir__test__Dialect__Linalg__generalize-named-ops.mlir",):
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
    for n, text in zip(names, theirs):
        result = parse_and_verify(text, "<iree-opt output>")
        problems = "\n".join(d.format() for d in result.diagnostics)
        assert result.ok and not result.diagnostics, f"{n}: mlirtext rejects iree-opt's print:\n{problems}\n{text}"


OLDER_SPELLINGS = {
    "tensor_pack": ("func.func @f(%a: tensor<128x256xf32>, %p: tensor<16x8x8x32xf32>) -> tensor<16x8x8x32xf32> {\n"
                    "  %0 = tensor.pack %a inner_dims_pos = [0, 1] inner_tiles = [8, 32] into %p"
                    " : tensor<128x256xf32> -> tensor<16x8x8x32xf32>\n  return %0 : tensor<16x8x8x32xf32>\n}\n",
                    "linalg.pack %a"),
    "matmul_transpose_a": ("func.func @f(%a: tensor<8x4xf32>, %b: tensor<8x16xf32>, %c: tensor<4x16xf32>) {\n"
                           "  %0 = linalg.matmul_transpose_a ins(%a, %b : tensor<8x4xf32>, tensor<8x16xf32>)"
                           " outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>\n  return\n}\n",
                           "linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>"),
    "expand_without_output_shape": ("func.func @f(%v: tensor<4x8xf32>) {\n"
                                    "  %0 = tensor.expand_shape %v [[0, 1], [2]] : tensor<4x8xf32> into tensor<2x2x8xf32>\n"
                                    "  return\n}\n", "output_shape [2, 2, 8]"),
    "map_without_init_argument": ("func.func @f(%o: memref<8xf32>, %c: f32) {\n"
                                  "  linalg.map outs(%o : memref<8xf32>)\n    () {\n      linalg.yield %c : f32\n    }\n"
                                  "  return\n}\n", "(%out: f32)"),
}


@pytest.mark.parametrize("name", list(OLDER_SPELLINGS))
def test_older_spellings_print_the_newer_one(name):
    text, expected = OLDER_SPELLINGS[name]
    printed = to_text(_parsed(text))
    assert expected in printed
    assert to_text(_parsed(printed)) == printed


@pytest.mark.oracle
def test_older_spellings_are_printed_as_iree_opt_accepts():
    names = list(OLDER_SPELLINGS)
    forms = custom_forms([to_text(_parsed(OLDER_SPELLINGS[n][0])) for n in names])
    assert forms is not None
