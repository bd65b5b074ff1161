"""The sections below an op's hover: the next level (or why there is none yet), and the link to
the pipeline view with what it holds below the next level."""
from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import unquote

from mlirtext.analysis.document import Document
from mlirtext.analysis.lowered_forms import (NEXT_LEVEL_LINES, Lowered, LoweredForms, further_levels, next_level_section,
                                             op_at)
from mlirtext.analysis.op_hover import op_sections
from mlirtext.analysis.target_code import TargetCache

FUNCTION = "func.func @op(%0: tensor<4xf32>) -> tensor<4xf32> {\n{body}  return %1 : tensor<4xf32>\n}"


def test_the_next_level_shows_the_ops_alone_and_is_cut():
    body = "".join(f"  %{i} = tosa.abs %0 : (tensor<4xf32>) -> tensor<4xf32>\n" for i in range(1, 21))
    entry = Lowered("k", "hlo", [("tosa", FUNCTION.replace("{body}", body)), ("linalg", "..."), ("loops", "...")],
                    done=True)
    section = next_level_section(entry)
    lines = section.split("\n")
    assert lines[:3] == ["**Next level**: tosa (from hlo)", "```mlir", "%1 = tosa.abs %0 : (tensor<4xf32>) -> tensor<4xf32>"]
    assert lines[2 + NEXT_LEVEL_LINES] == "// ... 8 more lines" and lines[-1] == "```"
    assert "func.func" not in section and "return" not in section
    assert further_levels(entry) == "then linalg, loops"


def test_without_a_next_level_the_reason_shows():
    assert next_level_section(Lowered("k")) == "*lowering to the next level... (hover again to see it)*"
    stopped = Lowered("k", "hlo", error="lowering stops at stablehlo.fft", done=True)
    assert next_level_section(stopped) == "*lowering stops at stablehlo.fft*" and further_levels(stopped) == ""
    part = Lowered("k", "hlo", [("tosa", "module {\n}")], error="lowering stops at x", done=True)
    assert next_level_section(part).endswith("```mlir\nmodule {\n}\n```")   # not one function: as it is
    assert further_levels(part) == "lowering stops at x"
    going = Lowered("k", "hlo", [("tosa", "a"), ("linalg", "b")])
    assert further_levels(going) == "then linalg; lowering further levels..."


def test_an_op_outside_a_function_has_no_link_and_a_value_no_sections():
    text = ('%c = "stablehlo.constant"() {value = dense<1.0> : tensor<4xf32>} : () -> tensor<4xf32>\n'
            "func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
            "  %0 = stablehlo.abs %x : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n")
    doc = Document("file:///t.mlir", text, 1)
    forms, cache = LoweredForms(ThreadPoolExecutor(1)), TargetCache()
    at = text.index("stablehlo.abs") + 2
    forms.entry_of(op_at(doc, at)).future.result(timeout=60)
    next_level, dispatch, link = op_sections(doc, at, forms, cache)
    assert next_level.startswith("**Next level**: tosa (from hlo)") and dispatch == ""
    arguments = re.search(r"\(command:mlirtext\.showPipeline\?([^ )]+)", link).group(1)
    assert json.loads(unquote(arguments)) == ["f", 2, "file:///t.mlir"]   # the function, the op's line, the document
    assert link.endswith("(then linalg, loops, llvm)")
    assert op_sections(doc, text.index('"stablehlo.constant"') + 2, forms, cache)[2] == ""   # top level: no function
    assert op_sections(doc, text.index("%x :") + 1, forms, cache) == []                     # a value
