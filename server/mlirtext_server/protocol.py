"""JSON-RPC as the specification has it, on top of pygls' LanguageServerProtocol.

pygls 2.1 leaves several error paths unanswered or noisy: a request whose params fail
to structure gets no answer (the error escapes `json.loads`' object hook, which also
loses the id), requests after `shutdown` are dropped, a handler's exception goes back
with its traceback as the error's data and to stderr. Here every request is answered
exactly once, with the code the specification gives:

- params that do not fit the method's types: -32602 InvalidParams, saying where;
- a message that is not a request, a response or a notification: -32600 InvalidRequest
  (id null when it has no usable id); any request after `shutdown`: -32600;
- a request before `initialize`: -32002 ServerNotInitialized; a second `initialize`: -32600;
- an unknown method: -32601 MethodNotFound; an unknown notification is ignored
  (silently when it starts with `$/`, as LSP says optional notifications may be);
- a handler that raises: -32603 InternalError with a one-line message, and one line on
  stderr;
- a body that is not JSON: -32700 ParseError with id null (see `MlirServer.report_server_error`).

A handler may also answer with `PreEncoded` JSON text, sent as it is (a big answer built
from cached parts, which pygls would convert to objects and then to JSON on every send).
"""
from __future__ import annotations

import asyncio
import contextvars
import inspect
import json
import logging
from typing import NamedTuple

from cattrs import transform_error
from cattrs.v import format_exception
from lsprotocol import types as T
from pygls.exceptions import JsonRpcException
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import JsonRPCNotification, JsonRPCRequestMessage, JsonRPCResponseMessage

log = logging.getLogger("mlirtext_server")

#: The id of the request being handled (visible in the tasks its handler starts).
CURRENT_REQUEST: contextvars.ContextVar = contextvars.ContextVar("mlirtext_request", default=None)

INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
PARSE_ERROR = -32700
SERVER_NOT_INITIALIZED = -32002


class PreEncoded(NamedTuple):
    """A request's result already as JSON text (ASCII)."""

    json: str


#: How many of the problems in a message's params the InvalidParams answer names.
PROBLEMS_SHOWN = 3


