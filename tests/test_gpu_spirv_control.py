"""vulkan-spirv control flow and index memrefs, each run on the `vulkan` device (Mesa lavapipe
without a GPU) against the reference device on the same inputs: scf.while as a structured loop
(values carried through OpPhis, a condition region with a branch of its own, results after the
loop), ordered comparisons of i1 values (true is -1 for the signed predicates), memrefs of index
(held as i64, the VM's layout, across dispatches too), and constant splat globals (no array)."""
from __future__ import annotations

import numpy as np
import pytest

from mlirtext.api import parse_and_verify
from mlirtext.compiler.driver import compile_module
from mlirtext.compiler.module_writer import pack
from mlirtext.sweeps.gpu_suite import check_function
from mlirtext.sweeps.lowering_suite import lower_file
from mlirtext.vm.vm import LoadedModule

from . import corpus
from .gpu_status import need_tools
from .test_gpu_vulkan import _vulkan_or_skip

ID = "#id = affine_map<(d0) -> (d0)>\n"

# Collatz: per element, the steps to reach 1 and the largest value on the way. The condition
# region branches (an scf.if), the body branches, three values are carried, two are results.
COLLATZ = ID + """func.func @collatz(%x: tensor<64xi32>) -> (tensor<64xi32>, tensor<64xi32>) {
  %e = tensor.empty() : tensor<64xi32>
  %r:2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<64xi32>) outs(%e, %e : tensor<64xi32>, tensor<64xi32>) {
  ^bb0(%a: i32, %o: i32, %p: i32):
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c3 = arith.constant 3 : i32
    %limit = arith.constant 200 : i32
    %res:3 = scf.while (%v = %a, %n = %c0, %m = %a) : (i32, i32, i32) -> (i32, i32, i32) {
      %big = arith.cmpi sgt, %v, %c1 : i32
      %go = scf.if %big -> (i1) {
        %short = arith.cmpi slt, %n, %limit : i32
        scf.yield %short : i1
      } else {
        %false = arith.constant false
        scf.yield %false : i1
      }
      scf.condition(%go) %v, %n, %m : i32, i32, i32
    } do {
    ^bb0(%v: i32, %n: i32, %m: i32):
      %bit = arith.andi %v, %c1 : i32
      %odd = arith.cmpi ne, %bit, %c0 : i32
      %next = scf.if %odd -> (i32) {
        %t = arith.muli %v, %c3 : i32
        %u = arith.addi %t, %c1 : i32
        scf.yield %u : i32
      } else {
        %h = arith.shrsi %v, %c1 : i32
        scf.yield %h : i32
      }
      %n1 = arith.addi %n, %c1 : i32
      %m1 = arith.maxsi %m, %next : i32
      scf.yield %next, %n1, %m1 : i32, i32, i32
    }
    linalg.yield %res#1, %res#2 : i32, i32
  } -> (tensor<64xi32>, tensor<64xi32>)
  return %r#0, %r#1 : tensor<64xi32>, tensor<64xi32>
}
"""

# stablehlo.while on tensors: bufferized into an scf.while that carries nothing (its state in
# memrefs) and whose condition region loads, compares and stores. (The bound comes as a
# tensor<1xf32>: the reference device is handed a 0-d argument as shape (1,) and refuses it.)
HLO_WHILE = """func.func @double_until(%x: tensor<4xf32>, %bound: tensor<1xf32>) -> (tensor<4xf32>, tensor<i32>) {
  %limit = stablehlo.reshape %bound : (tensor<1xf32>) -> tensor<f32>
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %two = stablehlo.constant dense<2.0> : tensor<4xf32>
  %r:2 = stablehlo.while(%v = %x, %n = %zero) : tensor<4xf32>, tensor<i32>
  cond {
    %init = stablehlo.constant dense<0.0> : tensor<f32>
    %s = stablehlo.reduce(%v init: %init) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
    %c = stablehlo.compare LT, %s, %limit : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %v2 = stablehlo.multiply %v, %two : tensor<4xf32>
    %n2 = stablehlo.add %n, %one : tensor<i32>
    stablehlo.return %v2, %n2 : tensor<4xf32>, tensor<i32>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<i32>
}
"""

PREDICATES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
I1_COMPARES = ID + """func.func @compare_i1(%a: tensor<4xi1>, %b: tensor<4xi1>) -> ({types}) {{
  %e = tensor.empty() : tensor<4xi1>
  %r:10 = linalg.generic {{indexing_maps = [#id, #id{maps}], iterator_types = ["parallel"]}}
      ins(%a, %b : tensor<4xi1>, tensor<4xi1>) outs({outs} : {types}) {{
  ^bb0(%x: i1, %y: i1{block}):
{compares}
    linalg.yield {results} : {scalars}
  }} -> ({types})
  return {returns} : {types}
}}
""".format(types=", ".join(["tensor<4xi1>"] * 10), maps=", #id" * 10, outs=", ".join(["%e"] * 10),
           block="".join(f", %o{k}: i1" for k in range(10)),
           compares="\n".join(f"    %c{k} = arith.cmpi {p}, %x, %y : i1" for k, p in enumerate(PREDICATES)),
           results=", ".join(f"%c{k}" for k in range(10)), scalars=", ".join(["i1"] * 10),
           returns=", ".join(f"%r#{k}" for k in range(10)))

