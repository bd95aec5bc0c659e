"""Greedy and speculative decoding on one KV sequence, through the low-level runtime:
logits only where needed, argmax in numpy, a guard before every forward pass (cancel,
preemption)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from ..api import RequestStats
from ..text_output import TextAssembler
from .draft import DraftCursor, DraftPolicy, whole_lines
from .healing import Healing
from .lookup import lookup_draft
from .runtime import Runtime

Guard = Callable[[], None]  # raises to stop before the next forward pass
Logits = npt.NDArray[np.float32]


class SequenceWriter:
    """Evaluates tokens into one sequence and always knows exactly what its KV holds."""

    def __init__(self, runtime: Runtime, seq: int, cached: Sequence[int], guard: Guard) -> None:
        self.runtime = runtime
        self.seq = seq
        self.tokens = list(cached)
        self.guard = guard
        self.passes = 0

    def eval(self, tokens: Sequence[int], outputs: Sequence[int]) -> Logits:
        self.guard()
        logits = self.runtime.decode(tokens, self.seq, len(self.tokens), outputs)
        self.tokens.extend(tokens)
        self.passes += 1
        return logits

    def truncate(self, length: int) -> None:
        if length < len(self.tokens):
            self.runtime.seq_remove(self.seq, length, -1)
            del self.tokens[length:]


def prefill_only(writer: SequenceWriter, prompt: Sequence[int], chunk: int) -> None:
    """Evaluate the prompt's uncached tail in chunks, without logits (warming)."""
    for begin in range(len(writer.tokens), len(prompt), chunk):
        writer.eval(prompt[begin : begin + chunk], [])


def prefill(writer: SequenceWriter, prompt: Sequence[int], chunk: int) -> Logits:
    """Evaluate the prompt's uncached tail in chunks; the last token's logits (a copy)."""
    start = len(writer.tokens)
    logits: Logits | None = None
    for begin in range(start, len(prompt), chunk):
        part = prompt[begin : begin + chunk]
        last = begin + len(part) == len(prompt)
        rows = writer.eval(part, [len(part) - 1] if last else [])
        if last:
            logits = rows[0].copy()
    if logits is None:
        raise ValueError("prefill needs at least one uncached prompt token")
    return logits


def log_prob(row: Logits, token: int) -> float:
    """log softmax(row)[token], computed stably."""
    peak = float(row.max())
    return float(row[token]) - peak - float(np.log(np.exp(row - peak).sum()))


def gap_of(row: Logits, token: int) -> float:
    """The token's logit minus the best other one's (negative for a token that was not
    the model's first choice, such as an alternative's forced first token)."""
    other = max(row[:token].max(initial=-np.inf), row[token + 1 :].max(initial=-np.inf))
    return float(row[token] - other)


def top2_gaps(rows: Logits, choices: npt.NDArray[np.int64]) -> list[float]:
    """Per row, its top logit minus the runner-up (two max reductions, no sort)."""
    gaps = []
    for row, choice in zip(rows, choices, strict=True):
        c = int(choice)
        second = max(row[:c].max(initial=-np.inf), row[c + 1 :].max(initial=-np.inf))
        gaps.append(float(row[c] - second))
    return gaps


# Below this top-2 logit gap a batched pass's choice is not trusted: batched passes use
# other kernels than single-token decoding, whose rounding flipped choices at plain gaps
# up to 0.23 here (the engine leaves the check off: see engine.NEAR_TIE_CHECK).
NEAR_TIE_MARGIN = 0.3
# The logit gap reported for original tokens copied without decoding (copy_rest): sure.
COPIED_GAP = 50.0


@dataclass
class TieCheck:
    """Re-decides near-tie positions of a verification pass with a single-token step in a
    scratch sequence that shares the verified prefix's KV cells (a copy costs nothing in
    a unified cache), so the main sequence keeps the pass's KV."""

    scratch_seq: int
    margin: float = NEAR_TIE_MARGIN
    flip_gaps: list[float] = field(default_factory=list)  # the batch's gap at each flip

    def decide(self, writer: SequenceWriter, position: int, token: int) -> tuple[int, float]:
        """(choice, its logprob) after `token` evaluated alone at `position`."""
        runtime = writer.runtime
        writer.guard()
        runtime.seq_copy(writer.seq, self.scratch_seq, position)
        try:
            row = runtime.decode([token], self.scratch_seq, position, [0])[0]
            choice = int(np.argmax(row))
            writer.passes += 1
            return choice, log_prob(row, choice)
        finally:
            runtime.seq_remove(self.scratch_seq, 0, -1)