def one_line(exc: BaseException) -> str:
    """`Type: message`, cut to its first line (an error's text can be a whole traceback)."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def describe(exc: BaseException, type_) -> str:
    """cattrs' description of one problem, with a validator's own words (lsprotocol's say the range)."""
    if isinstance(exc, ValueError) and type_ is None and str(exc):
        return f"invalid value: {one_line(exc).partition(': ')[2]}"
    return format_exception(exc, type_)


def params_problems(exc: Exception) -> str:
    """What is wrong with a message, from cattrs' structuring error:
    `invalid value for type, expected int @ $.params.position.line`."""
    try:
        problems = transform_error(exc, path="$", format_exception=describe)
    except Exception:  # noqa: BLE001 - not a cattrs error: its own text
        problems = [one_line(exc)]
    shown = "; ".join(problems[:PROBLEMS_SHOWN])
    return shown + (f" (and {len(problems) - PROBLEMS_SHOWN} more)" if len(problems) > PROBLEMS_SHOWN else "")


def strict(kind: type):
    """A structure hook taking JSON values of `kind` only: cattrs' default (`int(value)`,
    `str(value)`) would take 1.5 as line 1, "3" as 3 and a number as a URI."""
    def structure(value, _type):
        if type(value) is kind:
            return value
        raise TypeError(f"expected {kind.__name__}, not {value!r}"[:200])
    return structure


def valid_id(msg_id) -> bool:
    """LSP ids are integers or strings (JSON `true` is not an integer)."""
    return isinstance(msg_id, str) or (isinstance(msg_id, int) and not isinstance(msg_id, bool))


class MlirProtocol(LanguageServerProtocol):
    """pygls' protocol with the error paths above; also passes `$/cancelRequest` on to
    long commands (pygls runs `workspace/executeCommand` through an inner task of its
    own, which a cancel of the request does not reach)."""

    def __init__(self, server, converter):
        for kind in (int, str, bool):   # bool too: the int hook would take bool, a subclass of int
            converter.register_structure_hook(kind, strict(kind))
        super().__init__(server, converter)
        self.initialized = False
        self.methods_in_flight: dict = {}   # request id -> method, for the log line of a failure

    # -- reading ------------------------------------------------------------------------------
    def structure_message(self, data):
        """Every JSON object as it is: `handle_message` structures the message as a whole.
        (pygls structures in `json.loads`' object hook, which also turns nested objects with
        a "jsonrpc" key into messages, and whose errors lose the request's id.)"""
        return data

    def handle_message(self, message):
        if not isinstance(message, dict):
            self.reject(None, INVALID_REQUEST, f"a message is a JSON object, not {type(message).__name__}")
            return
        method, msg_id = message.get("method"), message.get("id")
        if "method" not in message:
            self.handle_client_response(message)
            return
        is_request = "id" in message
        if message.get("jsonrpc") != self.VERSION or not isinstance(method, str) or \
                (is_request and not valid_id(msg_id)):
            if is_request:
                self.reject(msg_id if valid_id(msg_id) else None, INVALID_REQUEST,
                            'a request has "jsonrpc": "2.0", a string "method" and an integer or string "id"')
            else:
                log.warning("ignored a malformed notification")
            return
        if self._shutdown and method != T.EXIT:
            if is_request:
                self.reject(msg_id, INVALID_REQUEST, f"{method}: the server is shut down (only 'exit' is taken)")
            return
        if not self.initialized and method not in (T.INITIALIZE, T.EXIT):
            if is_request:
                self.reject(msg_id, SERVER_NOT_INITIALIZED, f"{method}: the server is not initialized yet")
            return
        if self.initialized and method == T.INITIALIZE:   # a second one would reset pygls' workspace
            if is_request:
                self.reject(msg_id, INVALID_REQUEST, "initialize: the server is initialized already")
            return
        known = method == T.CANCEL_REQUEST or method in self.fm.builtin_features or method in self.fm.features
        if not known:
            if is_request:
                self.reject(msg_id, METHOD_NOT_FOUND, f"unknown method: {method}")
            elif not method.startswith("$/"):
                log.warning("ignored the notification %s: unknown method", method)
            return
        fallback = JsonRPCRequestMessage if is_request else JsonRPCNotification
        try:
            structured = self._converter.structure(message, self.get_message_type(method) or fallback)
        except Exception as exc:  # noqa: BLE001 - the client's params, not the server's bug
            problems = params_problems(exc)
            if is_request:
                self.reject(msg_id, INVALID_PARAMS, f"{method}: invalid params: {problems}")
            else:
                log.warning("ignored the notification %s: invalid params: %s", method, problems)
            return
        if method == T.INITIALIZE:
            self.initialized = True
        super().handle_message(structured)

    def handle_client_response(self, message: dict) -> None:
        """A response to one of the server's requests; one that does not structure fails its
        request's future (the handler waiting on it gets an error), with one line logged."""
        msg_id = message.get("id")
        try:
            if "error" in message:
                structured = self._converter.structure(message, T.ResponseErrorMessage)
            else:
                result_type = self._result_types.pop(msg_id, None) if valid_id(msg_id) else None
                structured = self._converter.structure(message, result_type or JsonRPCResponseMessage)
        except Exception as exc:  # noqa: BLE001
            problem = params_problems(exc)
            log.warning("a malformed response from the client (id %r): %s", msg_id, problem)
            if valid_id(msg_id) and msg_id in self._request_futures:
                self._handle_response(msg_id, None, T.ResponseError(code=INVALID_PARAMS, message=problem))
            return
        super().handle_message(structured)

    def reject(self, msg_id, code: int, message: str) -> None:
        log.warning("request %r answered with error %d: %s", msg_id, code, message)
        self.send_error(msg_id, code, message)

    def send_error(self, msg_id, code: int, message: str) -> None:
        """An error response; a plain object, as lsprotocol's would leave out an `"id": null`."""
        self._send_data({"jsonrpc": self.VERSION, "id": msg_id, "error": {"code": code, "message": message}})

    # -- handling -----------------------------------------------------------------------------
    def _handle_request(self, msg_id, method_name, params):
        token = CURRENT_REQUEST.set(msg_id)
        self.methods_in_flight[msg_id] = method_name
        try:
            return super()._handle_request(msg_id, method_name, params)
        finally:
            CURRENT_REQUEST.reset(token)

    def _send_handler_result(self, future, *, msg_id):
        """A handler's exception answers its request with an error of one line, no traceback."""
        method = self.methods_in_flight.pop(msg_id, "request")
        exc = None if future.cancelled() else future.exception()
        if exc is None:
            super()._send_handler_result(future, msg_id=msg_id)
            return
        self._request_futures.pop(msg_id, None)
        if isinstance(exc, JsonRpcException):   # pygls' own answers, e.g. an unknown command
            error = T.ResponseError(code=exc.code, message=exc.message.strip().splitlines()[0])
            log.warning("%s (request %r): %s", method, msg_id, error.message)
        else:
            error = T.ResponseError(code=INTERNAL_ERROR, message=f"internal error in {method}: {one_line(exc)}")
            log.error("%s (request %r) failed: %s", method, msg_id, one_line(exc))
        self._send_response(msg_id, error=error)

    def _send_response(self, msg_id, result=None, error=None):
        if error is not None or not isinstance(result, PreEncoded):
            super()._send_response(msg_id, result=result, error=error)
            return
        self._result_types.pop(msg_id, None)
        body = f'{{"jsonrpc":"{self.VERSION}","id":{json.dumps(msg_id)},"result":{result.json}}}'.encode()
        if self.writer is None:
            log.error("no transport to send the answer to request %r", msg_id)
            return
        written = self.writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        if inspect.isawaitable(written):
            asyncio.ensure_future(written)

    def _handle_cancel_notification(self, msg_id):
        event = self._server.cancel_events.get(msg_id)
        if event is not None:
            event.set()
        if msg_id in self._request_futures:   # a cancel of a request answered already is normal
            super()._handle_cancel_notification(msg_id)
