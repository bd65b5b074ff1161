"""Editor analysis over mlirtext's parser and verifier, usable without a client: documents
parsed piece by piece (`document`), what is at an offset (`index`), hover, navigation,
outline, tokens, completion, inlay hints, signature help, lowered forms, code actions,
commands, and the encoding errors of a file that is not UTF-8. `server/mlirtext_server` is the thin LSP layer on top."""
