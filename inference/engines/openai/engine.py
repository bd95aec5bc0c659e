"""OpenAIEngine: the engine interface over an OpenAI-compatible completions endpoint (vLLM,
SGLang, llama.cpp's server, llama-cpp-python's server) for teams that share a server.

The prompts are the same cache-aware prompts as the local engines build, so the server's
own prefix cache (vLLM automatic prefix caching, llama.cpp `cache_prompt`) hits; the
rewrite draft goes out as `prediction` (OpenAI's predicted outputs) where the server
takes it. Decoding is greedy (temperature 0), so a rewrite with or without the draft
gives the same text. Every request is streamed: cancelling closes the stream. Answers
carry finish reasons, and log-probabilities where the server gives them (for the
predictor's confidence): see answer.py."""

from __future__ import annotations

import math
import queue
import threading
import time
from collections.abc import Callable, Collection, Generator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from ..api import (
    CacheInfo,
    CancelFlag,
    Cancelled,
    Completion,
    EngineError,
    EngineNotReady,
    ModelLoadError,
    RequestLimits,
    RequestStats,
    check_request,
)
from ..text_output import Emit
from .adapter import ServerAdapter, describe, model_card
from .answer import Answer, AnswerBuilder, as_completion
from .client import ServerClient, ServerError, ServerOptions, api_key_from_env, check_model
from .usage import UsageTotals, stats_from_usage

MAX_CANDIDATES = 8
# dropped for good when a server refuses one (an HTTP 400 naming it)
OPTIONAL_FIELDS = ("prediction", "cache_prompt", "stream_options", "logprobs", "repeat_penalty")
POLL_S = 0.02
T = TypeVar("T")


