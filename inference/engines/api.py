"""The engine interface shared by every engine: request statistics, results, the errors
engines raise and the limits every request is checked against (the options an engine is
built with: options.py)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass
class RequestStats:
    """What one request cost; prompt token counts refer to the (possibly truncated) prompt."""

    prompt_tokens: int = 0
    reused_prompt_tokens: int = 0  # served from the KV cache
    evaluated_prompt_tokens: int = 0
    truncated_prompt_tokens: int = 0  # dropped from the start: the prompt exceeded the context
    generated_tokens: int = 0
    forward_passes: int = 0
    draft_tokens: int = 0
    accepted_draft_tokens: int = 0
    seconds: float = 0.0
    first_token_seconds: float = 0.0
    preempted: bool = False  # warm() only: stopped early to let a real request run
    # speculative decoding: verified positions whose top-2 logit gap was below the margin,
    # re-decided by a single-token step, and of them those where that step chose otherwise
    near_ties: int = 0
    near_tie_flips: int = 0
    # n > 1: alternatives not decoded because the model was sure of its choice there
    alternatives_skipped: int = 0
    # a rewrite: the times it lent the engine to a plain continuation between two passes
    lent_to_urgent: int = 0
    # a rewrite that stopped once it re-joined the original: the original's tokens it
    # took as its end without decoding them
    copied_tokens: int = 0
    # complete(heal=True): the prompt's last tokens backed up, not prefilled; the first
    # generated tokens re-write them (reused + evaluated = prompt - healed)
    healed_tokens: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Completion:
    """n candidates, best first. token_ids and margins describe the best candidate:
    margins[i] is the top-2 logit gap when token i was chosen (empty when not computed).

    Per candidate (aligned with texts, empty when an engine does not report them):
    finish_reasons ("eos": the model's end token, "stop": a stop string, "length":
    max_tokens, "abandoned": an alternative that left the draft, "unsure": stopped before
    a token less likely than min_token_p, "rejoined": a rewrite that re-joined the draft
    and took the rest of it as its end; eos, stop and rejoined are complete answers),
    logprobs (the log-probability of each chosen token), text_offsets (the text's length
    after each token, to map characters of the text to the tokens that wrote them) and
    token_margins (each token's logit minus the best other one's: with
    its logprob, the top-1/top-2 probability margin; see token_confidence.py)."""

    texts: list[str]
    stats: RequestStats
    token_ids: list[int] = field(default_factory=list)
    margins: list[float] = field(default_factory=list)
    finish_reasons: list[str] = field(default_factory=list)
    logprobs: list[list[float]] = field(default_factory=list)
    text_offsets: list[list[int]] = field(default_factory=list)
    token_margins: list[list[float]] = field(default_factory=list)


@dataclass
class CacheInfo:
    bytes_per_token: int
    capacity_tokens: int
    used_tokens: int
    resident_prefixes: list[int]  # token count of each resident prefix, most recent first

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@runtime_checkable
class CancelFlag(Protocol):
    """threading.Event or anything with is_set(): how a caller cancels a request."""

    def is_set(self) -> bool: ...


class CancelEvent(threading.Event):
    """A cancel flag that also tells whoever watches it the moment it is set: an engine
    stops the forward pass in flight then, instead of at the next one."""

    def __init__(self) -> None:
        super().__init__()
        self._watchers_lock = threading.Lock()
        self._watchers: list[Callable[[], None]] = []

    def set(self) -> None:
        super().set()
        with self._watchers_lock:
            watchers = list(self._watchers)
        for watcher in watchers:
            watcher()

    def when_set(self, watcher: Callable[[], None]) -> Callable[[], None]:
        """Call `watcher` (from the setting thread) when the event is set, at once if it
        is; returns what stops watching."""
        with self._watchers_lock:
            self._watchers.append(watcher)
        if self.is_set():
            watcher()

        def stop_watching() -> None:
            with self._watchers_lock:
                if watcher in self._watchers:
                    self._watchers.remove(watcher)

        return stop_watching


class Engine(Protocol):
    """What the daemon, the predictor and the benchmarks use. Calls are thread-safe; a set
    `cancel` event stops a call within one forward pass with inference.Cancelled."""

    def warm(self, prompt: str, cancel: threading.Event | None = None) -> RequestStats: ...

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
        """`min_token_p`: decoding stops before the first token whose probability is
        below it (finish reason "unsure"); an engine that gets no probabilities from
        its model ignores it (its candidates carry no logprobs).

        `heal` (token healing): a prompt that ends inside a word (`self.na`) is backed
        up over its last token or two and the first generated tokens must re-write what
        was removed (`name` after `na`); the texts are what follows the prompt's end,
        and a healed token's probability is renormalized over the tokens that re-write
        it (P(token | what was typed)). Engines that decode elsewhere (a server) ignore
        it."""
        ...

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
        """`min_token_p`: a speculative rewrite stops before the first token that changes
        the draft whose probability is below it (finish reason "unsure": a rewrite that
        writes an unsure change is not shown, so what follows is not decoded); tokens
        copied from the draft are not judged. A greedy rewrite, or an engine that
        decodes elsewhere (a server), ignores it."""
        ...

    def tokenize(self, text: str, special: bool = False) -> list[int]: ...

    def cache_info(self) -> CacheInfo: ...

    def stats(self) -> dict[str, Any]: ...

    def close(self) -> None: ...


# errors


class EngineError(Exception):
    """A request or a model load failed; the message says why and the engine stays usable."""


class ModelLoadError(EngineError):
    """The model file is missing, not GGUF, or could not be loaded."""


class EngineNotReady(EngineError):
    """A request arrived while the model is still loading (or after close)."""


class Cancelled(EngineError):
    """The request's cancel event was set; it stopped within one forward pass."""


