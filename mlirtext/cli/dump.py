"""`mlirtext dump FILE.vmpack`: print a module file's sections (like iree-dump-module)."""
from __future__ import annotations

import sys

from ..diagnostics import Diagnostic, report
from ..vm.dump import dump
from ..vm.modfile import ModuleFileError, read_module_file
from ..vm.signing import SignatureError, load_public_keys
from .io import read_bytes


def main(args) -> int:
    got = read_bytes(args.input)
    if got is None:
        return 1
    try:
        keys = load_public_keys(args.trusted_keys) if args.trusted_keys else None
        mf = read_module_file(got[0], keys)
    except (ModuleFileError, SignatureError) as e:
        report([Diagnostic("error", f"{args.input}: {e}")])
        return 1
    sys.stdout.write(dump(mf, args.ir, args.print_target_code))
    return 0
