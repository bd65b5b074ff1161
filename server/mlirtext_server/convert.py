"""mlirtext.analysis results (document offsets) as LSP types (UTF-16 positions)."""
from __future__ import annotations

from typing import Optional

from lsprotocol import types as T

from mlirtext.analysis.document import DocDiagnostic, Document
from mlirtext.analysis.positions import LineIndex
from mlirtext.analysis.source_links import FileLocation
from mlirtext.analysis.workspace import path_to_uri

_SEVERITY = {"error": T.DiagnosticSeverity.Error, "warning": T.DiagnosticSeverity.Warning,
             "note": T.DiagnosticSeverity.Information, "remark": T.DiagnosticSeverity.Hint}


def clean(text: str) -> str:
    """Text safe to send as JSON: a lone surrogate from invalid input becomes U+FFFD."""
    return text.encode("utf-8", "replace").decode("utf-8") if not text.isascii() else text


def lsp_range(doc: Document, start: int, end: int) -> T.Range:
    return T.Range(start=T.Position(*doc.lines.position(start)), end=T.Position(*doc.lines.position(end)))


def lsp_location(loc) -> T.Location:
    if isinstance(loc, FileLocation):   # a line of a file that is not an MLIR document (a loc's source)
        at = T.Position(line=max(loc.line - 1, 0), character=max(loc.column - 1, 0))
        return T.Location(uri=path_to_uri(loc.path), range=T.Range(start=at, end=at))
    return T.Location(uri=loc.doc.uri, range=lsp_range(loc.doc, loc.start, loc.end))


def lsp_diagnostic(doc: Document, d: DocDiagnostic) -> T.Diagnostic:
    related = [T.DiagnosticRelatedInformation(
        location=T.Location(uri=doc.uri, range=lsp_range(doc, s, e)), message=clean(m)) for s, e, m in d.related]
    end = d.end if d.end > d.start else d.start + 1  # an empty range would not be shown
    return T.Diagnostic(range=lsp_range(doc, d.start, min(end, len(doc.text))), message=clean(d.message),
                        severity=_SEVERITY.get(d.severity, T.DiagnosticSeverity.Error), source="mlirtext",
                        related_information=related or None)


def text_edits(doc: Document, edits) -> list[T.TextEdit]:
    return [T.TextEdit(range=lsp_range(doc, s, e), new_text=clean(text)) for s, e, text in edits]


def text_edits_in(text: str, edits, lines: Optional[LineIndex] = None) -> list[T.TextEdit]:
    """Edits in offsets of `text` (a document's text that is not analysed) as LSP edits."""
    lines = lines or LineIndex(text)
    return [T.TextEdit(range=T.Range(start=T.Position(*lines.position(s)), end=T.Position(*lines.position(e))),
                       new_text=clean(new)) for s, e, new in edits]


def workspace_edit(ws, edits_by_uri: dict) -> T.WorkspaceEdit:
    changes = {}
    for uri, edits in edits_by_uri.items():
        doc = ws.get(uri)
        if doc is None:
            doc = next((d for d in ws.documents() if d.uri == uri), None)
        if doc is not None:
            changes[uri] = text_edits(doc, edits)
    return T.WorkspaceEdit(changes=changes)


SYMBOL_KINDS = {"module": T.SymbolKind.Module, "function": T.SymbolKind.Function, "variable": T.SymbolKind.Variable,
                "namespace": T.SymbolKind.Namespace, "constant": T.SymbolKind.Constant}
COMPLETION_KINDS = {"operation": T.CompletionItemKind.Function, "module": T.CompletionItemKind.Module,
                    "variable": T.CompletionItemKind.Variable, "label": T.CompletionItemKind.Reference,
                    "function": T.CompletionItemKind.Function, "constant": T.CompletionItemKind.Constant,
                    "type": T.CompletionItemKind.TypeParameter}


def lsp_symbol(doc: Document, s) -> T.DocumentSymbol:
    return T.DocumentSymbol(name=clean(s.name) or "?", kind=SYMBOL_KINDS.get(s.kind, T.SymbolKind.Variable),
                            range=lsp_range(doc, s.start, s.end),
                            selection_range=lsp_range(doc, s.name_start, s.name_end),
                            detail=clean(s.detail) or None, children=[lsp_symbol(doc, c) for c in s.children])
