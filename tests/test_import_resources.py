"""What importers emit, read without any framework: `dense_resource` blobs become real constants,
and `loc(...)` chains lead the hover back to the Python line an op came from."""
from __future__ import annotations

import numpy as np

from mlirtext.analysis.document import Document
from mlirtext.analysis.hover import hover
from mlirtext.api import parse_and_verify, to_text
from mlirtext.importers.common import ImportFailed, require, spec_shape_dtype
from mlirtext.interpreter import Interpreter
from mlirtext.ir.arrays import attr_to_array
from mlirtext.ir.dense import DenseElementsAttr, parse_dense
from mlirtext.ir.locations import describe
from mlirtext.ir.resources import MetadataError, parse_metadata
from mlirtext.ir.types import RankedTensorType, f32

import pytest

WEIGHTS = np.array([[1.5, -2.0], [0.25, 4.0]], np.float32)
MASK = np.array([True, False, True])


def _blob(a: np.ndarray) -> str:
    return '"0x04000000' + a.tobytes().hex().upper() + '"'


RESOURCES = f"""
func.func @main(%x: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<3xi1>) {{
  %w = stablehlo.constant dense_resource<torch_tensor_2_2_torch.float32> : tensor<2x2xf32>
  %m = stablehlo.constant dense_resource<mask> : tensor<3xi1>
  %y = stablehlo.add %x, %w : tensor<2x2xf32>
  return %y, %m : tensor<2x2xf32>, tensor<3xi1>
}}

{{-#
  dialect_resources: {{
    builtin: {{
      torch_tensor_2_2_torch.float32: {_blob(WEIGHTS)},
      mask: {_blob(MASK)},
      unused: "0x0400000001020304"
    }}
  }}
#-}}
"""


def test_dense_resource_blobs_become_constants_the_interpreter_runs():
    result = parse_and_verify(RESOURCES, "r.mlir")
    assert result.ok, result.diagnostics
    y, mask = Interpreter(result.module).call("main", [np.ones((2, 2), np.float32)])
    np.testing.assert_array_equal(y, WEIGHTS + 1)
    np.testing.assert_array_equal(mask, MASK)


def test_printing_keeps_only_the_blobs_no_constant_took():
    text = to_text(parse_and_verify(RESOURCES, "r.mlir"))
    assert "dense_resource" not in text and "torch_tensor_2_2" not in text
    assert 'unused: "0x0400000001020304"' in text
    again = parse_and_verify(text, "again.mlir")   # what we print reads back the same
    assert again.ok
    y, _ = Interpreter(again.module).call("main", [np.zeros((2, 2), np.float32)])
    np.testing.assert_array_equal(y, WEIGHTS)


def test_a_blob_of_the_wrong_size_stays_a_resource_as_in_mlir():
    bad = RESOURCES.replace(_blob(WEIGHTS), _blob(WEIGHTS[0]))
    result = parse_and_verify(bad, "bad.mlir")
    assert result.ok   # MLIR's parser does not check blob sizes either
    text = to_text(result)
    assert "dense_resource<torch_tensor_2_2_torch.float32>" in text and _blob(WEIGHTS[0]) in text
    assert "dense_resource<mask>" not in text   # the good one was still taken
    with pytest.raises(Exception, match="dense_resource<torch_tensor_2_2_torch.float32>"):
        Interpreter(result.module).call("main", [np.zeros((2, 2), np.float32)])


def test_an_unreadable_metadata_block_is_an_error():
    result = parse_and_verify(RESOURCES.replace("mask: ", "mask "), "broken.mlir")
    assert not result.ok and "file metadata: expected 'key: value'" in result.diagnostics[0].message


def test_metadata_strings_with_escapes_read_as_before():
    # (strings are found by searching for their closing quote, not stepped through by a regex)
    entries = parse_metadata('{-# a: "x\\"y", b: {c: "q\\\\", d: w}, e: "" #-}')
    assert entries == {"a": '"x\\"y"', "b": {"c": '"q\\\\"', "d": "w"}, "e": '""'}
    for bad in ('{-# a: "open #-}', '{-# a: "x\\\ny" #-}'):   # unclosed; a backslash before a newline
        with pytest.raises(MetadataError, match="unexpected text in the metadata block"):
            parse_metadata(bad)


def test_a_weight_made_from_bytes_is_the_constant_its_hex_spells():
    t = RankedTensorType((2, 2), f32)
    made = DenseElementsAttr(t, raw=WEIGHTS.tobytes())
    spelled = parse_dense('"0x' + WEIGHTS.tobytes().hex() + '"', t)   # lower case, as a user may write it
    assert made == spelled and hash(made) == hash(spelled) and made.is_raw and spelled.is_raw
    assert made.hex == "0x" + WEIGHTS.tobytes().hex().upper()   # printed as MLIR prints it
    assert spelled.hex == "0x" + WEIGHTS.tobytes().hex()         # the source's spelling kept
    np.testing.assert_array_equal(attr_to_array(made, t), WEIGHTS)
    np.testing.assert_array_equal(attr_to_array(spelled, t), WEIGHTS)
    assert made != DenseElementsAttr(t, raw=(WEIGHTS + 1).tobytes())
    assert not parse_dense("[[1.5, -2.0], [0.25, 4.0]]", t).is_raw