@dataclass
class Generation:
    tokens: list[int] = field(default_factory=list)
    margins: list[float] = field(default_factory=list)  # logit gap to the runner-up
    logprobs: list[float] = field(default_factory=list)  # of each kept token
    offsets: list[int] = field(default_factory=list)  # the text's length after each token
    # "eos", "stop" (a stop string), "length", "abandoned", "unsure" (stopped before a
    # token less likely than the request's min_token_p)
    finish: str = "unknown"
    text: str = ""
    first_token_at: float | None = None


class TokenSink:
    """Collects generated tokens; says when generation is over (end token, limit, stop)."""

    def __init__(
        self,
        runtime: Runtime,
        max_tokens: int,
        text: TextAssembler,
        clock: Callable[[], float],
        min_token_p: float = 0.0,
        healing: Healing | None = None,
    ) -> None:
        """`healing`: the removed end of the prompt the first tokens re-write (healing.py);
        those bytes are not the text, and the rows those tokens are chosen from are
        constrained (`constrain`)."""
        self.runtime = runtime
        self.max_tokens = max_tokens
        self.text = text
        self.clock = clock
        self.result = Generation()
        self.done = False
        # below it a token is unsure: generation stops before it (finish "unsure")
        self.min_logprob = math.log(min_token_p) if min_token_p > 0 else -math.inf
        self.healing = healing

    def constrain(self, row: Logits) -> Logits:
        """The logits the next token is chosen from: while healing re-writes the prompt's
        removed end, only tokens that do so (renormalized: see Healing.constrain)."""
        return self.healing.constrain(row) if self.healing is not None else row

    def push(
        self,
        token: int,
        margin: float | None = None,
        logprob: float | None = None,
        judged: bool = True,
    ) -> bool:
        """Add one token; True when generation must stop (the token may not be kept).
        `margin`: its logit gap to the runner-up; `logprob`: its log-probability;
        `judged`: held against the minimum probability (a rewrite's copies of its draft
        are not)."""
        if self.done:
            return True
        if self.result.first_token_at is None:
            self.result.first_token_at = self.clock()
        if judged and logprob is not None and logprob < self.min_logprob:
            self.done = True
            self.result.finish = "unsure"
            return True
        if self.runtime.is_end_of_generation(token):
            self.done = True
            self.result.finish = "eos"
            return True
        self.result.tokens.append(token)
        if margin is not None:
            self.result.margins.append(margin)
        if logprob is not None:
            self.result.logprobs.append(logprob)
        piece = self.runtime.piece(token)
        if self.healing is not None:
            piece = self.healing.written(piece)
        stopped = self.text.add(piece)
        self.result.offsets.append(len(self.text.text))
        if stopped:
            self.result.finish = "stop"
        elif len(self.result.tokens) >= self.max_tokens:
            self.result.finish = "length"
        self.done = stopped or len(self.result.tokens) >= self.max_tokens
        return self.done


def greedy(writer: SequenceWriter, first: Logits, sink: TokenSink) -> None:
    """Plain greedy decoding, one token per forward pass: the reference output (the
    sink's healing constrains the first tokens)."""
    row = sink.constrain(first)
    while True:
        token = int(np.argmax(row))
        if sink.push(token, gap_of(row, token), log_prob(row, token)):
            return
        row = sink.constrain(writer.eval([token], [0])[0])