# index tensors in and out (negative values: stores sign-extend), a non-constant index operand
# of tensor.extract, and a constant index tensor (a Private array of i64).
INDEX_MATH = ID + """func.func @index_math(%idx: tensor<6xindex>, %table: tensor<8xf32>) -> (tensor<6xindex>, tensor<6xf32>) {
  %shift = arith.constant dense<[3, 3, -2, 0, 7, 1]> : tensor<6xindex>
  %e1 = tensor.empty() : tensor<6xindex>
  %e2 = tensor.empty() : tensor<6xf32>
  %r:2 = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel"]}
      ins(%idx, %shift : tensor<6xindex>, tensor<6xindex>) outs(%e1, %e2 : tensor<6xindex>, tensor<6xf32>) {
  ^bb0(%i: index, %s: index, %o: index, %p: f32):
    %d = arith.subi %i, %s : index
    %v = tensor.extract %table[%i] : tensor<8xf32>
    linalg.yield %d, %v : index, f32
  } -> (tensor<6xindex>, tensor<6xf32>)
  return %r#0, %r#1 : tensor<6xindex>, tensor<6xf32>
}
"""

# Start indices computed by one dispatch and read by the next as `memref<index>` (host buffers
# of int64 between them), clamped into range as StableHLO says.
DYNAMIC_SLICE = """func.func @slice(%x: tensor<5x6xf32>, %starts: tensor<2xi64>) -> (tensor<2x3xf32>, tensor<5x6xf32>) {
  %s0 = stablehlo.slice %starts [0:1] : (tensor<2xi64>) -> tensor<1xi64>
  %s1 = stablehlo.slice %starts [1:2] : (tensor<2xi64>) -> tensor<1xi64>
  %i = stablehlo.reshape %s0 : (tensor<1xi64>) -> tensor<i64>
  %j = stablehlo.reshape %s1 : (tensor<1xi64>) -> tensor<i64>
  %r = stablehlo.dynamic_slice %x, %i, %j, sizes = [2, 3] : (tensor<5x6xf32>, tensor<i64>, tensor<i64>) -> tensor<2x3xf32>
  %n = stablehlo.negate %r : tensor<2x3xf32>
  %u = stablehlo.dynamic_update_slice %x, %n, %j, %i : (tensor<5x6xf32>, tensor<2x3xf32>, tensor<i64>, tensor<i64>) -> tensor<5x6xf32>
  return %r, %u : tensor<2x3xf32>, tensor<5x6xf32>
}
"""


def _compile(text: str):
    need_tools("spirv-as", "spirv-val")
    _vulkan_or_skip()
    return compile_module(parse_and_verify(text).module, "vulkan-spirv", validate=True)


def _both(text: str, name: str, *args) -> tuple[list, list]:
    """(vulkan outputs, reference outputs) of @name on `args`."""
    data = pack(_compile(text))
    return LoadedModule(data, "vulkan").function(name)(*args), LoadedModule(data, "reference").function(name)(*args)


def _same(got, want) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert np.array_equal(g, w), f"vulkan {g} != reference {w}"


def test_while_loop_carries_values_through_a_branching_condition():
    x = np.concatenate([np.arange(-2, 60), [27, 97]]).astype(np.int32)
    got, want = _both(COLLATZ, "collatz", x)
    _same(got, want)
    steps, peak = got
    assert steps[x == 27][0] == 111 and peak[x == 27][0] == 9232   # (a known Collatz orbit)
    assert steps[x == 97][0] == 118 and np.all(steps[x <= 1] == 0) and np.all(peak[x <= 1] == x[x <= 1])


def test_while_loop_from_stablehlo_while():
    x = np.array([0.5, -0.25, 1.0, 0.125], np.float32)
    for limit in (0.0, 10.0, 1000.0):
        got, want = _both(HLO_WHILE, "double_until", x, np.array([limit], np.float32))
        _same(got, want)
    assert int(got[1]) == 10 and np.array_equal(got[0], x * 2.0 ** 10)   # sum 1.375: 704 < 1000 <= 1408


def test_ordered_comparisons_of_i1_values():
    a = np.array([False, False, True, True])
    b = np.array([False, True, False, True])
    got, want = _both(I1_COMPARES, "compare_i1", a, b)
    _same(got, want)
    signed, unsigned = (-a.astype(int), -b.astype(int)), (a.astype(int), b.astype(int))
    ops = (np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal)
    expected = [ops[0](*unsigned), ops[1](*unsigned)] + [op(*signed) for op in ops[2:]] + \
        [op(*unsigned) for op in ops[2:]]
    for predicate, g, e in zip(PREDICATES, got, expected):
        assert np.array_equal(g, e), f"cmpi {predicate}: {g} != {e}"


