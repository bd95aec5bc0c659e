"""One complete()/rewrite() request on the runtime: place the prompt in the prefix cache,
prefill what is not cached, decode (greedy or speculative), extra candidates for n > 1."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..api import Completion, RequestStats
from ..text_output import Emit, TextAssembler
from .continuation import drafted_greedy
from .decoding import (
    Generation,
    Guard,
    Logits,
    SequenceWriter,
    TokenSink,
    gap_of,
    greedy,
    log_prob,
    prefill_with_head,
)
from .draft import DraftPolicy
from .healing import HealedPrompt, Healing, Vocabulary, heal
from .kv_cache import PrefixCache
from .runtime import Runtime
from .speculative import Branch, Head, TieCheck, first_pass_inputs, speculative

PromptTokenizer = Callable[[Runtime, str, int, RequestStats], list[int]]
# Between two passes: lend the engine to an urgent call that waits; True when it did.
Lend = Callable[[], bool]
DRAFT_POLICY = DraftPolicy()
# An alternative is decoded only where the model is unsure: its first token must be at
# least this likely where it leaves the best candidate. A settled intent costs one
# candidate's decode, not n (alternatives that leave the draft cost far more passes
# than the best candidate).
ALTERNATIVE_MIN_P = 0.1


@dataclass(frozen=True)
class GenerationRequest:
    prompt: str
    draft: tuple[str, str] | None  # (original text, "speculative" | "greedy"); None: complete
    max_tokens: int
    stop: tuple[str, ...]
    n: int
    emit: Emit | None
    prefill_chunk: int = 128
    tie_seq: int | None = None  # a scratch sequence for near-tie re-decisions (speculative.py)
    policy: DraftPolicy = DRAFT_POLICY  # draft lengths by this engine's pass-cost curve
    alternative_min_p: float = ALTERNATIVE_MIN_P
    # complete(): stop before the first token less likely than this (0: never)
    min_token_p: float = 0.0
    # complete(): back the prompt up over the end of a word and re-write it (healing.py)
    heal: bool = False


@dataclass(frozen=True)
class RequestPrompt:
    """A request's prompt tokens as it will prefill them (truncated, healed): known before
    it waits for the engine, so that a warming pass it needs is not interrupted."""

    healed: HealedPrompt
    stats: RequestStats
    seconds: float  # tokenizing it (the request's time, not the wait for the engine)


def request_prompt(
    runtime: Runtime,
    request: GenerationRequest,
    prompt_tokens: PromptTokenizer,
    vocabulary: Vocabulary | None = None,
) -> RequestPrompt:
    """`vocabulary`: the runtime's, for a request that heals."""
    started = time.perf_counter()
    stats = RequestStats()
    tokens = prompt_tokens(runtime, request.prompt, _reserve(request), stats)
    healed = HealedPrompt(tokens)
    if request.heal and request.draft is None and vocabulary is not None:
        healed = heal(tokens, vocabulary)
        stats.healed_tokens = healed.backed_up
    return RequestPrompt(healed, stats, time.perf_counter() - started)


def _reserve(request: GenerationRequest) -> int:
    return request.max_tokens + request.policy.k_max + 1


def run_generation(
    runtime: Runtime,
    cache: PrefixCache,
    request: GenerationRequest,
    prompt: RequestPrompt,
    guard: Guard,
    lend: Lend | None = None,
) -> Completion:
    """`lend`: the prompt and the best candidate may lend the engine between two passes
    (alternatives may not: their spare sequences are other requests' too); the request's
    sequence is pinned in the cache meanwhile."""
    started = time.perf_counter() - prompt.seconds
    stats, healed = prompt.stats, prompt.healed
    tokens, reserve = healed.tokens, _reserve(request)
    # a plain continuation's draft: the model's previous answer after this prompt
    earlier = cache.continuation(tokens, request.max_tokens) if request.draft is None else []
    # room for the answers, and for a padded pass's cells (pass_plan.py)
    placement = cache.place(tokens, len(tokens) + reserve * request.n + runtime.pass_tile)
    cache.pin(placement.seq)
    writer = SequenceWriter(
        runtime, placement.seq, tokens[: placement.reused], _lending(guard, lend, stats)
    )
    stats.reused_prompt_tokens = placement.reused
    clock = lambda: time.perf_counter() - started  # noqa: E731
    sink: TokenSink | None = None
    try:
        draft = _draft_tokens(runtime, request)
        head_inputs = first_pass_inputs(draft or [], request.policy, request.max_tokens)
        head_inputs = head_inputs or earlier
        only_free = draft is not None and not request.policy.verify_in_prefill
        rows = prefill_with_head(writer, tokens, head_inputs, request.prefill_chunk, only_free)
        first = rows[0]
        head = Head(head_inputs, rows[1:]) if head_inputs and len(rows) > 1 else None
        sink = TokenSink(
            runtime,
            request.max_tokens,
            TextAssembler(request.stop, request.emit),
            clock,
            request.min_token_p,
            healed.healing(),
        )
        first = sink.constrain(first)  # the alternatives' first tokens heal too
        ties = TieCheck(request.tie_seq) if request.tie_seq is not None else None
        if draft is None:
            drafted_greedy(writer, first, earlier, head.rows if head else None, sink, stats)
        else:
            speculative(writer, first, draft, sink, stats, request.policy, ties=ties, head=head)
        writer.guard = guard
        sink.result.text = sink.text.finish()
        found = [sink.result]
        if request.n > 1:
            found += _more_candidates(
                runtime, cache, writer, tokens, first, draft, sink.result, request, stats,
                guard, healed.healing, ties,
            )  # fmt: skip
    finally:
        cache.unpin(writer.seq)
        cache.record(writer.seq, writer.tokens)
        _account(stats, writer, len(tokens), placement.reused, sink)
        stats.seconds = time.perf_counter() - started
        if sink is not None:
            stats.first_token_seconds = sink.result.first_token_at or stats.seconds
    return _completion(found, stats)


