"""The verifier (and the parse-time checks of names and types): each invalid snippet gets
the expected diagnostic on the expected line, and iree-opt rejects it too; tricky valid
snippets pass both.

In INVALID, the line the error belongs on ends with `// ERR`.
"""
from __future__ import annotations

import re

import pytest

from mlirtext.api import parse_and_verify, to_text
from mlirtext.dialects.base import Dialect
from mlirtext.dialects.registry import Registry

from .oracle import generic_form, generic_forms, iree_opt_path

# (name, text, message substring)
INVALID = [
    # ---- dominance -------------------------------------------------------------------------
    ("use_before_def_same_block", """\
func.func @f() -> i32 {
  %a = arith.addi %b, %b : i32  // ERR
  %b = arith.constant 1 : i32
  return %a : i32
}""", "'arith.addi' op operand #0 does not dominate this use"),
    ("use_before_def_generic", """\
func.func @f() {
  "foo.use"(%v) : (i32) -> ()  // ERR
  %v = "foo.def"() : () -> i32
  return
}""", "operand #0 does not dominate this use"),
    ("use_across_blocks", """\
func.func @f(%c: i1) -> i32 {
  "cf.cond_br"(%c)[^bb1, ^bb2] <{operandSegmentSizes = array<i32: 1, 0, 0>}> : (i1) -> ()
^bb1:
  %x = arith.constant 1 : i32
  "cf.br"()[^bb2] : () -> ()
^bb2:
  return %x : i32  // ERR
}""", "'func.return' op operand #0 does not dominate this use"),
    ("block_arg_across_blocks", """\
func.func @f(%c: i1) -> i32 {
  "cf.cond_br"(%c)[^bb1, ^bb2] <{operandSegmentSizes = array<i32: 1, 0, 0>}> : (i1) -> ()
^bb1:
  %y = arith.constant 1 : i32
  "cf.br"(%y)[^bb3] : (i32) -> ()
^bb3(%x: i32):
  return %x : i32
^bb2:
  return %x : i32  // ERR
}""", "does not dominate this use"),
    ("use_in_nested_region_before_def", """\
func.func @f() {
  "foo.r"() ({
    "foo.use"(%v) : (i32) -> ()  // ERR
  }) : () -> ()
  %v = "foo.def"() : () -> i32
  return
}""", "operand #0 does not dominate this use"),
    ("value_from_outside_isolated_func", """\
"foo.wrap"() ({
  %v = "foo.def"() : () -> i32
  func.func @g() -> i32 {
    return %v : i32  // ERR
  }
  "foo.end"() : () -> ()
}) : () -> ()""", "'func.return' op using value defined outside the region (operand #0)"),
    ("module_value_in_func", """\
%v = "foo.def"() : () -> i32
func.func @g() {
  "foo.use"(%v) : (i32) -> ()  // ERR
  return
}""", "'foo.use' op using value defined outside the region"),
    # ---- terminators ------------------------------------------------------------------------
    ("empty_entry_block", """\
func.func @f() {  // ERR
^bb0:
}""", "'func.func' op empty block: expect at least a terminator"),
    ("empty_second_block", """\
func.func @f() {  // ERR
  "cf.br"()[^bb1] : () -> ()
^bb1:
}""", "empty block: expect at least a terminator"),
    ("empty_body", """\
func.func private @f() {  // ERR
}""", "expected non-empty function body"),
    ("missing_terminator", """\
func.func @f() {
  %a = arith.constant 1 : i32  // ERR
}""", "block with no terminator"),
    ("op_after_terminator", """\
func.func @f() {
  "func.return"() : () -> ()  // ERR
  %a = arith.constant 1 : i32
}""", "'func.return' op must be the last operation in the parent block"),
    ("return_outside_func", """\
"func.return"() : () -> ()  // ERR""", "'func.return' op expects parent op 'func.func'"),
    # ---- func ---------------------------------------------------------------------------
    ("return_count", """\
func.func @f() -> (i32, i32) {
  %a = arith.constant 1 : i32
  return %a : i32  // ERR
}""", "'func.return' op has 1 operands, but enclosing function (@f) returns 2"),
    ("return_count_none", """\
func.func @f(%a: i32) {
  return %a : i32  // ERR
}""", "has 1 operands, but enclosing function (@f) returns 0"),
    ("return_type", """\
func.func @f() -> i32 {
  %a = arith.constant 1 : i64
  return %a : i64  // ERR
}""", "type of return operand 0 ('i64') doesn't match function result type ('i32') in function @f"),
    ("entry_arg_type", """\
"func.func"() <{function_type = (i32) -> (), sym_name = "f"}> ({  // ERR
^bb0(%a: i64):
  "func.return"() : () -> ()
}) : () -> ()""", "type of entry block argument #0('i64') must match the type of the corresponding "
                  "argument in function signature('i32')"),
    ("entry_arg_count", """\
"func.func"() <{function_type = (i32) -> (), sym_name = "f"}> ({  // ERR
^bb0:
  "func.return"() : () -> ()
}) : () -> ()""", "entry block must have 1 arguments to match function signature"),
    ("arg_attrs_count", """\
"func.func"() <{function_type = (i32) -> (), sym_name = "f", sym_visibility = "private", arg_attrs = [{}, {}]}> ({  // ERR
}) : () -> ()""", "expects argument attribute array to have the same number of elements as the number of "
                  "function arguments, got 2, but expected 1"),
    ("res_attrs_not_dicts", """\
"func.func"() <{function_type = () -> i32, sym_name = "f", sym_visibility = "private", res_attrs = [1]}> ({  // ERR
}) : () -> ()""", "attribute 'res_attrs' failed to satisfy constraint: Array of dictionary attributes"),
    ("bad_visibility", """\
"func.func"() <{function_type = () -> (), sym_name = "f", sym_visibility = "secret"}> ({  // ERR
}) : () -> ()""", 'visibility expected to be one of ["public", "private", "nested"], but got "secret"'),
    ("public_declaration", """\
func.func @f()  // ERR""", "symbol declaration cannot have public visibility"),
    ("duplicate_symbol", """\
func.func private @f()
func.func private @f()  // ERR""", "redefinition of symbol named 'f'"),
    ("duplicate_symbol_nested_module", """\
module @m {
  func.func private @g()
  func.func @g() {  // ERR
    return
  }
}""", "redefinition of symbol named 'g'"),
    ("call_unknown", """\
func.func @f() {
  call @nope() : () -> ()  // ERR
  return
}""", "'func.call' op 'nope' does not reference a valid function"),
    ("call_not_a_function", """\
"foo.sym"() {sym_name = "s"} : () -> ()
func.func @f() {
  call @s() : () -> ()  // ERR
  return
}""", "'s' does not reference a valid function"),
    ("call_operand_type", """\
func.func private @g(i32)
func.func @f(%a: i64) {
  call @g(%a) : (i64) -> ()  // ERR
  return
}""", "operand type mismatch: expected operand type 'i32', but provided 'i64' for operand number 0"),
    ("call_operand_count", """\
func.func private @g(i32)
func.func @f(%a: i32) {
  call @g(%a, %a) : (i32, i32) -> ()  // ERR
  return
}""", "incorrect number of operands for callee: expected 1, but got 2"),
    ("call_result_count", """\
func.func private @g() -> i32
func.func @f() {
  call @g() : () -> ()  // ERR
  return
}""", "incorrect number of results for callee: expected 1, but got 0"),
    ("call_result_type", """\
func.func private @g(i32) -> f32
func.func @f(%a: i32) {
  %r = call @g(%a) : (i32) -> i32  // ERR
  return
}""", "result type mismatch at index 0"),
    # ---- arith ------------------------------------------------------------------------------
    ("addi_on_floats", """\
func.func @f(%a: f32) {
  %r = arith.addi %a, %a : f32  // ERR
  return
}""", "'arith.addi' op operand #0 must be signless-non-zero-bitwidth-integer-like, but got 'f32'"),
    ("addi_on_signed", """\
func.func @f(%a: si32) {
  %r = arith.addi %a, %a : si32  // ERR
  return
}""", "must be signless-non-zero-bitwidth-integer-like, but got 'si32'"),
    ("addf_on_ints", """\
func.func @f(%a: i32) {
  %r = arith.addf %a, %a : i32  // ERR
  return
}""", "'arith.addf' op operand #0 must be floating-point-like, but got 'i32'"),
    ("binary_mixed_types", """\
func.func @f(%a: i32, %b: i64) {
  %r = "arith.addi"(%a, %b) : (i32, i64) -> i32  // ERR
  return
}""", "requires the same type for all operands and results"),
    ("cmpi_result_type", """\
func.func @f(%a: i32) {
  %r = "arith.cmpi"(%a, %a) <{predicate = 0 : i64}> : (i32, i32) -> i32  // ERR
  return
}""", "'arith.cmpi' op result #0 must be bool-like, but got 'i32'"),
    ("cmpi_result_shape", """\
func.func @f(%a: tensor<4xi32>) {
  %r = "arith.cmpi"(%a, %a) <{predicate = 0 : i64}> : (tensor<4xi32>, tensor<4xi32>) -> i1  // ERR
  return
}""", "result type has i1 element type and same shape as operands"),
    ("cmpi_on_floats", """\
func.func @f(%a: f32) {
  %r = arith.cmpi slt, %a, %a : f32  // ERR
  return
}""", "must be signless-non-zero-bitwidth-integer-like, but got 'f32'"),
    ("cmpf_on_ints", """\
func.func @f(%a: i32) {
  %r = arith.cmpf olt, %a, %a : i32  // ERR
  return
}""", "must be floating-point-like, but got 'i32'"),
    ("cmp_unknown_predicate", """\
func.func @f(%a: i32) {
  %r = arith.cmpi less, %a, %a : i32  // ERR
  return
}""", "unknown comparison predicate \"less\""),
    ("select_condition_type", """\
func.func @f(%c: i32, %a: f32) {
  %r = arith.select %c, %a, %a : i32, f32  // ERR
  return
}""", "'arith.select' op operand #0 must be bool-like, but got 'i32'"),
    ("select_condition_shape", """\
func.func @f(%c: vector<3xi1>, %a: vector<4xf32>) {
  %r = arith.select %c, %a, %a : vector<3xi1>, vector<4xf32>  // ERR
  return
}""", "condition is signless i1 or has matching shape"),
    ("extsi_narrower", """\
func.func @f(%a: i32) {
  %r = arith.extsi %a : i32 to i16  // ERR
  return
}""", "operand type 'i32' and result type 'i16' are cast incompatible"),
    ("extsi_same_width", """\
func.func @f(%a: tensor<4xi32>) {
  %r = arith.extsi %a : tensor<4xi32> to tensor<4xi32>  // ERR
  return
}""", "are cast incompatible"),
    ("trunci_wider", """\
func.func @f(%a: i32) {
  %r = arith.trunci %a : i32 to i64  // ERR
  return
}""", "operand type 'i32' and result type 'i64' are cast incompatible"),
    ("extf_narrower", """\
func.func @f(%a: f32) {
  %r = arith.extf %a : f32 to f16  // ERR
  return
}""", "operand type 'f32' and result type 'f16' are cast incompatible"),
    ("truncf_wider", """\
func.func @f(%a: f16) {
  %r = arith.truncf %a : f16 to f32  // ERR
  return
}""", "are cast incompatible"),
    ("extsi_of_index", """\
func.func @f(%a: index) {
  %r = arith.extsi %a : index to i128  // ERR
  return
}""", "operand #0 must be signless-fixed-width-integer-like, but got 'index'"),
    ("sitofp_to_int", """\
func.func @f(%a: i32) {
  %r = arith.sitofp %a : i32 to i64  // ERR
  return
}""", "result #0 must be floating-point-like, but got 'i64'"),
    ("fptosi_from_int", """\
func.func @f(%a: i32) {
  %r = arith.fptosi %a : i32 to i64  // ERR
  return
}""", "operand #0 must be floating-point-like, but got 'i32'"),
    ("cast_shape_mismatch", """\
func.func @f(%a: tensor<4xi32>) {
  %r = arith.extsi %a : tensor<4xi32> to tensor<5xi64>  // ERR
  return
}""", "input and output have the same tensor dimensions"),
    ("index_cast_no_index", """\
func.func @f(%a: i32) {
  %r = arith.index_cast %a : i32 to i64  // ERR
  return
}""", "operand type 'i32' and result type 'i64' are cast incompatible"),
    ("index_cast_both_index", """\
func.func @f(%a: index) {
  %r = arith.index_cast %a : index to index  // ERR
  return
}""", "operand type 'index' and result type 'index' are cast incompatible"),
    ("bitcast_width", """\
func.func @f(%a: i32) {
  %r = arith.bitcast %a : i32 to f64  // ERR
  return
}""", "operand type 'i32' and result type 'f64' are cast incompatible"),
    ("bitcast_index", """\
func.func @f(%a: i64) {
  %r = arith.bitcast %a : i64 to index  // ERR
  return
}""", "result #0 must be non-zero-bitwidth-signless-integer-or-float-like"),
    ("extended_mul_types", """\
func.func @f(%a: i32) {
  %r:2 = "arith.mulsi_extended"(%a, %a) : (i32, i32) -> (i32, i64)  // ERR
  return
}""", "all of {lhs, rhs, low, high} have same type"),
    ("extended_add_overflow_type", """\
func.func @f(%a: i32) {
  %r:2 = "arith.addui_extended"(%a, %a) : (i32, i32) -> (i32, i32)  // ERR
  return
}""", "result #1 must be bool-like, but got 'i32'"),
    ("constant_type_mismatch", """\
func.func @f() {
  %a = "arith.constant"() <{value = 1 : i64}> : () -> i32  // ERR
  return
}""", "all of {value, result} have same type"),
    ("flag_on_wrong_op", """\
func.func @f(%a: f32) {
  %r = arith.addf %a, %a overflow<nsw> : f32  // ERR
  return
}""", "'arith.addf' has no 'overflow' flag"),
    ("unknown_fastmath_flag", """\
func.func @f(%a: f32) {
  %r = arith.addf %a, %a fastmath<quick> : f32  // ERR
  return
}""", "unknown fastmath flag 'quick'"),
    ("exact_on_addi", """\
func.func @f(%a: i32) {
  %r = arith.addi %a, %a exact : i32  // ERR
  return
}""", "'arith.addi' has no 'exact' flag"),
    # ---- math ------------------------------------------------------------------------------
    ("math_float_on_int", """\
func.func @f(%a: i32) {
  %r = math.sqrt %a : i32  // ERR
  return
}""", "'math.sqrt' op operand #0 must be floating-point-like, but got 'i32'"),
    ("math_int_on_float", """\
func.func @f(%a: f32) {
  %r = math.absi %a : f32  // ERR
  return
}""", "'math.absi' op operand #0 must be signless-integer-like, but got 'f32'"),
    ("math_isnan_result", """\
func.func @f(%a: f32) {
  %r = "math.isnan"(%a) : (f32) -> f32  // ERR
  return
}""", "result #0 must be bool-like, but got 'f32'"),
    ("math_fma_types", """\
func.func @f(%a: f32, %b: f64) {
  %r = "math.fma"(%a, %a, %b) : (f32, f32, f64) -> f32  // ERR
  return
}""", "requires the same type for all operands and results"),
    ("math_fpowi_result", """\
func.func @f(%a: f32, %i: i64) {
  %r = "math.fpowi"(%a, %i) : (f32, i64) -> f64  // ERR
  return
}""", "all of {lhs, result} have same type"),
    ("math_fastmath_on_int_op", """\
func.func @f(%i: i32) {
  %r = math.absi %i fastmath<fast> : i32  // ERR
  return
}""", "'math.absi' has no 'fastmath' flag"),
    ("math_unknown_fastmath_flag", """\
func.func @f(%a: f32) {
  %r = math.exp %a fastmath<bogus> : f32  // ERR
  return
}""", "unknown fastmath flag 'bogus'"),
    # ---- tensor ---------------------------------------------------------------------------
    ("tensor_empty_too_many_sizes", """\
func.func @f(%n: index) {
  %r = tensor.empty(%n) : tensor<4x4xf32>  // ERR
  return
}""", "'tensor.empty' op incorrect number of dynamic sizes, has 1, expected 0"),
    ("tensor_empty_too_few_sizes", """\
func.func @f(%n: index) {
  %r = tensor.empty(%n) : tensor<?x?xf32>  // ERR
  return
}""", "incorrect number of dynamic sizes, has 1, expected 2"),
    ("tensor_extract_indices", """\
func.func @f(%t: tensor<4x4xf32>, %i: index) {
  %r = tensor.extract %t[%i] : tensor<4x4xf32>  // ERR
  return
}""", "incorrect number of indices for extract_element"),
    ("tensor_insert_indices", """\
func.func @f(%t: tensor<4xf32>, %x: f32, %i: index) {
  %r = tensor.insert %x into %t[%i, %i] : tensor<4xf32>  // ERR
  return
}""", "incorrect number of indices"),
    ("tensor_cast_incompatible", """\
func.func @f(%t: tensor<4xf32>) {
  %r = tensor.cast %t : tensor<4xf32> to tensor<5xf32>  // ERR
  return
}""", "operand type 'tensor<4xf32>' and result type 'tensor<5xf32>' are cast incompatible"),
    ("tensor_splat_sizes", """\
func.func @f(%a: f32) {
  %r = tensor.splat %a : tensor<?xf32>  // ERR
  return
}""", "incorrect number of dynamic sizes, has 0, expected 1"),
    # ---- counts and required attributes (generic forms) ------------------------------------
    ("operand_count", """\
func.func @f(%a: i32) {
  %r = "arith.addi"(%a) : (i32) -> i32  // ERR
  return
}""", "'arith.addi' op expected 2 operands, but found 1"),
    ("operand_count_select", """\
func.func @f(%a: i32) {
  %r = "arith.select"(%a) : (i32) -> i32  // ERR
  return
}""", "'arith.select' op expected 3 operands, but found 1"),
    ("result_count", """\
func.func @f(%a: i32) {
  %r:2 = "arith.negf"(%a) : (i32) -> (i32, i32)  // ERR
  return
}""", "'arith.negf' op requires one result"),
    ("func_without_region", """\
"func.func"() <{function_type = () -> (), sym_name = "f"}> : () -> ()  // ERR""",
     "'func.func' op requires one region"),
    ("return_with_region", """\
func.func @f() {
  "func.return"() ({  // ERR
  }) : () -> ()
}""", "'func.return' op requires zero regions"),
    ("return_with_successor", """\
func.func @f() {
  "func.return"()[^bb1] : () -> ()  // ERR
^bb1:
  return
}""", "'func.return' op requires 0 successors but found 1"),
    ("constant_with_region", """\
func.func @f() {
  %r = "arith.constant"() <{value = 1 : i32}> ({  // ERR
  }) : () -> i32
  return
}""", "'arith.constant' op requires zero regions"),
    ("module_two_regions", """\
"builtin.module"() ({  // ERR
}, {
}) : () -> ()""", "'builtin.module' op requires one region"),
    ("call_without_callee", """\
func.func @f() {
  "func.call"() : () -> ()  // ERR
  return
}""", "'func.call' op requires attribute 'callee'"),
    ("cmpi_without_predicate", """\
func.func @f(%a: i32) {
  %r = "arith.cmpi"(%a, %a) : (i32, i32) -> i1  // ERR
  return
}""", "'arith.cmpi' op requires attribute 'predicate'"),
    ("cmpi_predicate_type", """\
func.func @f(%a: i32) {
  %r = "arith.cmpi"(%a, %a) <{predicate = 1 : i32}> : (i32, i32) -> i1  // ERR
  return
}""", "attribute 'predicate' must be an i64"),
    ("func_without_type", """\
"func.func"() <{sym_name = "f"}> ({  // ERR
  "func.return"() : () -> ()
}) : () -> ()""", "'func.func' op requires attribute 'function_type'"),
    ("tensor_insert_scalar_type", """\
func.func @f(%t: tensor<4xf32>, %x: i32, %i: index) {
  %r = "tensor.insert"(%x, %t, %i) : (i32, tensor<4xf32>, index) -> tensor<4xf32>  // ERR
  return
}""", "scalar type matches element type of dest"),
    ("tensor_insert_result_type", """\
func.func @f(%t: tensor<4xf32>, %x: f32, %i: index) {
  %r = "tensor.insert"(%x, %t, %i) : (f32, tensor<4xf32>, index) -> tensor<5xf32>  // ERR
  return
}""", "result type matches type of dest"),
    ("tensor_extract_result_type", """\
func.func @f(%t: tensor<4xf32>, %i: index) {
  %r = "tensor.extract"(%t, %i) : (tensor<4xf32>, index) -> i32  // ERR
  return
}""", "result type matches element type of tensor"),
    ("tensor_extract_index_type", """\
func.func @f(%t: tensor<4xf32>, %i: i32) {
  %r = "tensor.extract"(%t, %i) : (tensor<4xf32>, i32) -> f32  // ERR
  return
}""", "operand #1 must be variadic of index, but got 'i32'"),
    ("tensor_empty_size_type", """\
func.func @f(%n: i32) {
  %r = "tensor.empty"(%n) : (i32) -> tensor<?xf32>  // ERR
  return
}""", "operand #0 must be variadic of index, but got 'i32'"),
    ("tensor_dim_result_type", """\
func.func @f(%t: tensor<4xf32>, %i: index) {
  %r = "tensor.dim"(%t, %i) : (tensor<4xf32>, index) -> i32  // ERR
  return
}""", "result #0 must be index, but got 'i32'"),
    ("tensor_dim_rank_0", """\
func.func @f(%t: tensor<f32>, %i: index) {
  %r = tensor.dim %t, %i : tensor<f32>  // ERR
  return
}""", "operand #0 must be non-0-ranked or unranked tensor"),
    ("tensor_dim_not_tensor", """\
func.func @f(%a: f32, %i: index) {
  %r = tensor.dim %a, %i : f32  // ERR
  return
}""", "expected a tensor type, got f32"),
    ("tensor_cast_not_tensor", """\
func.func @f(%a: f32) {
  %r = tensor.cast %a : f32 to f32  // ERR
  return
}""", "expected a tensor type, got f32"),
    ("tensor_splat_type", """\
func.func @f(%a: f32) {
  %r = "tensor.splat"(%a) : (f32) -> tensor<4xf64>  // ERR
  return
}""", "operand type matches element type of result"),
    ("tensor_from_elements_types", """\
func.func @f(%a: f32) {
  %r = "tensor.from_elements"(%a, %a) : (f32, f32) -> tensor<2xi32>  // ERR
  return
}""", "operand types match result element type"),
    # ---- inherent attributes in a custom form's attribute dictionary (MLIR: strict properties)
    ("inherent_attr_in_dict_arith", """\
func.func @f(%a: i32) {
  %c = arith.addi %a, %a {overflowFlags = #arith.overflow<nsw>} : i32  // ERR
  return
}""", "inherent attribute 'overflowFlags' cannot be parsed from attr-dict"),
    ("inherent_attr_in_dict_constant", """\
func.func @f() {
  %c = arith.constant {value = 1 : i32} 2 : i32  // ERR
  return
}""", "inherent attribute 'value' cannot be parsed from attr-dict"),
    ("inherent_attr_in_dict_math", """\
func.func @f(%a: f32) {
  %r = math.exp %a {fastmath = #arith.fastmath<fast>} : f32  // ERR
  return
}""", "inherent attribute 'fastmath' cannot be parsed from attr-dict"),
    ("inherent_attr_in_dict_call", """\
func.func @f() {
  func.call @f() {callee = @f} : () -> ()  // ERR
  return
}""", "inherent attribute 'callee' cannot be parsed from attr-dict"),
    ("inferred_attr_in_func_dict", """\
func.func @f() attributes {sym_visibility = "private"} {  // ERR
  return
}""", "'sym_visibility' is an inferred attribute and should not be specified"),
    ("inherent_attr_in_module_dict", """\
module attributes {sym_name = "x"} {  // ERR
}""", "inherent attribute 'sym_name' cannot be parsed from attr-dict"),
    ("module_attr_without_dialect", """\
module @a attributes {foo} {  // ERR
}""", "can only contain attributes with dialect-prefixed names, found: 'foo'"),
    ("module_without_block", """\
module {
  "builtin.module"() ({  // ERR
  }) : () -> ()
}""", "region with 1 blocks"),
    ("constant_unsigned", """\
func.func @f() {
  %d = arith.constant 255 : ui8  // ERR
  return
}""", "integer return type must be signless"),
    # ---- CFG structure -------------------------------------------------------------------
    ("successors_not_last", """\
func.func @f() {
  "foo.br"()[^bb1] : () -> ()  // ERR
  "foo.other"() : () -> ()
  "func.return"() : () -> ()
^bb1:
  return
}""", "operation with block successors must terminate its parent block"),
    ("successors_not_last_unregistered_region", """\
"foo.r"() ({
  "foo.br"()[^bb1] : () -> ()  // ERR
  "foo.x"() : () -> ()
^bb1:
  "foo.x"() : () -> ()
}) : () -> ()""", "operation with block successors must terminate its parent block"),
    ("branch_to_entry_block", """\
"func.func"() <{function_type = () -> (), sym_name = "f"}> ({  // ERR
^bb0:
  "cf.br"()[^bb0] : () -> ()
}) : () -> ()""", "entry block of region may not have predecessors"),
    ("module_two_blocks", """\
module {  // ERR
^bb0:
  "foo.x"() : () -> ()
^bb1:
  "foo.x"() : () -> ()
}""", "'builtin.module' op expects region #0 to have 0 or 1 blocks"),
    ("block_in_other_region", """\
func.func @f() {
  "foo.r"() ({
    "foo.br"()[^bb1] : () -> ()  // ERR
  }) : () -> ()
^bb1:
  return
}""", "reference to an undefined block '^bb1'"),
    # ---- names, blocks, results (parse time) -------------------------------------------------
    ("redefinition_of_value", """\
func.func @f() {
  %a = arith.constant 1 : i32
  %a = arith.constant 2 : i32  // ERR
  return
}""", "redefinition of SSA value '%a'"),
    ("redefinition_of_argument", """\
func.func @f(%a: i32) {
  %a = arith.constant 2 : i32  // ERR
  return
}""", "redefinition of SSA value '%a'"),
    ("undefined_value", """\
func.func @f() {
  "foo.use"(%nope) : (i32) -> ()  // ERR
  return
}""", "use of undeclared SSA value name '%nope'"),
    ("value_type_conflict", """\
func.func @f(%a: i32) {
  %r = arith.addf %a, %a : f32  // ERR
  return
}""", "use of value '%a' expects different type than prior uses: 'f32' vs 'i32'"),
    ("undefined_block", """\
func.func @f() {
  "cf.br"()[^missing] : () -> ()  // ERR
}""", "reference to an undefined block '^missing'"),
    ("redefinition_of_block", """\
func.func @f() {
  "cf.br"()[^bb1] : () -> ()
^bb1:
  "cf.br"()[^bb1] : () -> ()
^bb1:  // ERR
  return
}""", "redefinition of block '^bb1'"),
    ("too_many_result_names", """\
func.func @f() {
  %a, %b = arith.constant 1 : i32  // ERR
  return
}""", "operation defines 1 results but was provided 2 to bind"),
    ("too_few_result_names", """\
func.func @f() {
  %a = "foo.two"() : () -> (i32, i32)  // ERR
  return
}""", "operation defines 2 results but was provided 1 to bind"),
    ("result_group_count", """\
func.func @f() {
  %a:3 = "foo.two"() : () -> (i32, i32)  // ERR
  return
}""", "operation defines 2 results but was provided 3 to bind"),
    ("result_index_out_of_range", """\
func.func @f() {
  %a:2 = "foo.two"() : () -> (i32, i32)
  "foo.use"(%a#2) : (i32) -> ()  // ERR
  return
}""", "%a#2"),
]

