"""Several plain continuations (ghost text of several editors) decoded together: one
pass per step for all of them, the weights read once for all (BatchRuntime.decode_batch):
a request that joins prefills its prompt's uncached tail in the pass where the others
decode a token. Greedy, as generation.py's plain path, with each request's healing,
minimum probability and stop strings. A request ends, and is answered (Lane.on_end), as
soon as it is done or cancelled, before the next pass; others may join between passes."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
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
    started: float  # perf_counter() when it began computing (its tokenizing included)
    writer: SequenceWriter | None = None
    sink: TokenSink | None = None
    row: Logits | None = None  # the logits the next token is chosen from
    completion: Completion | None = None
    error: BaseException | None = None
    on_end: Callable[[], None] | None = None  # called once it has its completion or error
    ended: bool = False  # its sequence is recorded and unpinned, its stats final

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


# Between two passes: lanes that join the batch, given how many decode in it now.
Join = Callable[[int], Sequence[Lane]]
# Told of each lane as it ends, before its caller is (the engine's accounts).
Ended = Callable[[Lane], None]


def decode_together(
    runtime: BatchRuntime,
    cache: PrefixCache,
    lanes: Sequence[Lane],
    join: Join | None = None,
    ended: Ended | None = None,
) -> None:
    """Each lane, and each that joins, ends with its completion or its error (Cancelled,
    or the engine's error, which is also raised)."""
    active: list[Lane] = []
    try:
        newcomers: Sequence[Lane] = lanes
        while newcomers or active:
            for lane in newcomers:
                _place(runtime, cache, lane)
                active.append(lane)
                _prefill_alone(runtime, lane)
            active = _pass(runtime, cache, active, ended)
            newcomers = join(len(active)) if join is not None else ()
    except BaseException as exc:
        for lane in active:
            if lane.open:
                lane.error = exc
        raise
    finally:
        for lane in active:
            _end(cache, lane, ended)


def _wanted(lane: Lane) -> bool:
    """Still open; a lane whose cancel is set now ends with Cancelled."""
    if lane.open and lane.cancel is not None and lane.cancel.is_set():
        lane.error = Cancelled("request cancelled")
    return lane.open


def _place(runtime: BatchRuntime, cache: PrefixCache, lane: Lane) -> None:
    """Its sequence, pinned so that the others' placements leave it alone. Its time
    starts here (its tokenizing included), not while it waited for the engine."""
    lane.started = time.perf_counter() - lane.prompt.seconds
    tokens = lane.tokens
    placement = cache.place(tokens, len(tokens) + reserve_of(lane.request))
    cache.pin(placement.seq)
    guard = lambda: cancel_guard(lane.cancel)  # noqa: E731
    lane.writer = SequenceWriter(runtime, placement.seq, tokens[: placement.reused], guard)
    lane.prompt.stats.reused_prompt_tokens = placement.reused
    clock = lambda: time.perf_counter() - lane.started  # noqa: E731
    text = TextAssembler(lane.request.stop, lane.request.emit)
    healing = lane.prompt.healed.healing()
    request = lane.request
    lane.sink = TokenSink(runtime, request.max_tokens, text, clock, request.min_token_p, healing)


def _prefill_alone(runtime: BatchRuntime, lane: Lane) -> None:
    """All but the last SHARED_TAIL uncached tokens, in the request's own passes (a
    long prompt: a new place), where its cancel stops the pass in flight."""
    assert lane.writer is not None
    end = len(lane.tokens) - SHARED_TAIL
    if end <= lane.position or not _wanted(lane):
        return
    try:
        with stopped_when_cancelled(runtime, lane.cancel):
            prefill_only(lane.writer, lane.tokens[:end], lane.request.prefill_chunk)
    except Cancelled as exc:
        lane.error = exc


def _pass(
    runtime: BatchRuntime, cache: PrefixCache, lanes: Sequence[Lane], ended: Ended | None
) -> list[Lane]:
    """One pass for every lane that goes on: a lane that has just joined evaluates the
    rest of its prompt, the others their next token (greedy). Lanes done or cancelled
    end first. The lanes still decoding after the pass."""
    going: list[tuple[Lane, list[int]]] = []
    for lane in lanes:
        inputs = _next_inputs(lane) if _wanted(lane) else None
        if inputs is None:
            _end(cache, lane, ended)
        else:
            going.append((lane, inputs))
    if not going:
        return []
    entries: list[Entry] = []
    outputs: list[int] = []
    for lane, inputs in going:
        entries += [(token, lane.seq, lane.position + i) for i, token in enumerate(inputs)]
        outputs.append(len(entries) - 1)
    rows = runtime.decode_batch(entries, outputs)
    for (lane, inputs), row in zip(going, rows, strict=True):
        assert lane.writer is not None and lane.sink is not None
        joined = lane.row is None
        lane.writer.wrote(inputs)
        lane.row = lane.sink.constrain(row.copy())
        if joined:  # as generation.py's plain path: the first row constrained twice
            lane.row = lane.sink.constrain(lane.row)
    return [lane for lane, _ in going]


def _next_inputs(lane: Lane) -> list[int] | None:
    """What the lane evaluates in the next pass: its prompt's tail when it has just
    joined, else the token it chooses now; None when that token ends it."""
    assert lane.sink is not None
    if lane.row is None:
        return lane.tokens[lane.position :]
    token = int(np.argmax(lane.row))
    if lane.sink.push(token, gap_of(lane.row, token), log_prob(lane.row, token)):
        return None
    return [token]


def _end(cache: PrefixCache, lane: Lane, ended: Ended | None) -> None:
    """The lane's sequence recorded and unpinned, its stats, its completion if it ended
    well; then its caller is told."""
    if lane.writer is None or lane.ended:
        return
    lane.ended = True
    cache.unpin(lane.writer.seq)
    cache.record(lane.writer.seq, lane.writer.tokens)
    stats = lane.prompt.stats
    account(stats, lane.writer, len(lane.tokens), stats.reused_prompt_tokens, lane.sink)
    stats.seconds = time.perf_counter() - lane.started
    if lane.sink is not None and lane.open:
        stats.first_token_seconds = lane.sink.result.first_token_at or stats.seconds
        lane.sink.result.text = lane.sink.text.finish()
        lane.completion = completion_of([lane.sink.result], stats)
    if ended is not None:
        ended(lane)
    if lane.on_end is not None:
        lane.on_end()
