"""Checks each incoming JSON-RPC message before pygls sees it, and answers bad ones with
the error the JSON-RPC 2.0 / LSP specs prescribe (pygls would log and stay silent)."""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.protocol.json_rpc import JsonRPCNotification, JsonRPCRequestMessage
from shadowtab.lsp.transport import ByteWriter, frame

if TYPE_CHECKING:
    from pygls.protocol import LanguageServerProtocol

logger = logging.getLogger(__name__)

PARSE_ERROR = types.ErrorCodes.ParseError.value
INVALID_REQUEST = types.ErrorCodes.InvalidRequest.value
METHOD_NOT_FOUND = types.ErrorCodes.MethodNotFound.value
SERVER_NOT_INITIALIZED = types.ErrorCodes.ServerNotInitialized.value
INTERNAL_ERROR = types.ErrorCodes.InternalError.value
LOUD_DROPS = 10  # malformed notifications logged at WARNING per session; then DEBUG


def send_error(writer: ByteWriter, msg_id: Any, code: int, message: str) -> None:
    body = {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}
    writer.write(frame(json.dumps(body).encode()))


class MessageDispatcher:
    """Validates one message body and hands it to the session's pygls protocol."""

    def __init__(self, protocol: LanguageServerProtocol, writer: ByteWriter) -> None:
        self.protocol = protocol
        self.writer = writer
        self.initialized = False
        self.dropped = 0

    def dispatch(self, body: bytes) -> None:
        """Never raises: one bad message must not end the session."""
        try:
            data = json.loads(body)
        except RecursionError:
            send_error(self.writer, None, PARSE_ERROR, "parse error: JSON nested too deeply")
            return
        except (ValueError, UnicodeDecodeError) as exc:
            send_error(self.writer, None, PARSE_ERROR, f"parse error: {exc}")
            return
        error = self._envelope_error(data)
        if error is not None:
            msg_id = data.get("id") if isinstance(data, dict) else None
            send_error(self.writer, _valid_id(msg_id), INVALID_REQUEST, error)
            return
        try:
            self._dispatch_valid(data)
        except Exception as exc:  # a bug of ours or pygls': answer it, keep serving
            self._internal_error(data, exc)

    def _internal_error(self, data: dict[str, Any], exc: Exception) -> None:
        method, msg_id = data.get("method"), _valid_id(data.get("id"))
        logger.warning("message %s failed: %s: %s", method, type(exc).__name__, exc)
        if method is not None and msg_id is not None:
            send_error(self.writer, msg_id, INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")

    def _envelope_error(self, data: Any) -> str | None:
        if isinstance(data, list):
            return "batch messages are not part of LSP"
        if not isinstance(data, dict):
            return "a message must be a JSON object"
        if data.get("jsonrpc") != "2.0":
            return 'jsonrpc must be "2.0"'
        if "id" in data and _valid_id(data["id"]) is None and "method" in data:
            return "id must be an integer or a string"
        if "method" in data and not isinstance(data["method"], str):
            return "method must be a string"
        if "method" not in data and "id" not in data:
            return "neither a request, a notification nor a response"
        return None

    def _dispatch_valid(self, data: dict[str, Any]) -> None:
        method: str | None = data.get("method")
        if method is None:  # a response to one of our requests
            self._handle(data, method, False)
            return
        is_request = "id" in data
        if is_request and not self._request_allowed(data["id"], method):
            return
        if not is_request and not self._notification_allowed(method):
            return
        bad_cancel = method == types.CANCEL_REQUEST and not _valid_cancel(data.get("params"))
        if bad_cancel and not is_request:  # as a request it is refused like any notification
            self._drop(method, "params.id must be an integer or a string")
            return
        if not self._known(method):
            if is_request:
                send_error(self.writer, data["id"], METHOD_NOT_FOUND, f"unknown method {method}")
            return
        self._handle(data, method, is_request)

    def _drop(self, method: str | None, reason: str) -> None:
        """A malformed notification has no one to answer: a log line, then nothing (the
        first few at WARNING, the rest at DEBUG so that a flood does not fill the log)."""
        self.dropped += 1
        level = logging.WARNING if self.dropped <= LOUD_DROPS else logging.DEBUG
        logger.log(level, "dropped notification %s: %s", method, reason)

    def _handle(self, data: dict[str, Any], method: str | None, is_request: bool) -> None:
        try:
            message = self._structure(data)
        except JsonRpcException as exc:
            if is_request:
                logger.debug("invalid message %s: %s", method, exc.__cause__ or exc)
                send_error(self.writer, data["id"], exc.code, _describe(exc))
            else:
                self._drop(method, str(exc.__cause__ or exc))
            return
        if is_request and not hasattr(message, "id"):
            send_error(self.writer, data["id"], INVALID_REQUEST, f"{method} is a notification")
            return
        if method == types.INITIALIZE:
            self.initialized = True
        self.protocol.handle_message(message)

    def _structure(self, data: dict[str, Any]) -> Any:
        method = data.get("method")
        if method is not None and self._is_custom(method):
            # Our own methods take plain JSON (pygls would turn it into namedtuples).
            params = data.get("params")
            if "id" in data:
                return JsonRPCRequestMessage(data["id"], method, "2.0", params)
            return JsonRPCNotification(method, "2.0", params)
        return self.protocol.structure_message(data)

    def _request_allowed(self, msg_id: Any, method: str) -> bool:
        if self.protocol._shutdown and method != types.EXIT:
            send_error(self.writer, msg_id, INVALID_REQUEST, "the server has been shut down")
            return False
        if method == types.INITIALIZE and self.initialized:
            send_error(self.writer, msg_id, INVALID_REQUEST, "initialize was already sent")
            return False
        if not self.initialized and method != types.INITIALIZE:
            send_error(self.writer, msg_id, SERVER_NOT_INITIALIZED, "initialize first")
            return False
        return True

    def _notification_allowed(self, method: str) -> bool:
        # Before initialize only `exit` may arrive; after shutdown only `exit` matters.
        if method == types.EXIT:
            return True
        return self.initialized and not self.protocol._shutdown

    def _known(self, method: str) -> bool:
        fm = self.protocol.fm
        return (
            method in fm.builtin_features or method in fm.features or method == types.CANCEL_REQUEST
        )

    def _is_custom(self, method: str) -> bool:
        return self.protocol.get_message_type(method) is None


def _valid_id(msg_id: Any) -> int | str | None:
    if isinstance(msg_id, bool):
        return None
    return msg_id if isinstance(msg_id, (int, str)) else None


def _valid_cancel(params: Any) -> bool:
    return isinstance(params, dict) and _valid_id(params.get("id")) is not None


def _describe(exc: JsonRpcException) -> str:
    cause = exc.__cause__
    if cause is None:
        return str(exc) or type(exc).__name__
    return f"{exc.message or 'invalid params'}: {cause}"
