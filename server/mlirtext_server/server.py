"""The protocol layer: pygls handlers of a few lines each over `mlirtext.analysis`.

Threads: analysis of a document version runs on one worker thread (versions are
analysed in order, and a request is answered from the newest finished version);
lowering, running and pipelines run on another pool, so they never hold up hover.
A handler that raises is answered with an InternalError and one line on stderr
(`protocol.py`); the commands, whose answers the extension shows, answer with an
`error` field instead (`safe`).
"""
from __future__ import annotations

import asyncio
import base64
import binascii
import functools
import gc
import json
import logging
import os
import sys
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple, Optional

from lsprotocol import types as T
from pygls.exceptions import FeatureNotificationError
from pygls.lsp.server import LanguageServer

from mlirtext.analysis import (actions, bytecode_documents, cluster_run, commands, completion, debug_commands,
                               file_tests, formatting, inlay, lowered_forms, navigation, op_hover, outline,
                               signature, target_code, tokens)
from mlirtext.analysis.document import Document, layout_of
from mlirtext.analysis.graph_request import graph_command as function_graph_answer
from mlirtext.analysis.hover import hover as hover_at
from mlirtext.analysis.open_worker import DiagnosticsWorker
from mlirtext.analysis.positions import LineIndex
from mlirtext.analysis.scratch import Scratch
from mlirtext.analysis.workspace import Workspace, uri_to_path
from mlirtext.irdl_dialects import irdl_files, registry_with
from mlirtext.syntax.gc_pause import gc_paused

from .bytecode_requests import DECODE_BYTECODE, ENCODE_BYTECODE, bytecode_request
from .convert import (COMPLETION_KINDS, SYMBOL_KINDS, clean, lsp_diagnostic, lsp_location, lsp_range, text_edits_in,
                      workspace_edit)
from .log_format import OneLineFormatter
from .protocol import CURRENT_REQUEST, PARSE_ERROR, MlirProtocol, PreEncoded, one_line
from .whole_document import WholeDocumentAnswers, tokens_in_build

log = logging.getLogger("mlirtext_server")

#: Changes closer together than this are analysed once (diagnostics follow typing).
DEBOUNCE_S = 0.1
#: After this long without an analysis, garbage from old versions is collected.
IDLE_COLLECT_S = 5.0
#: How long a hover waits for an op's next level before answering without it.
LOWERED_WAIT_S = 0.25


