"""`mlirtext lsp`: the language server on standard input/output."""
from __future__ import annotations

import os
import sys


def main(args) -> int:
    # The server is a package of its own (mlirtext_server); running from a checkout, it sits in server/.
    try:
        from mlirtext_server.server import main as lsp_main
    except ImportError:
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        sys.path.insert(0, os.path.join(root, "server"))
        from mlirtext_server.server import main as lsp_main
    return lsp_main(open_worker=not args.no_open_worker)
