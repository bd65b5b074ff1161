"""`mlirtext keygen KEY`: a new Ed25519 key pair for signing module files (vm/signing.py)."""
from __future__ import annotations

from ..diagnostics import Diagnostic, report
from ..vm.signing import SignatureError, generate_key


def main(args) -> int:
    try:
        fingerprint = generate_key(args.output)
    except SignatureError as e:
        report([Diagnostic("error", str(e))])
        return 1
    print(f"wrote {args.output} (private: keep it secret) and {args.output}.pub; key {fingerprint}")
    return 0