class OpenAIEngine:
    """See docs/CONTRACTS.md. The constructor checks the server and the model (GET /models)
    and raises ModelLoadError naming the setting to change."""

    def __init__(
        self,
        options: ServerOptions,
        n_ctx: int = 4096,
        adapter: str = "default",
        adapter_format: str | None = None,
        adapter_formats: Collection[str] | None = None,
    ) -> None:
        """`adapter` (engine.adapter) and `adapter_format` (engine.adapter_format): the
        server applies any adapter; see adapter.py for what stats() report."""
        if not options.base_url.startswith(("http://", "https://")):
            raise ModelLoadError(
                f"engine.base_url must be an http(s) URL ending in /v1, got {options.base_url!r}"
            )
        if options.api_key is None:
            options = ServerOptions(**{**options.__dict__, "api_key": api_key_from_env()})
        self.options = options
        self.n_ctx = n_ctx
        self._client = ServerClient(options)
        self._refused: set[str] = set()
        self._server_reports_stop = False  # learnt from its answers: see answer.py
        self._totals = UsageTotals()
        self._tokenize_route: tuple[str, str] | None = None
        self._state = "loading"
        self.adapter_setting = adapter or "default"
        try:
            models = self._client.get_json("models")
            self.model = check_model(models, options.model, self.url)
        except ServerError as exc:
            self._client.close()
            self._state = "failed"
            raise ModelLoadError(str(exc)) from None
        self.adapter: ServerAdapter = describe(
            self.adapter_setting, adapter_format, self.model, model_card(models, self.model),
            adapter_formats,
        )  # fmt: skip
        self._state = "ready"

    @property
    def url(self) -> str:
        return self.options.base_url.rstrip("/")

    @property
    def state(self) -> str:
        return self._state

    # the engine interface

    def tokenize(self, text: str, special: bool = False) -> list[int]:
        # The server's /tokenize endpoint decides control-token parsing itself.
        del special
        from .tokens import tokenize_remote

        tokens, self._tokenize_route = tokenize_remote(
            self._client, self.url, self.model, text, self._tokenize_route
        )
        return tokens

    def warm(self, prompt: str, cancel: threading.Event | None = None) -> RequestStats:
        """One token's worth of request: the server prefills the prompt into its cache."""
        _check_prompt(prompt)
        request = self._request(prompt, 1, (), None, logprobs=False)
        answer, seconds = self._call(lambda flag: self._collect(request, flag, None), cancel)
        return self._stats(answer, seconds)

    def complete(
        self,
        prompt: str,
        max_tokens: int,
        stop: Sequence[str] = (),
        n: int = 1,
        cancel: threading.Event | None = None,
        min_token_p: float = 0.0,
        heal: bool = False,
    ) -> Completion:
        """`min_token_p` needs the server's logprobs: where it refuses them the answer
        is not cut and carries none (the caller sees it has no probabilities). `heal`
        is ignored: the server tokenizes and decodes (no constraint can be put on its
        first tokens)."""
        del heal
        self._check(prompt, max_tokens, n, min_token_p=min_token_p)
        if n > 1:
            return self._call_completion(
                lambda flag: self._candidates(prompt, max_tokens, stop, n, flag, min_token_p),
                cancel,
            )
        request = self._request(prompt, max_tokens, stop, None, min_token_p=min_token_p)
        return self._call_completion(lambda flag: self._completion(request, flag, None), cancel)

    def rewrite(
        self,
        prompt: str,
        draft: str,
        max_tokens: int,
        stop: Sequence[str] = (),
        speculative: bool = True,
        cancel: threading.Event | None = None,
        n: int = 1,
        min_token_p: float = 0.0,
    ) -> Completion:
        """`min_token_p` is not applied: the server decodes the whole answer (the
        caller's token check still drops an unsure change)."""
        if n > 1:  # alternatives branch at the first token, as complete() does
            return self.complete(prompt, max_tokens, stop, n, cancel)
        self._check(prompt, max_tokens, 1, draft)
        request = self._request(prompt, max_tokens, stop, draft if speculative else None)
        return self._call_completion(lambda flag: self._completion(request, flag, None), cancel)

    def cache_info(self) -> CacheInfo:
        """The server keeps the KV cache; nothing is resident here."""
        return CacheInfo(bytes_per_token=0, capacity_tokens=0, used_tokens=0, resident_prefixes=[])

    def stats(self) -> dict[str, Any]:
        return {
            "state": self._state,
            "engine": "openai",
            "device": "server",
            "base_url": self.url,
            "model": self.model if self._state == "ready" else self.options.model,
            "api_key": "set" if self.options.api_key else None,
            "adapter": self.adapter.adapter,
            "adapter_setting": self.adapter_setting,
            "adapter_error": self.adapter.adapter_error,
            "adapter_format": self.adapter.adapter_format,
            "n_ctx": self.n_ctx,
            "cache": None,
            "logprobs": self.options.logprobs and "logprobs" not in self._refused,
            "server_stops": self._server_reports_stop,  # else stop strings are matched here
            "totals": self._totals.to_dict(),
        }

    def close(self) -> None:
        self._state = "closed"
        self._client.close()

    # requests

    def _check(
        self,
        prompt: str,
        max_tokens: int,
        n: int,
        draft: str | None = None,
        min_token_p: float = 0.0,
    ) -> None:
        if self._state != "ready":
            raise EngineNotReady(f"the engine is not ready (engine state: {self._state})")
        limits = RequestLimits(self.n_ctx, MAX_CANDIDATES)
        check_request(limits, max_tokens, n, draft=draft, min_token_p=min_token_p)
        _check_prompt(prompt)

    def _request(
        self,
        prompt: str,
        max_tokens: int,
        stop: Sequence[str],
        draft: str | None,
        logprobs: bool = True,
        min_token_p: float = 0.0,
    ) -> _Request:
        body: dict[str, Any] = {
            "model": self.model,
            "prompt": prompt,
            "max_tokens": max_tokens,
            "temperature": 0.0,
            "stream": True,
            "stream_options": {"include_usage": True},
            "cache_prompt": True,  # llama.cpp server: reuse the longest cached prefix
            # llama-cpp-python's server penalizes repeats by default (1.1) even at
            # temperature 0: its answers were not greedy (a rewrite repeats the window)
            "repeat_penalty": 1.0,
        }
        stops = tuple(s for s in stop if s)
        if stops and self._server_reports_stop:  # else matched here only: see answer.py
            body["stop"] = list(stops[:4])  # OpenAI accepts at most 4
        if logprobs and self.options.logprobs:
            body["logprobs"] = 1  # the chosen token's log-probability: the confidence
        if draft is not None and self.options.send_prediction:
            body["prediction"] = {"type": "content", "content": draft}
        return _Request(body, stops, min_token_p)

    def _completion(self, request: _Request, flag: CancelFlag, emit: Emit | None) -> Completion:
        answer, seconds = self._timed(lambda: self._collect(request, flag, emit))
        return as_completion([answer], self._stats(answer, seconds))

    def _candidates(
        self,
        prompt: str,
        max_tokens: int,
        stop: Sequence[str],
        n: int,
        flag: CancelFlag,
        min_token_p: float = 0.0,
    ) -> Completion:
        """Best first; then the next most likely first tokens, each continued greedily
        (the server's prefix cache holds the prompt, so each costs little prefill)."""
        first = self._request(prompt, max_tokens, stop, None, min_token_p=min_token_p)
        best, seconds = self._timed(lambda: self._collect(first, flag, None))
        stats = self._stats(best, seconds)
        found = [best]
        for token, logprob in self._first_tokens(prompt, n, flag)[1:n]:
            if math.exp(logprob) < min_token_p:
                continue  # cut at its first token: nothing to offer
            builder = AnswerBuilder(stop, min_token_p=min_token_p)
            if not builder.add_piece(token, _one_logprob(token, logprob)) and max_tokens > 1:
                request = self._request(
                    prompt + token, max_tokens - 1, stop, None, min_token_p=min_token_p
                )
                self._collect(request, flag, None, builder)
            elif max_tokens == 1:
                builder.mark_length()
            found.append(builder.finish())
        return as_completion(found, stats)

    def _first_tokens(self, prompt: str, n: int, flag: CancelFlag) -> list[tuple[str, float]]:
        body = {**self._request(prompt, 1, (), None).body, "logprobs": n}
        choice: dict[str, Any] = {}
        for event in self._events(body, flag):
            choice = (event.get("choices") or [{}])[0] or choice
            top = ((choice.get("logprobs") or {}).get("top_logprobs") or [None])[0]
            if isinstance(top, dict) and top:
                ranked = sorted(top.items(), key=lambda item: -float(item[1]))
                return [(str(token), float(value)) for token, value in ranked]
        raise EngineError(
            f"the server at {self.url} returns no logprobs, so it cannot rank n > 1 candidates "
            "(llama-cpp-python's server needs --logits_all true)"
        )

    def _collect(
        self,
        request: _Request,
        flag: CancelFlag,
        emit: Emit | None,
        builder: AnswerBuilder | None = None,
    ) -> Answer:
        """The whole answer. Failures before the first event are retried by the client; a
        stream cut in the middle is retried here from scratch when nobody has seen its text
        yet (no emit, no text fed in before; greedy decoding gives the same answer)."""
        attempt = 0
        while True:
            fresh = AnswerBuilder(request.stop, emit, request.min_token_p)
            try:
                return self._collect_once(request, flag, builder or fresh)
            except ServerError as exc:
                retry = exc.mid_stream and exc.retryable and emit is None and builder is None
                if not retry or attempt >= self.options.retries:
                    raise
                attempt += 1

    def _collect_once(self, request: _Request, flag: CancelFlag, builder: AnswerBuilder) -> Answer:
        events = self._events(dict(request.body), flag)
        try:
            for event in events:
                if builder.add_event(event):
                    break  # a stop string: closing the stream stops the server
        finally:
            events.close()
        answer = builder.finish()
        self._server_reports_stop = self._server_reports_stop or answer.reports_stop
        return answer

    def _events(self, body: dict[str, Any], flag: CancelFlag) -> Generator[dict[str, Any]]:
        """Streamed events, dropping optional fields the server refuses (an HTTP 400 that
        names them) for this and every later request."""
        for field_name in self._refused:
            body.pop(field_name, None)
        try:
            yield from self._client.stream(body, flag, [False])
        except ServerError as exc:
            refused = [f for f in OPTIONAL_FIELDS if f in body and f in str(exc)]
            if not refused or "HTTP 400" not in str(exc):
                raise
            self._refused.update(refused)
            yield from self._events(body, flag)

    # cancellation, timing, stats

    def _call(
        self, run: Callable[[CancelFlag], Answer], cancel: threading.Event | None
    ) -> tuple[Answer, float]:
        return _run_cancellable(lambda flag: self._timed(lambda: run(flag)), cancel)

    def _call_completion(
        self, run: Callable[[CancelFlag], Completion], cancel: threading.Event | None
    ) -> Completion:
        return _run_cancellable(run, cancel)

    @staticmethod
    def _timed(run: Callable[[], Answer]) -> tuple[Answer, float]:
        started = time.perf_counter()
        answer = run()
        return answer, time.perf_counter() - started

    def _stats(self, answer: Answer, seconds: float) -> RequestStats:
        stats = stats_from_usage(answer.usage, answer.chunks)
        stats.seconds = seconds
        stats.first_token_seconds = answer.first_token_at or seconds
        self._totals.add(stats, answer.usage)
        return stats