# Valid IR with a twist: both mlirtext and iree-opt must accept it.
VALID = {
    "module_graph_region_forward_refs": """\
module {
  "foo.use"(%later) : (i32) -> ()
  func.func @a() {
    call @b() : () -> ()
    return
  }
  %later = "foo.def"() : () -> i32
  func.func private @b()
}""",
    "forward_symbol_in_nested_module": """\
module @outer {
  func.func @f() {
    "foo.ref"() {target = @m::@g} : () -> ()
    return
  }
  module @m {
    func.func @g() {
      return
    }
  }
}""",
    "cfg_block_arguments": """\
func.func @f(%c: i1, %a: i32) -> i32 {
  "cf.cond_br"(%c, %a)[^loop, ^exit] <{operandSegmentSizes = array<i32: 1, 1, 0>}> : (i1, i32) -> ()
^loop(%x: i32):
  %y = arith.addi %x, %a : i32
  %more = arith.cmpi slt, %y, %a : i32
  "cf.cond_br"(%more, %y, %y)[^loop, ^done] <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (i1, i32, i32) -> ()
^done(%z: i32):
  "cf.br"(%z)[^ret] : (i32) -> ()
^exit:
  "cf.br"(%a)[^ret] : (i32) -> ()
^ret(%r: i32):
  return %r : i32
}""",
    "cfg_def_dominates_later_blocks": """\
func.func @f(%c: i1) -> i32 {
  %v = arith.constant 7 : i32
  "cf.cond_br"(%c)[^a, ^b] <{operandSegmentSizes = array<i32: 1, 0, 0>}> : (i1) -> ()
^a:
  "cf.br"()[^join] : () -> ()
^b:
  "cf.br"()[^join] : () -> ()
^join:
  return %v : i32
}""",
    "cfg_blocks_out_of_order": """\
func.func @f() -> i32 {
  "cf.br"()[^def] : () -> ()
^use:
  return %v : i32
^def:
  %v = arith.constant 1 : i32
  "cf.br"()[^use] : () -> ()
}""",
    "unreachable_block_any_order": """\
func.func @f() -> i32 {
  %a = arith.constant 1 : i32
  return %a : i32
^dead:
  %c = arith.addi %b, %a : i32
  %b = arith.constant 2 : i32
  return %c : i32
^dead_loop:
  "cf.br"()[^dead_loop2] : () -> ()
^dead_loop2:
  "cf.br"()[^dead_loop] : () -> ()
}""",
    "unreachable_block_uses_later_block": """\
func.func @f() -> i32 {
  %a = arith.constant 1 : i32
  return %a : i32
^b1:
  return %d : i32
^b2:
  %d = arith.constant 2 : i32
  "cf.br"()[^b1] : () -> ()
}""",
    "nested_unregistered_regions_use_outer_values": """\
func.func @f(%a: i32) -> i32 {
  %b = arith.constant 2 : i32
  %r = "foo.loop"(%a) ({
  ^bb0(%i: i32):
    %s = arith.addi %i, %b : i32
    "foo.inner"() ({
      %t = arith.muli %s, %a : i32
      "foo.yield"(%t) : (i32) -> ()
    }) : () -> ()
    "foo.yield"(%s) : (i32) -> ()
  }) : (i32) -> i32
  return %r : i32
}""",
    "unregistered_region_no_order": """\
func.func @f() {
  "foo.graph"() ({
    "foo.use"(%later) : (i32) -> ()
    %later = "foo.def"() : () -> i32
  }) : () -> ()
  return
}""",
    "unregistered_region_without_terminator": """\
func.func @f() {
  "foo.r"() ({
    %a = arith.constant 1 : i32
  }, {
  }) : () -> ()
  return
}""",
    "value_used_by_later_block_in_region_of_unregistered_op": """\
func.func @f() {
  "foo.r"() ({
    %x = "foo.def"() : () -> i32
    "foo.br"()[^next] : () -> ()
  ^next:
    "foo.use"(%x) : (i32) -> ()
  }) : () -> ()
  return
}""",
    "calls_in_any_order_and_recursion": """\
func.func @even(%n: i32) -> i1 {
  %r = call @odd(%n) : (i32) -> i1
  return %r : i1
}
func.func @odd(%n: i32) -> i1 {
  %r = call @even(%n) : (i32) -> i1
  return %r : i1
}""",
    "same_symbol_in_different_modules": """\
module @a {
  func.func private @f()
}
module @b {
  func.func private @f()
}""",
    "private_and_nested_declarations": """\
module {
  func.func private @p(i32) -> i32
  module @inner {
    func.func nested @n()
  }
}""",
    "non_symbol_ops_with_sym_like_attrs": """\
"foo.a"() {name = "f"} : () -> ()
"foo.b"() {name = "f"} : () -> ()""",
    "shadowing_in_isolated_funcs": """\
func.func @f(%a: i32) -> i32 {
  return %a : i32
}
func.func @g(%a: i32) -> i32 {
  return %a : i32
}""",
    "result_groups": """\
func.func @f() -> i32 {
  %a:2, %b = "foo.three"() : () -> (i32, i32, i32)
  %s = arith.addi %a#0, %a#1 : i32
  %t = arith.addi %s, %b : i32
  return %t : i32
}""",
    "index_casts_and_memref_casts": """\
func.func @f(%m: memref<4xi32>, %i: i32) {
  %a = arith.index_cast %m : memref<4xi32> to memref<4xindex>
  %b = arith.index_castui %i : i32 to index
  %c = arith.bitcast %m : memref<4xi32> to memref<4xf32>
  return
}""",
    "select_on_unranked": """\
func.func @f(%c: i1, %a: tensor<*xf32>) {
  %r = arith.select %c, %a, %a : tensor<*xf32>
  return
}""",
    "tensor_cast_dynamic": """\
func.func @f(%t: tensor<?x4xf32>) {
  %a = tensor.cast %t : tensor<?x4xf32> to tensor<3x?xf32>
  %b = tensor.cast %a : tensor<3x?xf32> to tensor<*xf32>
  return
}""",
}


