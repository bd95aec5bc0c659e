"""Speculative decoding: greedy decoding that verifies k draft tokens (the original's, or
a lookup in the prompt and output where the rewrite has left it) in one forward pass and
keeps the longest agreeing run; near-tie positions re-decided by single-token steps
(TieCheck); an alternative candidate resumed from where it leaves the best one (Branch);
the original copied without decoding once the rewrite has re-joined it (copy_rest)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from ..api import RequestStats
from .decoding import Logits, SequenceWriter, TokenSink, gap_of, log_prob, top2_gaps
from .draft import DraftCursor, DraftPolicy, whole_lines
from .lookup import lookup_draft

# Below this top-2 logit gap a batched pass's choice is not trusted: batched passes use
# other kernels than single-token decoding, whose rounding flipped choices at plain gaps
# up to 0.23 here (the engine leaves the check off: see engine.NEAR_TIE_CHECK).
NEAR_TIE_MARGIN = 0.3
# The logit gap reported for original tokens copied without decoding (copy_rest): sure.
COPIED_GAP = 50.0


@dataclass
class TieCheck:
    """Re-decides near-tie positions of a verification pass with a single-token step in a
    scratch sequence holding a copy of the verified prefix's KV, so the main sequence
    keeps the pass's KV (off in the llama.cpp engine: llama_cpp/engine.py)."""

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


def speculative(
    writer: SequenceWriter,
    first: Logits,
    draft: Sequence[int],
    sink: TokenSink,
    stats: RequestStats,
    policy: DraftPolicy | None = None,
    branch: Branch | None = None,
    ties: TieCheck | None = None,
    head: Head | None = None,
) -> None:
    """Greedy decoding that verifies k draft tokens per forward pass (logits only on the
    pending token and the draft positions), keeping the longest agreeing run. With a
    `branch`, decoding resumes after its prefix (already in the KV and the sink, equal
    to the draft's start) with its forced token instead of the argmax of `first`. With
    `ties`, near-tie positions are re-decided by single-token steps (see TieCheck). With
    a `head` (evaluated after the prompt by the prefill: first_pass_inputs), the first
    pass is the prefill's when the model's first token is the head's."""
    cursor = DraftCursor(draft, policy)
    line_ends = [b"\n" in writer.runtime.piece(t) for t in draft]
    prefix = list(branch.prefix) if branch is not None else []
    cursor.pos = len(prefix)
    token = branch.token if branch is not None else int(np.argmax(first))
    output = [*prefix, token]
    changed = not copies_draft(draft, cursor.pos, token)
    cursor.advance(0, 0, token, output)
    if head is not None and head.inputs[0] != token:
        head.dropped(writer)  # the model does not begin as the draft does
        head = None
    if sink.push(token, gap_of(first, token), log_prob(first, token), changed):
        if head is not None:
            head.dropped(writer)
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
        inputs = [token, *proposal]
        if head is not None and head.inputs == inputs:
            base, rows = len(writer.tokens) - len(inputs), head.rows  # the prefill's pass
        else:
            if head is not None:
                head.dropped(writer)
            base = len(writer.tokens)
            rows = writer.eval(inputs, list(range(len(inputs))))
        head = None
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


@dataclass(frozen=True)
class Head:
    """The first pass's inputs (the model's expected first token, then the proposal
    after it), evaluated in the prefill's last pass after the prompt; `rows`: their
    logits. The writer's KV holds them until the first pass uses or drops them."""

    inputs: Sequence[int]
    rows: Logits

    def dropped(self, writer: SequenceWriter) -> None:
        """Take the head's tokens out of the KV (the first pass will not use them)."""
        writer.truncate(len(writer.tokens) - len(self.inputs))


def first_pass_inputs(
    draft: Sequence[int], policy: DraftPolicy | None, max_tokens: int
) -> list[int]:
    """What the first pass would verify when the model begins as the draft does: the
    draft's first token, then the proposal the cursor makes after it ([] without a
    draft). The prefill evaluates them in its last pass (`Head`) where the policy's
    verify_in_prefill says."""
    if not draft or max_tokens <= 0:
        return []
    cursor = DraftCursor(draft, policy)
    cursor.pos = 0
    cursor.advance(0, 0, draft[0], [draft[0]])
    proposal = cursor.proposal()[: max(0, max_tokens - 1)]
    return [draft[0], *proposal]


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