def speculative(
    writer: SequenceWriter,
    first: Logits,
    draft: Sequence[int],
    sink: TokenSink,
    stats: RequestStats,
    policy: DraftPolicy | None = None,
    branch: Branch | None = None,
    ties: TieCheck | None = None,
) -> None:
    """Greedy decoding that verifies k draft tokens per forward pass (logits only on the
    pending token and the draft positions), keeping the longest agreeing run. With a
    `branch`, decoding resumes after its prefix (already in the KV and the sink, equal
    to the draft's start) with its forced token instead of the argmax of `first`. With
    `ties`, near-tie positions are re-decided by single-token steps (see TieCheck)."""
    cursor = DraftCursor(draft, policy)
    line_ends = [b"\n" in writer.runtime.piece(t) for t in draft]
    prefix = list(branch.prefix) if branch is not None else []
    cursor.pos = len(prefix)
    token = branch.token if branch is not None else int(np.argmax(first))
    output = [*prefix, token]
    changed = not copies_draft(draft, cursor.pos, token)
    cursor.advance(0, 0, token, output)
    if sink.push(token, gap_of(first, token), log_prob(first, token), changed):
        return
    idle = 0  # passes in a row that did not move the draft pointer past its furthest spot
    furthest = cursor.pos or 0
    while True:
        if branch is not None and idle > BRANCH_PATIENCE:
            sink.result.finish = "abandoned"  # an alternative that left the draft for good
            return
        proposal, looked_up = _proposal(cursor, writer.tokens, token)
        proposal = proposal[: max(0, sink.max_tokens - len(sink.result.tokens))]
        proposal = proposal[: _until_rejoined(cursor, line_ends)]
        base = len(writer.tokens)
        inputs = [token, *proposal]
        rows = writer.eval(inputs, list(range(len(inputs))))
        verdict = _verify(writer, rows, inputs, base, stats, ties)
        accepted, token = verdict.accepted, verdict.token
        writer.truncate(base + 1 + accepted)  # drop the rejected draft tokens' KV
        stats.draft_tokens += len(proposal)
        stats.accepted_draft_tokens += accepted
        output.extend([*proposal[:accepted], token])
        kept_tokens = [*proposal[:accepted], token]
        if looked_up:
            judged = _follow_one_by_one(cursor, draft, output, kept_tokens, line_ends)
            kept_tokens = kept_tokens[: len(judged)]  # to where the rewrite stops
        else:
            before = cursor.pos
            at = None if before is None else before + accepted
            judged = [False] * accepted + [not copies_draft(draft, at, token)]
            cursor.advance(verdict.judged, accepted, token, output)
        reached = cursor.pos if cursor.pos is not None else furthest
        idle, furthest = (0, reached) if reached > furthest else (idle + 1, furthest)
        n = len(kept_tokens)
        kept = zip(kept_tokens, verdict.gaps[:n], verdict.logprobs[:n], judged, strict=True)
        for kept_token, gap, logprob, is_change in kept:
            if sink.push(kept_token, gap, logprob, is_change):
                return
        if rejoined(cursor, line_ends, cursor.policy.stop_after_rejoined_lines):
            stats.copied_tokens += copy_rest(sink, draft, cursor.pos or 0)
            return


def _proposal(
    cursor: DraftCursor, evaluated: Sequence[int], pending: int
) -> tuple[list[int], bool]:
    """What the next pass verifies after `pending`: the original's next tokens, or, where
    the output has left it, a lookup in the prompt and the output (True: looked up)."""
    proposal = cursor.proposal()
    if proposal or cursor.pos is not None:
        return proposal, False
    policy = cursor.policy
    history = [*evaluated, pending]
    found = lookup_draft(history, policy.lookup_match_tokens, policy.lookup_tokens)
    return found, bool(found)


def _follow_one_by_one(
    cursor: DraftCursor,
    draft: Sequence[int],
    output: Sequence[int],
    kept: Sequence[int],
    line_ends: Sequence[bool],
) -> list[bool]:
    """The cursor told of a looked-up pass's kept tokens (the end of `output`) one at a
    time, as single-token steps would have told it: it re-joins the original where they
    do, and each token is judged as a change unless it copies the original there. Per
    token up to where the rewrite stops at re-join (the rest is not kept): whether it is
    a change."""
    start = len(output) - len(kept)
    changes = []
    for i, token in enumerate(kept):
        changes.append(not copies_draft(draft, cursor.pos, token))
        cursor.advance(0, 0, token, output[: start + i + 1])
        if rejoined(cursor, line_ends, cursor.policy.stop_after_rejoined_lines):
            break
    return changes


def _until_rejoined(cursor: DraftCursor, line_ends: Sequence[bool]) -> int | None:
    """How many draft tokens the next pass may verify before the rewrite has copied
    enough whole lines to stop (None: no limit): a pass past that point is wasted."""
    lines = cursor.policy.stop_after_rejoined_lines
    start, pos = cursor.rejoined_at, cursor.pos
    if lines <= 0 or start is None or pos is None:
        return None
    # whole_lines(line_ends, start, end) >= lines, found in one walk: the newline that
    # completes the lines-th whole line (one more when `start` is inside a line)
    needed = lines if start == 0 or line_ends[start - 1] else lines + 1
    seen = 0
    for index in range(start, len(line_ends)):
        seen += line_ends[index]
        if seen >= needed:
            return max(index + 1 - pos, 0)
    return None