class MlirServer(LanguageServer):
    def __init__(self):
        super().__init__("mlirtext", "0.1.0", text_document_sync_kind=T.TextDocumentSyncKind.Incremental,
                         protocol_cls=MlirProtocol)
        self.cancel_events: dict = {}   # request id or progress token -> threading.Event
        self.ws = Workspace()
        self.analysis_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mlirtext-analysis")
        self.work_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="mlirtext-work")
        self.lowered = lowered_forms.LoweredForms(self.work_pool)
        self.open_worker = DiagnosticsWorker()   # started by `main`
        self.targets = target_code.TargetCache()   # filled by mlirtext.pipeline, read by hover
        self.pending: dict[str, asyncio.Future] = {}
        self.whole_document = WholeDocumentAnswers(self.analysis_pool)
        self.client_wants_tokens = False   # the client declared semantic tokens: prepare them per version
        self.timers: dict[str, asyncio.TimerHandle] = {}
        self.last_change: dict[str, float] = {}
        self.idle_timer: Optional[asyncio.TimerHandle] = None
        self.replaced = False   # a version was replaced or a document closed since the last collection
        # (uri, function) -> (the faults, the level of the step) of the bisect that found its lowering crashing
        self.crashes: dict = {}
        self.scratch = Scratch()   # the repros and reduced modules of the debugging commands
        # The `mlirtext.cluster` setting (a Ray cluster's HOST:PORT, as `cluster.address`) and the child
        # process that joins it for the device list and runs
        self.cluster = cluster_run.ClusterDriver()

    def report_server_error(self, error: Exception, source) -> None:
        """Errors outside a request (pygls logged the line already, where it had one): a
        body that is not JSON is answered with ParseError and id null, as JSON-RPC says;
        a notification's handler that raised is logged in one line, not shown to the user
        (a handler failing on every keystroke would pop a message each time)."""
        if isinstance(error, (json.JSONDecodeError, UnicodeDecodeError, RecursionError)):   # nested too deep
            self.protocol.send_error(None, PARSE_ERROR, f"the message is not JSON: {one_line(error)}")
        elif source is FeatureNotificationError:
            log.error("a notification's handler failed: %s", one_line(error))

    # -- analysis scheduling --------------------------------------------------------------
    def schedule(self, uri: str, delay: float) -> None:
        timer = self.timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        loop = asyncio.get_running_loop()
        if delay <= 0:
            self._start(uri)
        else:
            self.timers[uri] = loop.call_later(delay, self._start, uri)

    def _start(self, uri: str) -> None:
        self.timers.pop(uri, None)
        loop = asyncio.get_running_loop()
        task = loop.create_task(self._analyse(uri))
        self.pending[uri] = task

    async def _analyse(self, uri: str) -> Optional[Document]:
        try:
            text_doc = self.workspace.get_text_document(uri)
            text, version = text_doc.source, text_doc.version or 0
        except Exception:  # noqa: BLE001 - closed meanwhile
            return None
        loop = asyncio.get_running_loop()
        try:
            doc, early = await loop.run_in_executor(self.analysis_pool, self._open_frozen, uri, text, version,
                                                    loop)
        except Exception:  # noqa: BLE001 - logged; requests keep the previous version
            log.exception("error while analysing %s", uri)
            return self.ws.get(uri)
        self._schedule_idle_collect()
        if early != doc.published:  # published already, unless the document's differ
            self._publish(doc, version, doc.published)
        if uri in self.workspace.text_documents:
            self.whole_document.prepare_tokens(doc, answer=self.client_wants_tokens)
        return doc

    def _publish(self, doc, version: int, diagnostics) -> None:
        """Diagnostics of `doc` (a Document, or an `_OpenedText` before it is built)."""
        if doc.uri in self.workspace.text_documents:
            self.text_document_publish_diagnostics(T.PublishDiagnosticsParams(
                uri=doc.uri, version=version, diagnostics=[lsp_diagnostic(doc, d) for d in diagnostics]))

    def _open_frozen(self, uri: str, text: str, version: int, loop):
        """Analyse; on a first open of a big document, publish its diagnostics (half of
        them computed by the worker process) before building the document. A big document's
        build includes its semantic tokens (`tokens_in_build`). Then move what
        exists to the collector's permanent generation, before the collector runs again: a
        collection over a big document's IR takes ~0.2-0.4 s and would land on the open or
        on a keystroke. Returns (the document, the diagnostics published early or None)."""
        early = None
        with gc_paused():
            if self.ws.get(uri) is None:
                layout = layout_of(text)
                early = self.open_worker.diagnostics(text, self.ws.filename(uri), layout)
                if early is not None:
                    loop.call_soon_threadsafe(self._publish, _OpenedText(uri, text, LineIndex(text)), version,
                                              early)
                doc = self.ws.open(uri, text, version, layout)
            else:
                doc = self.ws.open(uri, text, version)
                self.replaced = True
            tokens_in_build(doc)
            gc.freeze()
        return doc, early

    def _schedule_idle_collect(self) -> None:
        """Collect what earlier versions left behind once the user pauses (IDLE_COLLECT_S)."""
        if self.idle_timer is not None:
            self.idle_timer.cancel()
        self.idle_timer = asyncio.get_running_loop().call_later(IDLE_COLLECT_S, self._idle_collect)

    def _idle_collect(self) -> None:
        """A full collection takes seconds over a 10 MB document's IR: only when an earlier
        version or a closed document can have left garbage (a first open leaves none)."""
        self.idle_timer = None
        if not self.replaced:
            return
        self.replaced = False
        gc.unfreeze()
        gc.collect()
        gc.freeze()

    async def document(self, uri: str) -> Optional[Document]:
        """The newest analysed version of `uri`, after the analysis of a pending edit."""
        if uri in self.timers:
            self.schedule(uri, 0)
        task = self.pending.get(uri)
        if task is not None and not task.done():
            await asyncio.shield(task)
        doc = self.ws.get(uri)
        if doc is None and uri in self.workspace.text_documents:
            self.schedule(uri, 0)
            await asyncio.shield(self.pending[uri])
            doc = self.ws.get(uri)
        return doc


class _OpenedText(NamedTuple):
    """A text whose document is not built yet: enough to place its diagnostics."""

    uri: str
    text: str
    lines: LineIndex


server = MlirServer()


def safe(default):
    """A command's exception answers `default()` (the extension shows its `error` field),
    with one line on stderr."""
    def wrap(fn):
        @functools.wraps(fn)
        async def run(ls, *params):
            try:
                return await fn(ls, *params)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001
                log.error("%s failed: %s", fn.__name__, one_line(exc))
                return default()
        return run
    return wrap


def offset_of(doc: Document, position: T.Position) -> int:
    return doc.lines.offset(position.line, position.character)