def _account(
    stats: RequestStats,
    writer: SequenceWriter,
    prompt_length: int,
    reused: int,
    sink: TokenSink | None,
) -> None:
    """What the call computed, also when a cancel stopped it part-way (its prefill
    counts as far as it got): the engine's time by kind splits stopped calls by it."""
    stats.forward_passes += writer.passes
    stats.evaluated_prompt_tokens = min(len(writer.tokens), prompt_length) - reused
    if sink is not None:
        stats.generated_tokens = len(sink.result.tokens)


def _lending(guard: Guard, lend: Lend | None, stats: RequestStats) -> Guard:
    if lend is None:
        return guard

    def guard_then_lend() -> None:
        guard()
        if lend():
            stats.lent_to_urgent += 1
            guard()  # cancelled while it waited

    return guard_then_lend


def _completion(found: list[Generation], stats: RequestStats) -> Completion:
    """Identical candidates are shown once (the first, best ranked, is kept)."""
    unique: dict[str, Generation] = {}
    for generation in found:
        unique.setdefault(generation.text, generation)
    kept = list(unique.values())
    best = kept[0]
    return Completion(
        [g.text for g in kept],
        stats,
        best.tokens,
        best.margins,
        finish_reasons=[g.finish for g in kept],
        logprobs=[g.logprobs for g in kept],
        text_offsets=[g.offsets for g in kept],
        token_margins=[g.margins for g in kept],
    )


def _draft_tokens(runtime: Runtime, request: GenerationRequest) -> list[int] | None:
    if request.draft is None or request.draft[1] != "speculative":
        return None
    return runtime.tokenize(request.draft[0], add_bos=False)


def _more_candidates(
    runtime: Runtime,
    cache: PrefixCache,
    writer: SequenceWriter,
    prompt: list[int],
    first: Logits,
    draft: list[int] | None,
    best: Generation,
    request: GenerationRequest,
    stats: RequestStats,
    guard: Guard,
    healing: Callable[[], Healing | None],
    ties: TieCheck | None,
) -> list[Generation]:
    """Candidates 2..n in sequences borrowed from the prefix cache as they are needed
    (each one borrowed may evict a cached prompt), given back emptied: a continuation's
    alternatives, or a rewrite's branches."""
    lent: list[int] = []

    def borrow(count: int) -> list[int]:
        seqs = cache.borrow(count)
        lent.extend(seqs)
        return seqs

    try:
        if draft is None:
            return _alternatives(
                runtime, writer.seq, borrow, prompt, first, request, guard, stats, healing
            )
        return _branches(runtime, writer, borrow, prompt, first, draft, best, request, stats, ties)
    finally:
        cache.give_back(lent)


def _alternatives(
    runtime: Runtime,
    seq: int,
    borrow: Callable[[int], list[int]],
    prompt: list[int],
    first: Logits,
    request: GenerationRequest,
    guard: Guard,
    stats: RequestStats,
    healing: Callable[[], Healing | None] = lambda: None,
) -> list[Generation]:
    """Candidates 2..n: the next most likely first tokens (likely enough), each continued
    greedily in a spare sequence that starts as a copy of the prompt's KV (as many as
    `borrow` lends). Duplicates are dropped. `first` is constrained already where the
    request heals; `healing` gives each candidate its own constraint to follow."""
    ranked = plausible_alternatives(first, int(np.argmax(first)), request, stats)
    found: list[Generation] = []
    for spare, token in zip(borrow(len(ranked)) if ranked else [], ranked, strict=False):
        runtime.seq_copy(seq, spare, len(prompt))
        writer = SequenceWriter(runtime, spare, prompt, guard)
        try:
            sink = TokenSink(
                runtime,
                request.max_tokens,
                TextAssembler(request.stop),
                lambda: 0.0,
                request.min_token_p,
                healing(),
            )
            first_token = int(token)
            if not sink.push(first_token, gap_of(first, first_token), log_prob(first, first_token)):
                greedy(writer, writer.eval([int(token)], [0])[0], sink)
            sink.result.text = sink.text.finish()
            found.append(sink.result)
        finally:
            runtime.seq_remove(spare, 0, -1)
    return found


