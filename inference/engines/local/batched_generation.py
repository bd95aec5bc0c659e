"""Several plain continuations (ghost text of several editors) decoded together: each
request's uncached prompt tail in one shared pass, then one pass per step for all of
them, the weights read once for all (BatchRuntime.decode_batch). Greedy, as
generation.py's plain path, with each request's healing, minimum probability and stop
strings; a request cancelled meanwhile leaves the batch before the next pass."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from ..api import CancelFlag, Cancelled, Completion
from ..text_output import TextAssembler
from .decoding import Logits, SequenceWriter, TokenSink, gap_of, log_prob, prefill_only
from .generation import GenerationRequest, RequestPrompt, account, completion_of, reserve_of
from .kv_cache import PrefixCache
from .runtime import Runtime
from .scheduling import cancel_guard, stopped_when_cancelled

# What each request prefills in the shared pass at most; the rest of a long uncached
# prompt (a new place) is prefilled on its own first, where its cancel can stop it.
SHARED_TAIL = 16

Entry = tuple[int, int, int]  # (token, sequence, position)


@runtime_checkable
class BatchRuntime(Runtime, Protocol):
    def decode_batch(self, entries: Sequence[Entry], outputs: Sequence[int]) -> Logits:
        """One pass over tokens of several sequences; the logits rows of the batch
        indexes in `outputs` (ascending), a view valid until the next decode."""
        ...


@dataclass
class Lane:
    """One request in a batch, and what came of it: `completion`, or `error`."""

    request: GenerationRequest
    prompt: RequestPrompt
    cancel: CancelFlag | None
    started: float  # perf_counter() when the request began (its tokenizing included)
    writer: SequenceWriter | None = None
    sink: TokenSink | None = None
    row: Logits | None = None  # the logits the next token is chosen from
    completion: Completion | None = None
    error: BaseException | None = None

    @classmethod
    def of(
        cls, request: GenerationRequest, prompt: RequestPrompt, cancel: CancelFlag | None
    ) -> Lane:
        return cls(request, prompt, cancel, time.perf_counter() - prompt.seconds)

    @property
    def open(self) -> bool:
        return self.error is None and self.completion is None

    @property
    def seq(self) -> int:
        assert self.writer is not None
        return self.writer.seq

    @property
    def position(self) -> int:
        """Where the next token goes in its sequence."""
        assert self.writer is not None
        return len(self.writer.tokens)

    @property
    def tokens(self) -> list[int]:
        return self.prompt.healed.tokens


def decode_together(runtime: BatchRuntime, cache: PrefixCache, lanes: Sequence[Lane]) -> None:
    """Each lane ends with its completion or its error (Cancelled, or the engine's error,
    which is also raised)."""
    try:
        for lane in lanes:
            _place(runtime, cache, lane)
        for lane in _open(lanes):
            _prefill_alone(runtime, lane)
        _prefill_tails(runtime, _open(lanes))
        while _step(runtime, _open(lanes)):
            pass
    except BaseException as exc:
        for lane in _open(lanes):
            lane.error = exc
        raise
    finally:
        for lane in lanes:
            _close(cache, lane)


def _open(lanes: Sequence[Lane]) -> list[Lane]:
    """The lanes still decoding (placed, not ended, not cancelled)."""
    return [lane for lane in lanes if _wanted(lane) and lane.writer is not None]


def _wanted(lane: Lane) -> bool:
    """Still open; a lane whose cancel is set now ends with Cancelled."""
    if lane.open and lane.cancel is not None and lane.cancel.is_set():
        lane.error = Cancelled("request cancelled")
    return lane.open


def _place(runtime: BatchRuntime, cache: PrefixCache, lane: Lane) -> None:
    """Its sequence, pinned so that the others' placements leave it alone."""
    tokens = lane.tokens
    placement = cache.place(tokens, len(tokens) + reserve_of(lane.request))
    cache.pin(placement.seq)
    guard = lambda: cancel_guard(lane.cancel)  # noqa: E731
    lane.writer = SequenceWriter(runtime, placement.seq, tokens[: placement.reused], guard)
    lane.prompt.stats.reused_prompt_tokens = placement.reused
    clock = lambda: time.perf_counter() - lane.started  # noqa: E731
    text = TextAssembler(lane.request.stop, lane.request.emit)
    healing = lane.prompt.healed.healing()
    lane.sink = TokenSink(
        runtime, lane.request.max_tokens, text, clock, lane.request.min_token_p, healing
    )


def _prefill_alone(runtime: BatchRuntime, lane: Lane) -> None:
    """All but the last SHARED_TAIL uncached tokens, in the request's own passes."""
    assert lane.writer is not None
    end = len(lane.tokens) - SHARED_TAIL
    if end <= len(lane.writer.tokens):
        return
    try:
        with stopped_when_cancelled(runtime, lane.cancel):
            prefill_only(lane.writer, lane.tokens[:end], lane.request.prefill_chunk)
    except Cancelled as exc:
        lane.error = exc


def _prefill_tails(runtime: BatchRuntime, lanes: Sequence[Lane]) -> None:
    """The rest of every prompt in one pass; each lane's row after its last token."""
    entries: list[Entry] = []
    outputs: list[int] = []
    for lane in lanes:
        assert lane.writer is not None
        tail = lane.tokens[lane.position :]
        entries += [(token, lane.seq, lane.position + i) for i, token in enumerate(tail)]
        outputs.append(len(entries) - 1)
    if not entries:
        return
    rows = runtime.decode_batch(entries, outputs)
    for lane, row in zip(lanes, rows, strict=True):
        assert lane.writer is not None and lane.sink is not None
        lane.writer.wrote(lane.tokens[len(lane.writer.tokens) :])
        lane.row = lane.sink.constrain(lane.sink.constrain(row.copy()))


def _step(runtime: BatchRuntime, lanes: Sequence[Lane]) -> bool:
    """Each lane's next token chosen (greedy); those that go on are evaluated in one pass.
    False when no lane goes on."""
    going: list[tuple[Lane, int]] = []
    for lane in lanes:
        assert lane.sink is not None and lane.row is not None
        token = int(np.argmax(lane.row))
        if not lane.sink.push(token, gap_of(lane.row, token), log_prob(lane.row, token)):
            going.append((lane, token))
    going = [(lane, token) for lane, token in going if _wanted(lane)]
    if not going:
        return False
    entries = [(token, lane.seq, lane.position) for lane, token in going]
    rows = runtime.decode_batch(entries, range(len(entries)))
    for (lane, token), row in zip(going, rows, strict=True):
        assert lane.writer is not None and lane.sink is not None
        lane.writer.wrote([token])
        lane.row = lane.sink.constrain(row.copy())
    return True


def _close(cache: PrefixCache, lane: Lane) -> None:
    """The lane's sequence recorded and unpinned; its stats; its completion if it ended."""
    if lane.writer is None:
        return
    cache.unpin(lane.writer.seq)
    cache.record(lane.writer.seq, lane.writer.tokens)
    stats = lane.prompt.stats
    account(stats, lane.writer, len(lane.tokens), stats.reused_prompt_tokens, lane.sink)
    stats.seconds = time.perf_counter() - lane.started
    if lane.sink is None or not lane.open:
        return
    stats.first_token_seconds = lane.sink.result.first_token_at or stats.seconds
    lane.sink.result.text = lane.sink.text.finish()
    lane.completion = completion_of([lane.sink.result], stats)