#: A small module whose analysis warms the parser and verifier up.
WARM_UP_TEXT = """func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


# -- lifecycle and synchronisation ---------------------------------------------------------
@server.feature(T.INITIALIZE)
def initialize(ls: MlirServer, params: T.InitializeParams):
    roots = [uri_to_path(f.uri) for f in params.workspace_folders or []]
    if not roots and params.root_uri:
        roots = [uri_to_path(params.root_uri)]
    ls.ws.roots = [r for r in roots if r]
    text_document = params.capabilities.text_document
    ls.client_wants_tokens = text_document is not None and text_document.semantic_tokens is not None
    options = params.initialization_options if isinstance(params.initialization_options, dict) else {}
    _use_dialects(ls, options.get("dialects") or [])
    _use_cluster(ls, options.get("cluster"))


def _use_cluster(ls: MlirServer, address) -> None:
    """The `mlirtext.cluster` setting: the Ray cluster (HOST:PORT) whose devices the device list
    offers and `cluster:KIND` runs use; empty: local devices only."""
    ls.cluster.address = address.strip() if isinstance(address, str) and address.strip() else None


def _use_dialects(ls: MlirServer, paths: list) -> None:
    """The `mlirtext.dialects` setting: IRDL files, or folders of `*.irdl.mlir` files, relative to
    the (first) workspace folder; a file that does not load is shown, the others are used."""
    entries = [p for p in paths if isinstance(p, str) and p]
    if not entries:
        ls.ws.use_dialects(None)
        return
    base = ls.ws.roots[0] if ls.ws.roots else os.getcwd()
    resolved = [p if os.path.isabs(p) else os.path.join(base, p) for p in entries]
    registry, problems = registry_with(irdl_files([p for p in resolved if not os.path.isdir(p)],
                                                  [p for p in resolved if os.path.isdir(p)]))
    ls.ws.use_dialects(registry)
    for problem in problems:
        if problem.severity == "error":
            ls.window_show_message(T.ShowMessageParams(type=T.MessageType.Error,
                                                       message=f"mlirtext.dialects: {problem.format()}"))


@server.feature(T.WORKSPACE_DID_CHANGE_CONFIGURATION)
def did_change_configuration(ls: MlirServer, params: T.DidChangeConfigurationParams):
    """A changed `mlirtext.dialects` (the client sends the `mlirtext` section): load the IRDL
    files again and re-analyse the open documents with them. A changed `mlirtext.cluster` is used
    by the next device list and run."""
    settings = params.settings if isinstance(params.settings, dict) else {}
    section = settings.get("mlirtext")
    if not isinstance(section, dict):
        return
    if "cluster" in section:
        _use_cluster(ls, section["cluster"])
    if "dialects" not in section:
        return
    dialects = section["dialects"]
    _use_dialects(ls, dialects if isinstance(dialects, list) else [])
    for uri in list(ls.ws.open_documents):
        ls.schedule(uri, 0)


@server.feature(T.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: MlirServer, params: T.DidOpenTextDocumentParams):
    ls.schedule(params.text_document.uri, 0)


@server.feature(T.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: MlirServer, params: T.DidChangeTextDocumentParams):
    # The first change after a pause is analysed at once; the changes of a burst of
    # typing that follow it wait until the typing pauses for DEBOUNCE_S.
    uri = params.text_document.uri
    loop = asyncio.get_running_loop()
    now = loop.time()
    quiet = now - ls.last_change.get(uri, -1e9) > DEBOUNCE_S
    ls.last_change[uri] = now
    task = ls.pending.get(uri)
    ls.schedule(uri, 0 if quiet and (task is None or task.done()) else DEBOUNCE_S)


@server.feature(T.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: MlirServer, params: T.DidCloseTextDocumentParams):
    uri = params.text_document.uri
    timer = ls.timers.pop(uri, None)
    if timer is not None:
        timer.cancel()
    ls.ws.close(uri)
    ls.whole_document.forget(uri)
    ls.replaced = True
    ls._schedule_idle_collect()
    ls.text_document_publish_diagnostics(T.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


# -- hover and navigation ------------------------------------------------------------------
@server.feature(T.TEXT_DOCUMENT_HOVER)
async def hover(ls: MlirServer, params: T.HoverParams):
    doc = await ls.document(params.text_document.uri)
    if doc is None:
        return None
    offset = offset_of(doc, params.position)
    op = lowered_forms.op_at(doc, offset)
    if op is not None:
        entry = ls.lowered.request(op)
        if entry is not None and not entry.done:
            try:
                await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(entry.future)), LOWERED_WAIT_S)
            except (asyncio.TimeoutError, Exception):  # noqa: BLE001 - show the levels done
                pass
    # What the op becomes one level down, its dispatch (once the pipeline command has compiled its
    # function) and a link to the rest in the pipeline view.
    found = hover_at(doc, offset, op_hover.op_sections(doc, offset, ls.lowered, ls.targets))
    if found is None:
        return None
    text, start, end = found
    return T.Hover(contents=T.MarkupContent(kind=T.MarkupKind.Markdown, value=clean(text)),
                   range=lsp_range(doc, start, end))


@server.feature(T.TEXT_DOCUMENT_DEFINITION)
async def definition(ls: MlirServer, params: T.DefinitionParams):
    doc = await ls.document(params.text_document.uri)
    if doc is None:
        return []
    return [lsp_location(loc) for loc in navigation.definition(ls.ws, doc, offset_of(doc, params.position))]


@server.feature(T.TEXT_DOCUMENT_REFERENCES)
async def references(ls: MlirServer, params: T.ReferenceParams):
    doc = await ls.document(params.text_document.uri)
    if doc is None:
        return []
    found = navigation.references(ls.ws, doc, offset_of(doc, params.position),
                                  params.context.include_declaration if params.context else True)
    return [lsp_location(loc) for loc in found]


@server.feature(T.TEXT_DOCUMENT_PREPARE_RENAME)
async def prepare_rename(ls: MlirServer, params: T.PrepareRenameParams):
    doc = await ls.document(params.text_document.uri)
    found = navigation.prepare_rename(doc, offset_of(doc, params.position)) if doc else None
    if found is None:
        return None
    start, end, text = found
    return T.PrepareRenamePlaceholder(range=lsp_range(doc, start, end), placeholder=clean(text))


@server.feature(T.TEXT_DOCUMENT_RENAME)
async def rename(ls: MlirServer, params: T.RenameParams):
    doc = await ls.document(params.text_document.uri)
    if doc is None:
        return None
    edits = navigation.rename(ls.ws, doc, offset_of(doc, params.position), params.new_name)
    if isinstance(edits, str):
        ls.window_show_message(T.ShowMessageParams(type=T.MessageType.Warning, message=edits))
        return None
    return workspace_edit(ls.ws, edits)


# -- outline, tokens, hints, completion, signatures ----------------------------------------------
@server.feature(T.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
async def document_symbol(ls: MlirServer, params: T.DocumentSymbolParams):
    doc = await ls.document(params.text_document.uri)
    return await ls.whole_document.answer(doc, "symbols") if doc else []


@server.feature(T.WORKSPACE_SYMBOL)
async def workspace_symbol(ls: MlirServer, params: T.WorkspaceSymbolParams):
    loop = asyncio.get_running_loop()
    found = await loop.run_in_executor(ls.work_pool, outline.workspace_symbols, ls.ws, params.query)
    return [T.WorkspaceSymbol(name=clean(name), kind=SYMBOL_KINDS[kind], location=lsp_location(loc),
                              container_name=clean(container)) for name, kind, loc, container in found]


@server.feature(T.TEXT_DOCUMENT_FOLDING_RANGE)
async def folding_range(ls: MlirServer, params: T.FoldingRangeParams):
    doc = await ls.document(params.text_document.uri)
    return await ls.whole_document.answer(doc, "folds") if doc else []


@server.feature(T.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, T.SemanticTokensRegistrationOptions(
    legend=T.SemanticTokensLegend(token_types=tokens.TOKEN_TYPES, token_modifiers=tokens.TOKEN_MODIFIERS),
    full=True, range=True))
async def semantic_tokens(ls: MlirServer, params: T.SemanticTokensParams):
    doc = await ls.document(params.text_document.uri)
    return await ls.whole_document.answer(doc, "tokens") if doc else T.SemanticTokens(data=[])


@server.feature(T.TEXT_DOCUMENT_SEMANTIC_TOKENS_RANGE)
async def semantic_tokens_range(ls: MlirServer, params: T.SemanticTokensRangeParams):
    """The viewport's tokens, from its pieces alone: what the editor shows first while the
    whole document's are prepared."""
    doc = await ls.document(params.text_document.uri)
    if doc is None:
        return T.SemanticTokens(data=[])
    start, end = offset_of(doc, params.range.start), offset_of(doc, params.range.end)
    return PreEncoded(tokens.encode_json(doc, start, max(end, start + 1)))