@dataclass(frozen=True)
class _Request:
    body: dict[str, Any]
    stop: tuple[str, ...]  # matched on the streamed text whether or not the server has them
    min_token_p: float = 0.0  # the answer ends before a less likely token (AnswerBuilder)


def _one_logprob(token: str, logprob: float) -> dict[str, Any]:
    return {"tokens": [token], "token_logprobs": [logprob]}


def _check_prompt(prompt: str) -> None:
    if not isinstance(prompt, str) or not prompt:
        raise EngineError("empty prompt")


def _run_cancellable(run: Callable[[CancelFlag], T], cancel: threading.Event | None) -> T:
    """Run in a worker thread so a set `cancel` returns at once (Cancelled) even while the
    server is still prefilling; the worker then closes the stream at its next event."""
    if cancel is not None and cancel.is_set():
        raise Cancelled("request cancelled")
    stop = threading.Event()
    results: queue.Queue[tuple[bool, Any]] = queue.Queue()

    def work() -> None:
        try:
            results.put((True, run(stop)))
        except BaseException as exc:  # handed to the caller, raised there
            results.put((False, exc))

    threading.Thread(target=work, name="shadowtab-openai-request", daemon=True).start()
    while True:
        try:
            ok, value = results.get(timeout=POLL_S)
        except queue.Empty:
            if cancel is not None and cancel.is_set():
                stop.set()
                raise Cancelled("request cancelled") from None
            continue
        if ok:
            return value
        raise value
