"""The llvm dialect as LLVM IR text (`mlirtext.targets.llvm_ir`, `mlirtext translate`): every example
and benchmark program, the flags and intrinsics the lowering emits, the corpus's llvm files, and
clear errors for what cannot be translated."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from mlirtext import api
from mlirtext.cli import main
from mlirtext.targets.llvm_cpu import parse_ir
from mlirtext.targets.llvm_ir import TranslateError, translate_module
from mlirtext.transforms.conversions.levels import lowering_pipeline
from mlirtext.transforms.pass_manager import PassManager
from mlirtext.transforms.pipeline import parse_pipeline

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = sorted((ROOT / "examples").glob("*.mlir")) + \
    sorted((ROOT / "benchmarks" / "programs").glob("*.mlir"))


def parse(text: str, name: str = "input.mlir"):
    result = api.parse_and_verify(text, name)
    assert result.ok, [d.format() for d in result.diagnostics]
    return result.module


def lowered(path: Path):
    module = parse(path.read_text(), str(path))
    assert not PassManager(parse_pipeline(lowering_pipeline(module, "llvm"))).run(module)
    return module


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_every_program_translates_and_llvm_verifies_it(path):
    ir = translate_module(lowered(path))
    parse_ir(ir)  # llvmlite parse + verify
    assert "define ptr @" in ir and "; mlirtext.abi = " in ir


SNIPPET = """
module {
  llvm.mlir.global private constant @table(dense<[1.0, -0.0, 2.5, 0x7FC00000]> : tensor<4xf32>) {addr_space = 0 : i32} : !llvm.array<4 x f32>
  llvm.mlir.global internal @counter(7 : i32) {addr_space = 0 : i32} : i32
  llvm.func @kernel(%a: i32, %b: i32, %x: f32, %v: vector<8xf32>, %p: !llvm.ptr, %i: i64) -> f32 {
    %0 = llvm.add %a, %b overflow<nsw, nuw> : i32
    %1 = llvm.sdiv exact %0, %b : i32
    %2 = llvm.fadd %x, %x {fastmathFlags = #llvm.fastmath<fast>} : f32
    %3 = llvm.fmul %2, %x {fastmathFlags = #llvm.fastmath<nnan, ninf>} : f32
    %4 = llvm.getelementptr inbounds %p[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    %5 = llvm.load %4 {alignment = 4 : i64} : !llvm.ptr -> f32
    %6 = llvm.intr.exp(%v) : (vector<8xf32>) -> vector<8xf32>
    %7 = llvm.intr.fabs(%5) : (f32) -> f32
    %8 = llvm.intr.smax(%0, %1) : (i32, i32) -> i32
    %9 = llvm.mlir.constant(3.0 : f32) : f32
    %10 = llvm.fcmp "olt" %7, %9 : f32
    %11 = llvm.select %10, %3, %7 : i1, f32
    %c = llvm.mlir.constant(16 : i64) : i64
    "llvm.intr.memcpy"(%p, %4, %c) <{isVolatile = false}> : (!llvm.ptr, !llvm.ptr, i64) -> ()
    %12 = llvm.sitofp %8 : i32 to f32
    %13 = llvm.fadd %11, %12 : f32
    %g = llvm.mlir.addressof @table : !llvm.ptr
    %14 = llvm.load %g : !llvm.ptr -> f32
    %15 = llvm.fadd %13, %14 : f32
    llvm.br ^bb1(%15 : f32)
  ^bb1(%r: f32):
    llvm.return %r : f32
  }
}
"""


def test_flags_intrinsics_globals_and_block_arguments():
    ir = translate_module(parse(SNIPPET))
    parse_ir(ir)
    for expected in ("add nuw nsw i32 %a, %b", "sdiv exact i32", "fadd fast float %x, %x", "fmul nnan ninf float",
                     "getelementptr inbounds float, ptr %p, i64 %i", "load float, ptr %v.5, align 4",
                     "call <8 x float> @llvm.exp.v8f32(<8 x float> %v)", "@llvm.fabs.f32", "@llvm.smax.i32",
                     "call void @llvm.memcpy.p0.p0.i64(ptr %p, ptr %v.5, i64 16, i1 false)",
                     "declare <8 x float> @llvm.exp.v8f32(<8 x float>)",
                     "fcmp olt float %v.8, 0x4008000000000000", "@counter = internal global i32 7",
                     "load float, ptr @table", "phi float [ %v.15, %entry ]"):
        assert expected in ir, expected
    # -0.0 and a NaN keep their bits; exact hex floats
    table = next(line for line in ir.splitlines() if line.startswith("@table"))
    assert "float 0x8000000000000000" in table and "float 0x7FF8000000000000" in table


def test_corpus_llvm_files_translate_function_by_function():
    """Most functions of the corpus's llvm-dialect files translate, and what does verifies in LLVM."""
    from tests import corpus
    if not corpus.available():
        pytest.skip("corpus not available")
    total = translated = 0
    for rel in ("llvm-project/mlir__test__Dialect__LLVMIR__roundtrip.mlir",
                "llvm-project/mlir__test__Target__LLVMIR__llvmir-types.mlir"):
        for chunk in api.parse_chunks(corpus.file_text(rel), rel, True):
            if chunk.module is None or any(d.severity == "error" for d in chunk.diagnostics):
                continue
            errors = []
            ir = translate_module(chunk.module, errors)
            parse_ir(ir)
            symbols = [op for op in chunk.module.regions[0].blocks[0].ops if op.sym_name]
            total += len(symbols)
            translated += len(symbols) - len(errors)
            assert all(isinstance(e, TranslateError) and e.span is not None for e in errors)
    assert total > 100 and translated / total >= 0.7, (translated, total)


UNTRANSLATABLE = """llvm.func @f(%x: i32) -> i32 {
  %0 = llvm.inline_asm "bswap $0", "=r,r" %x : (i32) -> i32
  llvm.return %0 : i32
}
"""


def test_untranslatable_op_is_named_with_its_location():
    with pytest.raises(TranslateError) as info:
        translate_module(parse(UNTRANSLATABLE))
    assert "'llvm.inline_asm'" in info.value.message
    assert info.value.span.line_col[0] == 2


def test_cli_translates_llvm_level_input(tmp_path, capsys):
    src = tmp_path / "k.mlir"
    src.write_text(SNIPPET)
    out = tmp_path / "k.ll"
    assert main(["translate", "--mlir-to-llvmir", str(src), "-o", str(out)]) == 0
    parse_ir(out.read_text())


def test_cli_refuses_input_above_llvm_unless_lowering(tmp_path, capsys):
    src = tmp_path / "p.mlir"
    src.write_text((ROOT / "benchmarks" / "programs" / "softmax.mlir").read_text())
    assert main(["translate", "--mlir-to-llvmir", str(src)]) == 1
    err = capsys.readouterr().err
    assert re.search(r"p\.mlir:\d+:\d+: error: the input is at the hlo level: lower it to llvm first "
                     r"\(mlirtext opt .* --lower-to=llvm\), or pass --lower", err)
    assert "^" in err and "Traceback" not in err
    assert main(["translate", "--mlir-to-llvmir", "--lower", str(src)]) == 0
    ir = capsys.readouterr().out
    parse_ir(ir)
    assert "@llvm.exp" not in ir and "@expf" not in ir  # expanded by polynomial approximation


def test_cli_reports_untranslatable_op_mlir_style(tmp_path, capsys):
    src = tmp_path / "bad.mlir"
    src.write_text(UNTRANSLATABLE)
    assert main(["translate", "--mlir-to-llvmir", str(src)]) == 1
    err = capsys.readouterr().err
    assert f"{src}:2:8: error: cannot translate 'llvm.inline_asm' to LLVM IR" in err
    assert "Traceback" not in err


def test_cli_optimize_shows_vector_loops(tmp_path, capsys):
    src = tmp_path / "e.mlir"
    src.write_text((ROOT / "benchmarks" / "programs" / "elementwise.mlir").read_text())
    assert main(["translate", "--mlir-to-llvmir", "--lower", "--optimize", str(src)]) == 0
    assert re.search(r"<\d+ x float>", capsys.readouterr().out)
