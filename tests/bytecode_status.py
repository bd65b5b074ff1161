"""How much of the corpus goes through MLIR bytecode: the round-trip figures of issue 25.

    PYTHONPATH=. python -m tests.bytecode_status [--files GLOB] [--sample N] [--direction read|write] [-v]

Over the valid cases iree-opt accepts, both directions:
read: iree-opt writes each as bytecode (`--emit-bytecode`), mlirtext reads that bytecode,
  parses and verifies it, and prints it in generic form; a case passes when iree-opt
  gives the same generic form for our print as for the original text. iree-opt runs
  once for all cases' bytecode (the chunks of a `--split-input-file` run, split at the
  marker before each magic number) and once per generic-form batch.
write: mlirtext parses the original and writes it as bytecode (`opt --emit-bytecode`);
  a case passes when MLIR (iree-base-compiler 3.13's, the same build as iree-opt, in
  process through its Python bindings: iree-opt cannot split bytecode inputs) reads our
  bytecode to the same generic form as the original text.
"""
from __future__ import annotations

import argparse
import fnmatch
import subprocess
from collections import Counter
from dataclasses import dataclass

from mlirtext.api import parse_and_verify, to_text
from mlirtext.syntax import bytecode
from mlirtext.syntax.bytecode_writer import BytecodeWriteError, from_module

from . import corpus
from .corpus_status import generic_forms
from .oracle import iree_opt_path

_SPLIT = b"// -----\n" + bytecode.MAGIC


@dataclass
class Outcome:
    case: corpus.Case
    stage: str          # "passed", or where it failed: "written", "read", "parsed", "same generic form"
    detail: str = ""


def iree_bytecode(texts: list[str]) -> list:
    """iree-opt's bytecode of each text (None where it wrote none), in as few runs as possible."""
    if not texts:
        return []
    proc = subprocess.run([iree_opt_path(), "--allow-unregistered-dialect", "--split-input-file",
                           "--emit-bytecode", "-"], input="\n// -----\n".join(texts).encode(),
                          capture_output=True, timeout=900)
    chunks = proc.stdout.split(_SPLIT)
    chunks = [chunks[0]] + [bytecode.MAGIC + c for c in chunks[1:]]
    if proc.returncode == 0 and len(chunks) == len(texts):
        return chunks
    if len(texts) == 1:
        return [None]
    half = len(texts) // 2
    return iree_bytecode(texts[:half]) + iree_bytecode(texts[half:])


def _ours(data: bytes) -> tuple[str, str | None]:
    """(stage reached, our generic print or the problem)."""
    try:
        text = bytecode.to_text(data)
    except bytecode.BytecodeError as e:
        return "read", str(e)
    result = parse_and_verify(text, "<bytecode>")
    if not result.ok:
        return "parsed", result.diagnostics[0].format() if result.diagnostics else "no module"
    return "same generic form", to_text(result, generic=True)


def run(cases: list) -> list[Outcome]:
    texts = [c.text for c in cases]
    written = iree_bytecode(texts)
    originals = generic_forms(texts)
    outcomes, ours = [], {}
    for i, (case, data) in enumerate(zip(cases, written)):
        if data is None:
            outcomes.append(Outcome(case, "written", "iree-opt wrote no bytecode"))
            continue
        stage, got = _ours(data)
        outcomes.append(Outcome(case, stage, got))
        if stage == "same generic form":
            ours[i] = got
    keys = sorted(ours)
    for i, (form, why) in zip(keys, generic_forms([ours[i] for i in keys])):
        if form is not None and form == originals[i][0]:
            outcomes[i] = Outcome(cases[i], "passed")
        elif form is None:
            outcomes[i].detail = "iree-opt rejects our print: " + why
        else:
            outcomes[i].detail = "iree-opt's generic form differs"
    return outcomes


def run_write(cases: list) -> list[Outcome]:
    from iree.compiler import ir     # the dev extra; imported here so the read figure needs only iree-opt

    def generic(source) -> str | None:
        context = ir.Context()
        context.allow_unregistered_dialects = True
        try:
            return ir.Module.parse(source, context).operation.get_asm(print_generic_op_form=True)
        except ir.MLIRError as e:
            return "MLIR rejects it: " + str(e).splitlines()[0]

    outcomes = []
    for case in cases:
        result = parse_and_verify(case.text, case.case_id)
        if not result.ok:
            outcomes.append(Outcome(case, "parsed", result.diagnostics[0].format() if result.diagnostics else ""))
            continue
        try:
            data = from_module(result.module)
        except BytecodeWriteError as e:
            outcomes.append(Outcome(case, "written", str(e)))
            continue
        ours, original = generic(data), generic(case.text)
        if ours == original:
            outcomes.append(Outcome(case, "passed"))
        else:
            why = ours if ours and ours.startswith("MLIR rejects") else "MLIR's generic form differs"
            outcomes.append(Outcome(case, "same generic form", why))
    return outcomes


def select(files: str = "*", sample: int = 0) -> list:
    cases = [c for c in corpus.cases() if c.valid and c.iree_accepts and fnmatch.fnmatch(c.file, files)]
    if sample and len(cases) > sample:
        step = len(cases) / sample
        cases = [cases[int(k * step)] for k in range(sample)]
    return cases


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", default="*")
    ap.add_argument("--sample", type=int, default=0, help="an evenly spread sample of N cases")
    ap.add_argument("--direction", choices=("read", "write", "both"), default="both")
    ap.add_argument("-v", action="store_true", help="list each failing case")
    args = ap.parse_args()
    cases = select(args.files, args.sample)
    if args.direction in ("read", "both"):
        _report(run(cases), "bytecode written by iree-opt, read by mlirtext", "iree-opt's", args.v)
    if args.direction in ("write", "both"):
        _report(run_write(cases), "bytecode written by mlirtext, read by MLIR 3.13", "MLIR's", args.v)


def _report(outcomes: list, what: str, whose: str, verbose: bool) -> None:
    passed = sum(o.stage == "passed" for o in outcomes)
    print(f"{what}: {passed}/{len(outcomes)} cases give {whose} generic form of the original")
    for stage, n in Counter(o.stage for o in outcomes if o.stage != "passed").most_common():
        print(f"  failed at {stage}: {n}")
    reasons = Counter(o.detail.split("\n")[0][:110] for o in outcomes if o.stage != "passed")
    for why, n in reasons.most_common(25):
        print(f"  {n:5d}  {why}")
    if verbose:
        for o in outcomes:
            if o.stage != "passed":
                print(f"{o.case.case_id}: {o.stage}: {o.detail.splitlines()[0][:200] if o.detail else ''}")


if __name__ == "__main__":
    main()