def plausible_alternatives(
    row: Logits, chosen: int, request: GenerationRequest, stats: RequestStats
) -> list[int]:
    """The n - 1 most likely tokens other than `chosen` whose probability reaches
    request.alternative_min_p (and min_token_p: a first token below it would be cut at
    once); the others are counted in stats.alternatives_skipped."""
    ranked = [int(t) for t in np.argsort(-row)[: request.n] if int(t) != chosen][: request.n - 1]
    floor = max(request.alternative_min_p, request.min_token_p)
    kept = [t for t in ranked if math.exp(log_prob(row, t)) >= floor]
    stats.alternatives_skipped += len(ranked) - len(kept)
    return kept


def branch_position(best: Generation, draft: Sequence[int]) -> int:
    """Where alternatives of a rewrite leave the best candidate: its first token that
    differs from the draft (where it starts editing), else its least likely token."""
    for i, token in enumerate(best.tokens):
        if i >= len(draft) or draft[i] != token:
            return i
    if not best.logprobs:
        return 0
    return int(np.argmin(best.logprobs[: len(best.tokens)]))


def _settled(best: Generation, at: int, request: GenerationRequest) -> bool:
    """The best candidate's token at the branch is so likely that no other reaches
    alternative_min_p: known without the pass that computes the branch's logits."""
    if at >= len(best.tokens) or at >= len(best.logprobs):
        return False
    return math.exp(best.logprobs[at]) > 1.0 - request.alternative_min_p


def _branches(
    runtime: Runtime,
    writer: SequenceWriter,
    borrow: Callable[[int], list[int]],
    prompt: list[int],
    first: Logits,
    draft: list[int],
    best: Generation,
    request: GenerationRequest,
    stats: RequestStats,
    ties: TieCheck | None,
) -> list[Generation]:
    """Rewrite candidates 2..n: at the branch position, the next most likely tokens in
    place of the best one's, each continued speculatively (the same draft) in a spare
    sequence that starts as a copy of the prompt's and the common prefix's KV (a first
    borrowed sequence holds that copy; as many candidates as `borrow` lends)."""
    at = branch_position(best, draft)
    if _settled(best, at, request):
        stats.alternatives_skipped += request.n - 1
        return []
    lent = borrow(1)
    if not lent:
        return []
    prefix, base = best.tokens[:at], lent[0]
    length = len(prompt) + at
    if at == 0:
        row = first
        runtime.seq_copy(writer.seq, base, length)
    else:  # the logits at the branch: re-evaluate the token before it
        runtime.seq_copy(writer.seq, base, length - 1)
        scratch = SequenceWriter(runtime, base, [*prompt, *prefix[:-1]], writer.guard)
        row = scratch.eval([prefix[-1]], [0])[0].copy()
        stats.forward_passes += scratch.passes
    chosen = best.tokens[at] if at < len(best.tokens) else -1
    found = []
    alternatives = plausible_alternatives(row, chosen, request, stats)
    spares = borrow(len(alternatives)) if alternatives else []
    for spare, token in zip(spares, alternatives, strict=False):
        runtime.seq_copy(base, spare, length)
        found.append(
            _branch(runtime, spare, prompt, prefix, best, token, row, draft, request, stats, ties)
        )
    return found


def _branch(
    runtime: Runtime,
    seq: int,
    prompt: list[int],
    prefix: list[int],
    best: Generation,
    token: int,
    row: Logits,
    draft: list[int],
    request: GenerationRequest,
    stats: RequestStats,
    ties: TieCheck | None,
) -> Generation:
    writer = SequenceWriter(runtime, seq, [*prompt, *prefix], lambda: None)
    sink = TokenSink(runtime, request.max_tokens, TextAssembler(request.stop), lambda: 0.0)
    for i, kept in enumerate(prefix):  # the shared start, with the best one's logprobs
        margin = best.margins[i] if i < len(best.margins) else None
        sink.push(kept, margin, best.logprobs[i] if i < len(best.logprobs) else None)
    if not sink.done:
        branch = Branch(prefix, token)
        speculative(writer, row, draft, sink, stats, request.policy, branch, ties)
    stats.forward_passes += writer.passes
    sink.result.text = sink.text.finish()
    return sink.result
