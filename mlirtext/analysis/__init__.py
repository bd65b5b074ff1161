"""Editor analysis over mlirtext's parser and verifier, usable without a client: documents
parsed piece by piece (`document`), what is at an offset (`index`), hover, navigation,
outline, tokens, completion, inlay hints, signature help, lowered forms, code actions and
commands. `server/mlirtext_server` is the thin LSP layer on top."""