# request limits

MIN_PROMPT_ROOM = 16  # a request must leave at least this many tokens for the prompt


@dataclass(frozen=True)
class RequestLimits:
    n_ctx: int
    max_candidates: int


def check_request(
    limits: RequestLimits,
    max_tokens: int,
    n: int,
    draft: str | None = None,
    min_token_p: float = 0.0,
) -> None:
    if not isinstance(max_tokens, int) or max_tokens < 1:
        raise EngineError(f"max_tokens must be a positive integer, got {max_tokens!r}")
    if max_tokens > limits.n_ctx - MIN_PROMPT_ROOM:
        raise EngineError(
            f"max_tokens={max_tokens} leaves no room for the prompt in n_ctx={limits.n_ctx}"
        )
    if not isinstance(n, int) or not 1 <= n <= limits.max_candidates:
        raise EngineError(f"n must be between 1 and {limits.max_candidates}, got {n!r}")
    if draft is not None and not draft:
        raise EngineError("empty draft: rewrite() needs the original text (use complete())")
    if isinstance(min_token_p, bool) or not isinstance(min_token_p, int | float):
        raise EngineError(f"min_token_p must be a number from 0 to 1, got {min_token_p!r}")
    if not 0.0 <= min_token_p <= 1.0:
        raise EngineError(f"min_token_p must be from 0 to 1, got {min_token_p!r}")


def truncate_prompt(tokens: list[int], limit: int, keep_first: bool) -> tuple[list[int], int]:
    """Fit `tokens` into `limit` by dropping from the start (the stable end of a cache-aware
    prompt; the volatile end near the cursor matters most). Returns (tokens, dropped)."""
    limit = max(limit, MIN_PROMPT_ROOM)
    if len(tokens) <= limit:
        return tokens, 0
    dropped = len(tokens) - limit
    if keep_first:  # keep the BOS token the model expects first
        return [tokens[0], *tokens[dropped + 1 :]], dropped
    return tokens[dropped:], dropped