@server.feature(T.TEXT_DOCUMENT_INLAY_HINT)
async def inlay_hint(ls: MlirServer, params: T.InlayHintParams):
    doc = await ls.document(params.text_document.uri)
    if doc is None:
        return []
    start = offset_of(doc, params.range.start)
    end = offset_of(doc, params.range.end)
    return [T.InlayHint(position=T.Position(*doc.lines.position(at)), label=clean(label),
                        kind=T.InlayHintKind.Type, padding_left=True)
            for at, label in inlay.type_hints(doc, start, end)]


@server.feature(T.TEXT_DOCUMENT_COMPLETION, T.CompletionOptions(trigger_characters=[".", "%", "^", "@", "!", "#"]))
async def complete(ls: MlirServer, params: T.CompletionParams):
    doc = await ls.document(params.text_document.uri)
    if doc is None:
        return []
    items = completion.complete(doc, offset_of(doc, params.position))
    return T.CompletionList(is_incomplete=False, items=[
        T.CompletionItem(label=clean(label), kind=COMPLETION_KINDS[kind], detail=clean(detail) if detail else None)
        for label, kind, detail in items])


@server.feature(T.TEXT_DOCUMENT_SIGNATURE_HELP, T.SignatureHelpOptions(trigger_characters=["(", ","]))
async def signature_help(ls: MlirServer, params: T.SignatureHelpParams):
    doc = await ls.document(params.text_document.uri)
    found = signature.signature_at(doc, offset_of(doc, params.position)) if doc else None
    if found is None:
        return None
    label, params_labels, active = found
    return T.SignatureHelp(signatures=[T.SignatureInformation(
        label=clean(label), parameters=[T.ParameterInformation(label=clean(p)) for p in params_labels])],
        active_signature=0, active_parameter=active)