def _marked_line(text: str) -> int:
    lines = [i + 1 for i, line in enumerate(text.split("\n")) if line.rstrip().endswith("// ERR")]
    assert len(lines) == 1, "mark exactly one line with // ERR"
    return lines[0]


def test_case_names_unique():
    names = [c[0] for c in INVALID]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("name,text,message", INVALID, ids=[c[0] for c in INVALID])
def test_invalid(name, text, message):
    result = parse_and_verify(text, "input.mlir")
    errors = [d for d in result.diagnostics if d.severity == "error"]
    assert errors, f"mlirtext accepts invalid IR:\n{text}"
    listing = "\n".join(d.format() for d in errors)
    wanted = _marked_line(text)
    assert any(message in d.message for d in errors), f"no error says {message!r}:\n{listing}"
    assert any(message in d.message and d.line_col[0] == wanted for d in errors), \
        f"the error is not on line {wanted}:\n{listing}"


@pytest.mark.parametrize("name", list(VALID))
def test_valid(name):
    result = parse_and_verify(VALID[name], "input.mlir")
    assert result.ok, "mlirtext rejects valid IR:\n" + "\n".join(d.format() for d in result.diagnostics)


def _iree_error_lines(texts: list[str]) -> dict[int, list[str]]:
    """Run iree-opt once over all texts (split input); the error lines it gives each text."""
    import subprocess
    joined, starts, line = "", [], 1
    for text in texts:
        starts.append(line)
        joined += text + "\n// -----\n"
        line += text.count("\n") + 2
    proc = subprocess.run([iree_opt_path(), "--allow-unregistered-dialect", "--split-input-file",
                           "-o", "/dev/null", "-"], input=joined, capture_output=True, text=True,
                          timeout=300)
    found: dict[int, list[str]] = {i: [] for i in range(len(texts))}
    for m in re.finditer(r"^<stdin>:(\d+):\d+: error: (.*)$", proc.stderr, re.M):
        at = int(m.group(1))
        index = max(i for i, s in enumerate(starts) if s <= at)
        found[index].append(f"{at - starts[index] + 1}: {m.group(2)}")
    return found


