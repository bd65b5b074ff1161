"""mlirtext's language server: `mlirtext lsp` or `python -m mlirtext_server` (stdio)."""