# -- formatting ------------------------------------------------------------------------------------
@server.feature(T.TEXT_DOCUMENT_FORMATTING)
async def formatting_document(ls: MlirServer, params: T.DocumentFormattingParams):
    """The document as `mlirtext format` prints it; no edits when it does not parse."""
    text = _current_text(ls, params.text_document.uri)
    if text is None:
        return []
    loop = asyncio.get_running_loop()
    edits = await loop.run_in_executor(ls.work_pool, formatting.document_edits, text,
                                       ls.ws.filename(params.text_document.uri), ls.ws.registry)
    return text_edits_in(text, edits)


@server.feature(T.TEXT_DOCUMENT_RANGE_FORMATTING)
async def formatting_range(ls: MlirServer, params: T.DocumentRangeFormattingParams):
    """The whole top-level ops (or functions) the range touches, formatted; one edit over them."""
    text = _current_text(ls, params.text_document.uri)
    if text is None:
        return []
    lines = LineIndex(text)
    start = lines.offset(params.range.start.line, params.range.start.character)
    end = lines.offset(params.range.end.line, params.range.end.character)
    loop = asyncio.get_running_loop()
    edits = await loop.run_in_executor(ls.work_pool, formatting.range_edits, text, start, end,
                                       ls.ws.filename(params.text_document.uri), ls.ws.registry)
    return text_edits_in(text, edits, lines)


def _current_text(ls: MlirServer, uri: str) -> Optional[str]:
    """The editor's text of `uri` as it is now (formatting answers for this version, not the
    last analysed one), or None when the document is not open."""
    if uri not in ls.workspace.text_documents:
        return None
    return ls.workspace.get_text_document(uri).source


# -- code actions and commands -----------------------------------------------------------------
@server.feature(T.TEXT_DOCUMENT_CODE_ACTION, T.CodeActionOptions(
    code_action_kinds=[T.CodeActionKind.RefactorRewrite, T.CodeActionKind.QuickFix], resolve_provider=False))
async def code_action(ls: MlirServer, params: T.CodeActionParams):
    doc = await ls.document(params.text_document.uri)
    if doc is None:
        return []
    start = offset_of(doc, params.range.start)
    end = offset_of(doc, params.range.end)
    out = []
    for title, kind, args in actions.available(doc, start, end):
        out.append(T.CodeAction(title=clean(title), kind=kind, command=T.Command(
            title=clean(title), command="mlirtext.applyAction", arguments=[doc.uri, doc.version, *args])))
    for title, edits in actions.quick_fixes(doc, start, end):
        out.append(T.CodeAction(title=clean(title), kind=T.CodeActionKind.QuickFix,
                                edit=workspace_edit(ls.ws, {doc.uri: edits})))
    crashed = {fn for uri, fn in ls.crashes if uri == doc.uri}
    for title, command, args in debug_commands.actions_at(doc, start, crashed):
        out.append(T.CodeAction(title=clean(title), kind=T.CodeActionKind.Empty,
                                command=T.Command(title=clean(title), command=command, arguments=args)))
    return out


