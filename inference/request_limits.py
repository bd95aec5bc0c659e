"""Validating request arguments and fitting prompts into the context."""

from __future__ import annotations

from dataclasses import dataclass

from .errors import EngineError

MIN_PROMPT_ROOM = 16  # a request must leave at least this many tokens for the prompt


@dataclass(frozen=True)
class RequestLimits:
    n_ctx: int
    max_candidates: int


def check_request(limits: RequestLimits, max_tokens: int, n: int, draft: str | None = None) -> None:
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