def copies_draft(draft: Sequence[int], pos: int | None, token: int) -> bool:
    """`token` is the draft's token at `pos` (the output copies the original there)."""
    return pos is not None and pos < len(draft) and draft[pos] == token


def rejoined(cursor: DraftCursor, line_ends: Sequence[bool], lines: int) -> bool:
    """After a change, the output has copied `lines` whole lines of the original."""
    start, end = cursor.rejoined_at, cursor.pos
    if lines <= 0 or start is None or end is None:
        return False
    return whole_lines(line_ends, start, end) >= lines


def copy_rest(sink: TokenSink, draft: Sequence[int], start: int) -> int:
    """The original from draft token `start` on, as the output's end (not decoded: no
    probability was computed; counted as sure, they change nothing); tokens copied.
    Unless a stop string or the length ends it first, the answer is complete: finish
    reason "rejoined" (where the model would have written its end token)."""
    copied = 0
    for token in draft[start:]:
        copied += 1
        if sink.push(token, COPIED_GAP, 0.0, judged=False):
            return copied
    sink.done = True
    sink.result.finish = "rejoined"
    return copied


# Passes in a row an alternative may spend without progress (the draft pointer not moved
# past the furthest spot it reached) before it is abandoned: one that does not re-join the
# original is a rewrite of something else (its answer is cut off, so never shown) and
# decodes one token per pass meanwhile. 12 cuts those passes and keeps the candidates
# that are shown (docs/MEASUREMENTS.md).
# Counted as passes without progress, not passes away from the draft: an alternative
# caught in a loop (the same lines again and again) re-aligns on each repeat and even has
# some proposals accepted, but never gets further through the original, and would run
# until max_tokens.
BRANCH_PATIENCE = 12


@dataclass(frozen=True)
class Branch:
    """Where an alternative candidate leaves the best one: its first tokens, then `token`."""

    prefix: Sequence[int]
    token: int


@dataclass(frozen=True)
class Verdict:
    accepted: int  # draft tokens kept
    token: int  # the model's token after them
    logprobs: list[float]  # of the kept draft tokens, then of `token`
    gaps: list[float]  # their logit gaps to the runner-up
    judged: int  # draft tokens the pass judged (fewer when a re-decision cut it short)


def _verify(
    writer: SequenceWriter,
    rows: Logits,
    inputs: Sequence[int],
    base: int,
    stats: RequestStats,
    ties: TieCheck | None,
) -> Verdict:
    """What the pass over `inputs` (the pending token, then the proposal) decides: the
    agreeing run, then the model's token. A near-tie position is re-decided alone; when
    that flips its choice the pass ends there (later rows assumed the other token)."""
    proposal = inputs[1:]
    choices = np.argmax(rows, axis=1)
    run = _agreeing_run(proposal, choices)
    used = run + 1
    logprobs = [log_prob(rows[j], int(choices[j])) for j in range(used)]
    gaps = top2_gaps(rows[:used], choices[:used])
    # everything needed from `rows` is read: a re-decision's decode may overwrite them
    for j, gap in enumerate(gaps):
        if ties is None or gap >= ties.margin:
            continue
        stats.near_ties += 1
        choice, logprob = ties.decide(writer, base + j, inputs[j])
        if choice != int(choices[j]):
            stats.near_tie_flips += 1
            ties.flip_gaps.append(gap)
            agrees = j < len(proposal) and choice == proposal[j]
            judged = j if agrees else len(proposal)
            # the re-decided token's gap is not known: the batch's, a near tie, stands in
            return Verdict(j, choice, [*logprobs[:j], logprob], gaps[: j + 1], judged)
    return Verdict(run, int(choices[run]), logprobs, gaps, len(proposal))


def _agreeing_run(proposal: Sequence[int], choices: npt.NDArray[np.int64]) -> int:
    for i, drafted in enumerate(proposal):
        if int(choices[i]) != drafted:
            return i
    return len(proposal)