@server.command("mlirtext.applyAction")
async def apply_action(ls: MlirServer, *args):
    """Compute a code action's edit off the main thread, then ask the client to apply it."""
    uri, version, *rest = args
    doc = await ls.document(uri)
    if doc is None:
        return None
    loop = asyncio.get_running_loop()
    result = await loop.run_in_executor(ls.work_pool, actions.compute, doc, *rest)
    if isinstance(result, str):
        ls.window_show_message(T.ShowMessageParams(type=T.MessageType.Error, message=clean(result)))
        return {"applied": False, "message": result}
    edit = workspace_edit(ls.ws, {uri: result})
    answer = await ls.workspace_apply_edit_async(T.ApplyWorkspaceEditParams(edit=edit, label=rest[0]))
    return {"applied": bool(getattr(answer, "applied", False)), "edit": ls.protocol._converter.unstructure(edit)}


async def _long_command(ls: MlirServer, title: str, fn, *args):
    """Run `fn(*args, cancelled=event, report=callback)` on the work pool with $/progress.
    The work starts at once; the progress is asked of the client meanwhile (a round trip to an
    extension host that may be busy, e.g. opening the webview that asked) and opened before
    the answer goes back, so the answer waits for the longer of the two, not for both."""
    token = str(uuid.uuid4())
    cancelled = threading.Event()
    request = CURRENT_REQUEST.get()
    ls.cancel_events[token] = cancelled   # the client's cancel button on the progress
    if request is not None:
        ls.cancel_events[request] = cancelled
    loop = asyncio.get_running_loop()
    progress = False

    def send(message: str) -> None:
        if progress:   # (a report before the progress is open is dropped)
            ls.work_done_progress.report(token, T.WorkDoneProgressReport(message=clean(message)))

    def report(message: str) -> None:
        loop.call_soon_threadsafe(send, message)
    future = loop.run_in_executor(ls.work_pool, functools.partial(fn, *args, cancelled=cancelled, report=report))
    try:
        try:
            await asyncio.wait_for(ls.work_done_progress.create_async(token), 2)
            ls.work_done_progress.begin(token, T.WorkDoneProgressBegin(title=title, cancellable=True))
            progress = True
        except Exception:  # noqa: BLE001 - a client without progress support still gets the answer
            pass
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        cancelled.set()  # the worker stops at its next check
        raise
    finally:
        ls.cancel_events.pop(token, None)
        ls.cancel_events.pop(request, None)
        if progress:
            ls.work_done_progress.end(token, T.WorkDoneProgressEnd(
                message="cancelled" if cancelled.is_set() else "done"))


@server.feature(T.WINDOW_WORK_DONE_PROGRESS_CANCEL)
def progress_cancel(ls: MlirServer, params: T.WorkDoneProgressCancelParams):
    event = ls.cancel_events.get(params.token)
    if event is not None:
        event.set()


@server.command("mlirtext.run")
@safe(lambda: {"error": "internal error (see the server log)"})
async def run_command(ls: MlirServer, *args):
    """[uri, function name, inputs (list of iree-run-module strings) or None, seed, device]"""
    uri, function, inputs, seed, device = (list(args) + [None] * 5)[:5]
    doc = await ls.document(uri)
    if doc is None:
        return {"error": f"unknown document '{uri}'"}
    return await _long_command(ls, f"Running @{function} on {device or 'reference'}",
                               functools.partial(commands.run_function, cluster=ls.cluster),
                               doc, function, inputs, seed or 0, device or "reference")


@server.command("mlirtext.devices")
@safe(lambda: {"devices": [], "error": "internal error (see the server log)"})
async def devices_command(ls: MlirServer, *args):
    """[]: the devices `mlirtext.run` takes: the local ones, then those of the `mlirtext.cluster`
    cluster (joining it takes seconds: off the event loop); an unreachable cluster is the `error` line."""
    if not ls.cluster.address:   # (no cluster: answered at once, not after the work pool's long jobs)
        return cluster_run.device_list(ls.cluster)
    return await asyncio.get_running_loop().run_in_executor(ls.work_pool, cluster_run.device_list, ls.cluster)


@server.command("mlirtext.runDevices")
@safe(lambda: {"error": "internal error (see the server log)"})
async def run_devices_command(ls: MlirServer, *args):
    """[uri, function name, inputs or None, seed]: the function on every device, against the reference."""
    uri, function, inputs, seed = (list(args) + [None] * 4)[:4]
    doc = await ls.document(uri)
    if doc is None:
        return {"error": f"unknown document '{uri}'"}
    return await _long_command(ls, f"Running @{function} on each device", commands.run_on_devices,
                               doc, function, inputs, seed or 0)


