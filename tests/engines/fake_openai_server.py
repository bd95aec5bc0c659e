"""A tiny OpenAI-compatible server on loopback for the fault cases (slow, HTTP 500,
malformed JSON, a cut stream, unknown model, wrong key, a refused field): it lies
outside the code under test, so a scripted one is as good as a real one here."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Script:
    """What the server does; tests change it between requests."""

    models: list[str] = field(default_factory=lambda: ["tiny"])
    models_body: bytes | None = None  # raw /v1/models body (malformed JSON cases)
    api_key: str | None = None  # required Bearer key
    fail_status: int | None = None  # completions answer this status...
    fail_times: int = 1_000_000  # ...this many times, then work
    delay_s: float = 0.0  # before the first byte of a completion
    cut_after: int | None = None  # events sent before the stream is cut (no [DONE])
    event_gap_s: float = 0.0
    refuse_field: str | None = None  # HTTP 400 naming this field when a body has it
    pieces: list[str] = field(default_factory=lambda: ["hel", "lo", " world"])
    piece_logprobs: list[float] | None = None  # each piece's; None: -0.5 each
    report_stop: bool = False  # vLLM-style: honour `stop`, say which one in stop_reason
    usage: dict[str, Any] | None = None
    bodies: list[dict[str, Any]] = field(default_factory=list)  # completions received
    disconnected: threading.Event = field(default_factory=threading.Event)


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return None

    def do_GET(self) -> None:
        script = self.server.script
        if not self._authorized(script):
            return
        if self.path.rstrip("/").endswith("/v1/models"):
            body = (
                script.models_body
                or json.dumps(
                    {
                        "object": "list",
                        "data": [{"id": m, "object": "model"} for m in script.models],
                    }
                ).encode()
            )
            self._send(200, body, "application/json")
        else:
            self._send(404, b'{"error": {"message": "no such route"}}', "application/json")

    def do_POST(self) -> None:
        script = self.server.script
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        if not self._authorized(script):
            return
        if not self.path.endswith("/v1/completions"):
            self._send(404, b'{"error": {"message": "no such route"}}', "application/json")
            return
        script.bodies.append(body)
        if script.refuse_field and script.refuse_field in body:
            message = {"error": {"message": f"unsupported field: {script.refuse_field}"}}
            self._send(400, json.dumps(message).encode(), "application/json")
            return
        if script.fail_status and script.fail_times > 0:
            script.fail_times -= 1
            self._send(script.fail_status, b'{"error": {"message": "boom"}}', "application/json")
            return
        time.sleep(script.delay_s)
        self._stream(script, body)

    def _stream(self, script: Script, body: dict[str, Any]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        pieces, matched = _pieces(script, body)
        try:
            for index, piece in enumerate(pieces):
                if script.cut_after is not None and index >= script.cut_after:
                    self.wfile.flush()
                    self.close_connection = True
                    return
                choice: dict[str, Any] = {"index": 0, "text": piece, "finish_reason": None}
                if body.get("logprobs") is not None:
                    value = script.piece_logprobs[index] if script.piece_logprobs else -0.5
                    choice["logprobs"] = {"tokens": [piece], "token_logprobs": [value]}
                self.wfile.write(f"data: {json.dumps({'choices': [choice]})}\n\n".encode())
                self.wfile.flush()
                time.sleep(script.event_gap_s)
            end = {"index": 0, "text": "", "finish_reason": "stop"}
            if script.report_stop:
                end["stop_reason"] = matched
            last: dict[str, Any] = {"choices": [end]}
            self.wfile.write(f"data: {json.dumps(last)}\n\n".encode())
            if script.usage is not None:
                usage_event = {"choices": [], "usage": script.usage}
                self.wfile.write(f"data: {json.dumps(usage_event)}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            script.disconnected.set()

    def _authorized(self, script: Script) -> bool:
        if script.api_key is None:
            return True
        if self.headers.get("Authorization") == f"Bearer {script.api_key}":
            return True
        self._send(401, b'{"error": {"message": "invalid api key"}}', "application/json")
        return False

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _pieces(script: Script, body: dict[str, Any]) -> tuple[list[str], str | None]:
    """The pieces to send (up to max_tokens) and, for a server that honours `stop`, the
    stop string that cut them (the rest of the text and the stop string are not sent)."""
    pieces = script.pieces[: int(body.get("max_tokens") or len(script.pieces))]
    if not script.report_stop or not body.get("stop"):
        return pieces, None
    text = "".join(pieces)
    hits = [(text.find(s), s) for s in body["stop"] if s in text]
    if not hits:
        return pieces, None
    cut, matched = min(hits)
    kept, length = [], 0
    for piece in pieces:
        if length >= cut:
            break
        kept.append(piece[: cut - length])
        length += len(piece)
    return kept, matched


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, script: Script) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.script = script


@contextmanager
def fake_server(script: Script) -> Iterator[str]:
    """Serve `script` on a free loopback port; yields the base URL (ending in /v1)."""
    server = _Server(script)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