def test_index_tensors_in_and_out():
    idx = np.array([0, 7, 2, 5, 1, 3], np.int64)
    table = np.linspace(-1, 1, 8, dtype=np.float32)
    got, want = _both(INDEX_MATH, "index_math", idx, table)
    _same(got, want)
    assert np.array_equal(got[0], idx - [3, 3, -2, 0, 7, 1]) and np.array_equal(got[1], table[idx])


@pytest.mark.parametrize("starts", [(1, 2), (4, -2), (-3, 9)])
def test_index_memrefs_between_dispatches(starts):
    x = np.arange(30, dtype=np.float32).reshape(5, 6)
    got, want = _both(DYNAMIC_SLICE, "slice", x, np.array(starts, np.int64))
    _same(got, want)
    i, j = min(max(starts[0], 0), 3), min(max(starts[1], 0), 3)
    assert np.array_equal(got[0], x[i:i + 2, j:j + 3])


def test_constant_splats_are_values_not_arrays():
    """A splat `util.unfoldable_constant` is a kernel that copies a constant global: without an
    array (which lavapipe took minutes to compile at this size) it runs at once."""
    text = """func.func @dot() -> tensor<i32> {
  %lhs = util.unfoldable_constant dense<2> : tensor<1024xi32>
  %rhs = util.unfoldable_constant dense<-3> : tensor<1024xi32>
  %res = "stablehlo.dot"(%lhs, %rhs) : (tensor<1024xi32>, tensor<1024xi32>) -> tensor<i32>
  return %res : tensor<i32>
}"""
    compiled = compile_module(parse_and_verify(text).module, "reference", fold=False)
    need_tools("spirv-as", "spirv-val")
    _vulkan_or_skip()
    from mlirtext.targets.gpu import compile_gpu
    exe = compile_gpu(parse_and_verify(compiled.reference_mlir).module, list(compiled.kernels), "vulkan-spirv",
                      validate=True)
    assert len(exe.code) >= 2 and not any(" Private" in text for text in exe.assembly.values())
    compiled.gpu["vulkan-spirv"] = exe
    data = pack(compiled)
    got, want = LoadedModule(data, "vulkan").function("dot")(), LoadedModule(data, "reference").function("dot")()
    _same(got, want)
    assert int(got[0]) == -6 * 1024


CORPUS_FUNCTIONS = [
    ("stablehlo/stablehlo__tests__interpret__while.mlir", "while"),
    ("iree/tests__e2e__tosa_ops__while.mlir", "while_test_iter2"),
    ("stablehlo/stablehlo__tests__interpret__compare.mlir", "compare_op_test_i1"),
    ("iree/tests__e2e__stablehlo_ops__select.mlir", "select"),
    ("stablehlo/stablehlo__tests__interpret__dynamic_update_slice.mlir", "dynamic_update_slice"),
    ("iree/tests__e2e__stablehlo_ops__dynamic_slice.mlir", "dynamic_1d_slice"),
    ("iree/tests__e2e__stablehlo_ops__dot.mlir", "dot"),
]


@pytest.mark.parametrize("rel,function", CORPUS_FUNCTIONS, ids=lambda x: x.split("__")[-1])
def test_corpus_functions_match_on_vulkan(rel, function):
    """Corpus programs that failed on vulkan-spirv for these forms, compared with the interpreter
    as `mlirtext sweep gpu` does (every chunk of the file that defines the function)."""
    if not corpus.available():
        pytest.skip("no corpus (../shared/corpus)")
    need_tools("spirv-as", "spirv-val")
    _vulkan_or_skip()
    lowered = [o for o in lower_file(str(corpus.CORPUS), rel) if o.function == function]
    assert lowered and all(o.reached == "llvm" for o in lowered)
    for o in lowered:
        results = check_function(f"{rel}@{function}", function, o.texts["source"], ("vulkan-spirv",), ("vulkan",))
        assert [(r.test.rpartition(" [")[2], r.status) for r in results] == [
            ("vulkan-spirv]", "pass"), ("vulkan-spirv on vulkan]", "pass")], results


@pytest.mark.parametrize("text", [COLLATZ, HLO_WHILE, I1_COMPARES, INDEX_MATH, DYNAMIC_SLICE],
                         ids=["collatz", "hlo_while", "i1_compares", "index_math", "dynamic_slice"])
@pytest.mark.parametrize("target,tools", [("cuda", ("ptxas",)), ("rocm", ("ld.lld", "llvm-readelf"))])
def test_the_same_forms_validate_for_cuda_and_rocm(text, target, tools):
    """The LLVM targets get these forms from LLVM itself: their code passes ptxas (sm_80, sm_90)
    and links as an HSA code object."""
    need_tools(*tools)
    compiled = compile_module(parse_and_verify(text).module, target, validate=True)
    assert compiled.gpu[target].validated and compiled.gpu[target].code