@server.command("mlirtext.profile")
@safe(lambda: {"error": "internal error (see the server log)"})
async def profile_command(ls: MlirServer, *args):
    """[uri, function name, inputs or None, seed, device (default local-task)]: the function's calls
    profiled: the per-dispatch table and each source op's share of the run time."""
    uri, function, inputs, seed, device = (list(args) + [None] * 5)[:5]
    doc = await ls.document(uri)
    if doc is None:
        return {"error": f"unknown document '{uri}'"}
    return await _long_command(ls, f"Profiling @{function}", commands.profile_run,
                               doc, function, inputs, seed or 0, device or "local-task")


@server.command("mlirtext.pipeline")
@safe(lambda: {"error": "internal error (see the server log)"})
async def pipeline_command(ls: MlirServer, *args):
    """[uri, function name or None (the whole module), chunk index (default 0), targets (a list;
    default: llvm-cpu and the GPU targets whose tools are here)]"""
    uri, function, chunk, targets = (list(args) + [None] * 4)[:4]
    doc = await ls.document(uri)
    if doc is None:
        return {"error": f"unknown document '{uri}'"}
    return await _long_command(ls, "Lowering pipeline", commands.pipeline, doc, function, chunk, targets,
                               ls.targets)


@server.command("mlirtext.targetCode")
@safe(lambda: {"error": "internal error (see the server log)"})
async def target_code_command(ls: MlirServer, *args):
    """[uri, function name or None (the whole module), chunk index (default 0), targets]: the
    pipeline's `dispatches` and `targets` alone (the pipeline view asks for them after the levels)."""
    uri, function, chunk, targets = (list(args) + [None] * 4)[:4]
    doc = await ls.document(uri)
    if doc is None:
        return {"error": f"unknown document '{uri}'"}
    return await _long_command(ls, "Target code", commands.target_code_command, doc, function, chunk, targets,
                               ls.targets)


@server.command("mlirtext.bisect")
@safe(lambda: {"error": "internal error (see the server log)"})
async def bisect_command(ls: MlirServer, *args):
    """[uri, function name, inputs (iree-run-module strings) or None, seed, faults (--debug-* flags),
    devices (to check against the reference dispatch by dispatch) or None]: the first pass of the
    function's lowering to llvm that changes its numbers, crashes or leaves IR that does not verify,
    with markers on the ops to blame and a repro directory; with devices, the first dispatch that
    differs too."""
    uri, function, inputs, seed, faults, devices = (list(args) + [None] * 6)[:6]
    doc = await ls.document(uri)
    if doc is None:
        return {"error": f"unknown document '{uri}'"}
    found = await _long_command(ls, f"Finding where @{function}'s numbers diverge", debug_commands.find_divergence,
                                doc, function, inputs, seed or 0, faults or [], ls.scratch, devices or [])
    if found.get("crashed"):
        ls.crashes[(uri, found["function"])] = (list(faults or []), found.get("level"))
    elif "function" in found:
        ls.crashes.pop((uri, found["function"]), None)
    return found


@server.command("mlirtext.reduce")
@safe(lambda: {"error": "internal error (see the server log)"})
async def reduce_command(ls: MlirServer, *args):
    """[uri, function name, faults (default: those of the bisect that found it crashing)]: the
    smallest module the function's lowering still crashes on (lowered down to the level of the step
    that bisect found crashing, else to llvm)."""
    uri, function, faults = (list(args) + [None] * 3)[:3]
    doc = await ls.document(uri)
    if doc is None:
        return {"error": f"unknown document '{uri}'"}
    found, level = ls.crashes.get((uri, (function or "").lstrip("@")), ([], None))
    return await _long_command(ls, f"Reducing @{function}'s crash", debug_commands.reduce_crash, doc, function,
                               found if faults is None else faults, ls.scratch, level)


@server.command("mlirtext.graph")
@safe(lambda: {"error": "internal error (see the server log)"})
async def graph_command(ls: MlirServer, *args):
    """[uri, function name, levels (a list: "source", "hlo", ... "llvm"; default ["source"]), path of a
    dispatch trace (dispatches.json or its directory) or None, whether to form the dispatches (default
    true)]: the function as a data-flow graph."""
    uri, function, levels, profile, dispatches = (list(args) + [None] * 5)[:5]
    doc = await ls.document(uri)
    if doc is None:
        return {"error": f"unknown document '{uri}'"}
    return await _long_command(ls, f"Graph of @{function}", function_graph_answer, doc, function, levels, profile,
                               dispatches is not False, ls.targets)


