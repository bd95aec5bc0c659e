"""The HTTP side of the OpenAI-compatible engine: one httpx client, streamed completions as
server-sent events, retries of idempotent failures with backoff, and errors that name the
setting to change. The API key goes into the Authorization header and nowhere else."""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx

from ..api import CancelFlag, Cancelled, EngineError, ModelLoadError
from ..setting_types import env_name
from ..settings import ENGINE_SETTINGS

logger = logging.getLogger(__name__)
RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})
# Where a key given to the engine directly (not through the daemon's settings) is looked
# up: engine.api_key's variable, then its old names (newest first), then OpenAI's own.
_API_KEY = next(setting for setting in ENGINE_SETTINGS if setting.key == "engine.api_key")
API_KEY_ENV = (env_name(_API_KEY.key), *reversed(_API_KEY.old_env), "OPENAI_API_KEY")


@dataclass(frozen=True)
class ServerOptions:
    base_url: str  # up to and including /v1, e.g. http://127.0.0.1:8000/v1
    model: str | None = None  # None: the server's first (usually only) model
    api_key: str | None = None
    timeout_s: float = 30.0  # longest wait for the next byte of an answer
    connect_timeout_s: float = 3.0
    retries: int = 2  # extra attempts after a retryable failure before any text arrived
    backoff_s: float = 0.2  # first pause between attempts; doubles each time
    send_prediction: bool = True  # the draft as OpenAI's `prediction` (predicted outputs)
    logprobs: bool = True  # ask for each token's log-probability (the predictor's confidence)

    def __repr__(self) -> str:  # the key never reaches a log line through repr()
        key = "set" if self.api_key else None
        return f"ServerOptions(base_url={self.base_url!r}, model={self.model!r}, api_key={key})"


def api_key_from_env(environ: dict[str, str] | None = None) -> str | None:
    env = os.environ if environ is None else environ
    return next((env[name] for name in API_KEY_ENV if env.get(name)), None)