def test_a_handle_without_a_blob_stays_and_running_it_says_so():
    text = RESOURCES.split("{-#")[0]
    result = parse_and_verify(text, "noblob.mlir")
    assert result.ok
    assert "dense_resource<mask>" in to_text(result)
    with pytest.raises(Exception, match="dense_resource<torch_tensor_2_2_torch.float32>"):
        Interpreter(result.module).call("main", [np.zeros((2, 2), np.float32)])


# A JAX export, trimmed: `#loc` aliases after the module, callsite and name locations.
JAX_TEXT = """#loc1 = loc("x")
module @jit_f {
  func.func public @main(%arg0: tensor<4xf32> loc("x")) -> tensor<4xf32> {
    %0 = stablehlo.exponential %arg0 : tensor<4xf32> loc(#loc8)
    %1 = stablehlo.add %0, %arg0 : tensor<4xf32> loc(#loc9)
    return %1 : tensor<4xf32> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("/src/model.py":3:11 to :20)
#loc3 = loc("/src/model.py":9:4 to :12)
#loc4 = loc("/src/model.py":4:11 to :18)
#loc5 = loc("f"(#loc2))
#loc6 = loc("<module>"(#loc3))
#loc7 = loc("f"(#loc4))
#loc8 = loc("jit(f)/exp"(callsite(#loc5 at #loc6)))
#loc9 = loc("jit(f)/add"(callsite(#loc7 at #loc6)))
"""


def test_locations_follow_aliases_and_callsites_to_the_python_frames():
    aliases = dict(line.split(" = ", 1) for line in JAX_TEXT.splitlines() if line.startswith("#loc"))
    assert describe("loc(#loc8)", aliases.get) == \
        "source: `/src/model.py:3:11 in f` ← called from `/src/model.py:9:4 in <module>` (`jit(f)/exp`)"
    assert describe("loc(#loc)", aliases.get) == ""
    assert describe('loc(fused["a.py":1:2, "b"])', aliases.get) == "source: `a.py:1:2`"
    assert describe("loc(#missing)", aliases.get) == ""


def test_the_hover_on_an_imported_op_shows_its_python_line():
    doc = Document("file:///m.mlir", JAX_TEXT, 1)
    markdown, _, _ = hover(doc, JAX_TEXT.index("stablehlo.add"))
    assert "source: `/src/model.py:4:11 in f`" in markdown
    markdown, _, _ = hover(doc, JAX_TEXT.index("stablehlo.exponential"))
    assert "/src/model.py:3:11" in markdown and "jit(f)/exp" in markdown


def test_a_missing_framework_names_the_extra_to_install():
    with pytest.raises(ImportFailed, match=r"pip install 'mlirtext\[jax\]'"):
        require("no_such_framework_here", "jax", "JAX")


@pytest.mark.parametrize("spec, shape, dtype", [("4x8xf32", (4, 8), np.float32), ("f32", (), np.float32),
                                                ("16xi32", (16,), np.int32), ("2x1xi1", (2, 1), np.bool_)])
def test_argument_specs(spec, shape, dtype):
    assert spec_shape_dtype(spec) == (shape, np.dtype(dtype))


@pytest.mark.parametrize("spec", ["4x8", "4xq32", "x4xf32", ""])
def test_bad_argument_specs_say_what_is_expected(spec):
    with pytest.raises(ImportFailed, match="like 4x8xf32"):
        spec_shape_dtype(spec)


def test_hex_dense_bodies_end_at_their_closing_quote():
    # (found by a search for the quote: an ONNX weight's body is megabytes of hex)
    text = ('func.func @main() -> (tensor<2x2xf32>, tensor<2x2xf32>) {\n'
            f'  %a = arith.constant dense<"0x{WEIGHTS.tobytes().hex().upper()}" > : tensor<2x2xf32>\n'
            f'  %b = arith.constant dense<"0x{WEIGHTS.tobytes().hex()}"> : tensor<2x2xf32>\n'
            '  return %a, %b : tensor<2x2xf32>, tensor<2x2xf32>\n}\n')
    result = parse_and_verify(text, "hex.mlir")
    assert result.ok, result.diagnostics
    for got in Interpreter(result.module).call("main", []):
        np.testing.assert_array_equal(got, WEIGHTS)


def test_a_raw_weight_pickles_in_one_form():
    # (the source's hex, where there is one, not the bytes made from it as well)
    import pickle
    t = RankedTensorType((2, 2), f32)
    spelled = parse_dense('"0x' + WEIGHTS.tobytes().hex() + '"', t)
    spelled.raw_bytes()
    again = pickle.loads(pickle.dumps(spelled))
    assert again.raw is None and again.hex == spelled.hex and again == spelled
    made = pickle.loads(pickle.dumps(DenseElementsAttr(t, raw=WEIGHTS.tobytes())))
    assert made.raw == WEIGHTS.tobytes() and made == spelled