# -- .mlirbc files edited as text (the extension's file system for them) ---------------------------
@server.feature(DECODE_BYTECODE)
async def decode_bytecode(ls: MlirServer, params):
    """{uri, data: the file's bytes in base64} -> {text: what the editor shows} or {error: one line}."""
    got = bytecode_request(params, "data")
    if "error" in got:
        return got
    name, data = got["name"], got["data"]
    try:
        data = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return {"error": f"{name}: 'data' is not base64"}
    return await _off_loop(ls, lambda: {"text": bytecode_documents.decode(data, name, ls.ws.registry)})


@server.feature(ENCODE_BYTECODE)
async def encode_bytecode(ls: MlirServer, params):
    """{uri, text} -> {data: the bytecode in base64} or {error: one line (the first diagnostic)}."""
    got = bytecode_request(params, "text")
    if "error" in got:
        return got
    name, text = got["name"], got["text"]
    return await _off_loop(ls, lambda: {
        "data": base64.b64encode(bytecode_documents.encode(text, name, ls.ws.registry)).decode("ascii")})


async def _off_loop(ls: MlirServer, answer) -> dict:
    """`answer()` on the work pool (a large module takes seconds); its one-line failure as {error}."""
    loop = asyncio.get_running_loop()
    try:
        return await loop.run_in_executor(ls.work_pool, answer)
    except bytecode_documents.BytecodeDocumentError as e:
        return {"error": str(e)}


async def _test_document(ls: MlirServer, uri: str) -> Optional[Document]:
    """An open document, else the `.mlir` file of `uri` as it is on disk (the Testing panel lists
    the workspace's files before they are opened); None for any other file."""
    if uri in ls.workspace.text_documents:
        return await ls.document(uri)
    path = uri_to_path(uri)
    if path is None or not path.endswith(".mlir"):
        return None
    return await asyncio.get_running_loop().run_in_executor(ls.work_pool, ls.ws.file_document, path)


@server.command("mlirtext.testItems")
@safe(lambda: {"items": [], "error": "internal error (see the server log)"})
async def test_items_command(ls: MlirServer, *args):
    """[uri]: the document's tests for the Testing panel: its `// -----` chunks with expected-*
    annotations and its functions that assert with check.expect_*."""
    uri = (list(args) + [None])[0]
    doc = await _test_document(ls, uri) if isinstance(uri, str) else None
    if doc is None:
        return {"items": [], "error": f"unknown document '{uri}'"}
    return file_tests.items_answer(doc)


@server.command("mlirtext.runTests")
@safe(lambda: {"results": [], "error": "internal error (see the server log)"})
async def run_tests_command(ls: MlirServer, *args):
    """[uri, test ids (as mlirtext.testItems gives them) or None (every test of the document)]: each
    chunk run as --verify-diagnostics, each function as `mlirtext check`; what failed, where, and the
    expected and actual text."""
    uri, ids = (list(args) + [None] * 2)[:2]
    doc = await _test_document(ls, uri) if isinstance(uri, str) else None
    if doc is None:
        return {"results": [], "error": f"unknown document '{uri}'"}
    if ids is not None and not (isinstance(ids, list) and all(isinstance(i, str) for i in ids)):
        return {"results": [], "error": "the test ids are a list of strings, or null for every test"}
    return await _long_command(ls, f"Testing {os.path.basename(doc.filename)}", file_tests.run_answer, doc, ids,
                               doc.registry)


def main(open_worker: bool = True) -> int:
    """Serve on stdio; `open_worker`: fork a process that shares the work of opening a large
    document (see `mlirtext/analysis/open_worker.py`)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(OneLineFormatter())
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
    logging.captureWarnings(True)   # stderr gets one line per record, whatever the source
    threading.excepthook = lambda args: log.error("thread %s stopped: %s", getattr(args.thread, "name", "?"),
                                                   one_line(args.exc_value))
    sys.excepthook = lambda kind, exc, tb: log.critical("the server stopped: %s", one_line(exc))
    # The analysis thread works on while requests are answered (a version's analysis, the
    # preparation of whole-document answers): it hands over the interpreter lock within
    # 1 ms instead of 5 when the event loop's thread asks for it.
    sys.setswitchinterval(0.001)
    # The first parse builds the parser from its cached tables and compiles its callbacks
    # (~80 ms): paid here, while the client starts up, it stays out of the first file's open.
    # The worker is forked after it (it starts warm) and before the server starts a thread.
    Document("mlirtext:warm-up", WARM_UP_TEXT, 0)
    if open_worker:
        server.open_worker.start()
    try:
        server.start_io()
    finally:
        server.scratch.close()
        server.cluster.close()
    return 0