@pytest.mark.oracle
def test_iree_opt_rejects_the_invalid_cases():
    """We do not reject valid IR: every INVALID case is invalid for iree-opt too, and iree-opt
    puts an error on the same line (so `expected-error@...` annotations of MLIR's own tests
    fit mlirtext's diagnostics)."""
    texts = [c[1] for c in INVALID]
    found = _iree_error_lines(texts)
    accepted = [INVALID[i][0] for i, errors in found.items() if not errors]
    assert not accepted, f"iree-opt accepts what mlirtext rejects: {accepted}"
    elsewhere = {INVALID[i][0]: errors for i, errors in found.items()
                 if not any(e.startswith(f"{_marked_line(texts[i])}:") for e in errors)}
    assert not elsewhere, f"iree-opt reports these on another line: {elsewhere}"


@pytest.mark.oracle
def test_iree_opt_accepts_the_valid_cases():
    names = list(VALID)
    if generic_forms([VALID[n] for n in names]) is None:
        for n in names:
            out, err = generic_form(VALID[n])
            assert out is not None, f"{n}: iree-opt rejects it:\n{err}"


@pytest.mark.parametrize("name,text,message", INVALID, ids=[c[0] for c in INVALID])
def test_invalid_ir_still_prints(name, text, message):
    """Printing IR that does not verify (an editor may ask) never fails: where the custom
    form cannot show an op, the generic form does."""
    result = parse_and_verify(text, "input.mlir")
    if result.module is not None:
        to_text(result)
        to_text(result, generic=True)


def test_raising_attribute_check_is_an_internal_error():
    """A dialect's check of a discardable attribute that raises is reported at the op, as a bug
    (mlirtext/verifier.py), never a traceback and never a pass."""
    test = Dialect("test", discardable_attrs={"test.checked": lambda op, attr, index: [][index or 0]})
    result = parse_and_verify('func.func @f() attributes {test.checked = 1 : i32} {\n  return\n}\n', "in.mlir",
                              registry=Registry(dialects=[test]))
    [d] = result.diagnostics
    assert d.line_col[0] == 1
    assert d.message.startswith("internal error: check of attribute 'test.checked' on 'func.func' failed: "
                                "IndexError: list index out of range at test_verifier.py:")