class ServerError(EngineError):
    """The server failed or answered something that is not an OpenAI-compatible body."""

    def __init__(self, message: str, retryable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.mid_stream = False  # raised after some of the answer had arrived


class Stopped(Cancelled):
    """The caller stopped reading (cancel or an abandoned stream); the stream was closed."""


class ServerClient:
    def __init__(self, options: ServerOptions) -> None:
        self.options = options
        headers = {"Accept": "application/json"}
        if options.api_key:
            headers["Authorization"] = f"Bearer {options.api_key}"
        timeout = httpx.Timeout(options.timeout_s, connect=options.connect_timeout_s)
        self._http = httpx.Client(
            base_url=options.base_url.rstrip("/") + "/", headers=headers, timeout=timeout
        )

    def close(self) -> None:
        self._http.close()

    # one-shot calls

    def get_json(self, path: str) -> Any:
        return self._with_retries(lambda: self._json(self._http.get(path), path), None)

    def post_json(self, path: str, body: dict[str, Any], stop: CancelFlag | None) -> Any:
        return self._with_retries(lambda: self._json(self._http.post(path, json=body), path), stop)

    # streamed completions

    def stream(
        self, body: dict[str, Any], stop: CancelFlag | None, started: list[bool]
    ) -> Iterator[dict[str, Any]]:
        """The events of one streamed completion, retried while no event has been handed
        out (`started[0]` turns True with the first one: from then on a failure is final)."""
        attempt = 0
        while True:
            try:
                yield from self._stream_once(body, stop, started)
                return
            except (ServerError, httpx.TransportError) as exc:
                error = self._as_server_error(exc)
                error.mid_stream = started[0]
                if started[0] or not error.retryable or attempt >= self.options.retries:
                    raise error from None
                self._pause(attempt, stop, error)
                attempt += 1

    def _stream_once(
        self, body: dict[str, Any], stop: CancelFlag | None, started: list[bool]
    ) -> Iterator[dict[str, Any]]:
        with self._http.stream("POST", "completions", json=body) as response:
            if response.status_code >= 400:
                response.read()
                raise self._status_error(response, "completions")
            for line in response.iter_lines():
                if stop is not None and stop.is_set():
                    raise Stopped()  # leaving the `with` closes the stream: the server stops
                event = _sse_event(line)
                if event is None:
                    continue
                if isinstance(event, str):  # the "[DONE]" marker
                    return
                started[0] = True
                yield event
        raise ServerError(
            f"the server at {self.options.base_url} closed the stream before [DONE] "
            "(cut in the middle)",
            retryable=True,
        )

    # helpers

    def _with_retries(self, call: Any, stop: CancelFlag | None) -> Any:
        attempt = 0
        while True:
            try:
                return call()
            except (ServerError, httpx.TransportError) as exc:
                error = self._as_server_error(exc)
                if not error.retryable or attempt >= self.options.retries:
                    raise error from None
                self._pause(attempt, stop, error)
                attempt += 1

    def _pause(self, attempt: int, stop: CancelFlag | None, error: ServerError) -> None:
        delay = self.options.backoff_s * (2**attempt)
        logger.info("retrying in %.2fs: %s", delay, error)
        deadline = time.monotonic() + delay
        while time.monotonic() < deadline:
            if stop is not None and stop.is_set():
                raise Stopped()
            time.sleep(min(0.02, max(0.0, deadline - time.monotonic())))

    def _json(self, response: httpx.Response, path: str) -> Any:
        if response.status_code >= 400:
            raise self._status_error(response, path)
        try:
            return response.json()
        except ValueError:
            raise ServerError(
                f"{self.options.base_url}/{path} answered with a body that is not JSON: is "
                "engine.base_url an OpenAI-compatible endpoint (ending in /v1)?"
            ) from None

    def _status_error(self, response: httpx.Response, path: str) -> ServerError:
        status = response.status_code
        detail = _error_detail(response)
        where = f"{self.options.base_url}/{path}"
        if status in (401, 403):
            return ServerError(
                f"{where} refused the API key (HTTP {status}): set engine.api_key or "
                f"{API_KEY_ENV[0]}"
            )
        if status == 404:
            return ServerError(
                f"{where} not found (HTTP 404{detail}): check engine.base_url (it ends in "
                "/v1) and engine.model"
            )
        return ServerError(f"{where} failed with HTTP {status}{detail}", status in RETRY_STATUS)

    def _as_server_error(self, exc: Exception) -> ServerError:
        if isinstance(exc, ServerError):
            return exc
        url = self.options.base_url
        if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
            return ServerError(
                f"cannot connect to the server at {url} ({exc}): is it running, and is "
                "engine.base_url right?",
                retryable=True,
            )
        if isinstance(exc, httpx.TimeoutException):
            return ServerError(
                f"the server at {url} sent nothing for {self.options.timeout_s:g}s "
                "(engine.timeout_s)",
                retryable=True,
            )
        return ServerError(f"the connection to {url} failed: {exc}", retryable=True)


def _sse_event(line: str) -> dict[str, Any] | str | None:
    """A `data:` line as JSON (or the "[DONE]" marker); None for other SSE lines."""
    if not line.startswith("data:"):
        return None
    data = line[5:].strip()
    if data == "[DONE]":
        return data
    try:
        event = json.loads(data)
    except ValueError:
        raise ServerError(f"the server sent an event that is not JSON: {data[:80]!r}") from None
    if not isinstance(event, dict):
        raise ServerError(f"the server sent an event that is not an object: {data[:80]!r}")
    if "error" in event:
        raise ServerError(f"the server reported an error: {_message(event['error'])}")
    return event


def _error_detail(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return ""
    message = _message(body.get("error") or body.get("detail")) if isinstance(body, dict) else ""
    return f": {message}" if message else ""


def _message(error: Any) -> str:
    if isinstance(error, dict):
        return str(error.get("message") or error)[:200]
    return str(error)[:200] if error else ""


def check_model(models_body: Any, wanted: str | None, base_url: str) -> str:
    """The model to request: `wanted` when the server lists it, else a ModelLoadError."""
    data = models_body.get("data") if isinstance(models_body, dict) else None
    if not isinstance(data, list):
        raise ModelLoadError(
            f"{base_url}/models did not answer with an OpenAI model list: is engine.base_url "
            "an OpenAI-compatible endpoint (ending in /v1)?"
        )
    ids = [str(item.get("id")) for item in data if isinstance(item, dict)]
    if wanted is None:
        if not ids:
            raise ModelLoadError(f"the server at {base_url} serves no model")
        return ids[0]
    if wanted not in ids:
        raise ModelLoadError(
            f"the server at {base_url} does not serve the model {wanted!r} (engine.model); "
            f"it serves: {', '.join(ids) or 'nothing'}"
        )
    return wanted
