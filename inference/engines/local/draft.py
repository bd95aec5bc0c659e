"""The draft for speculative edits: a pointer into the original text's tokens that follows
the output, pauses inside edited stretches and re-aligns when the output re-joins the
original; the draft length adapts to the acceptance seen so far and the measured cost of
passes by length."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass

# The time of one pass of n tokens in single-token decode steps, measured on this
# project's machines (llama.cpp CPU, Q8_0, 2 cores; issue 12); linear in between.
# Passes of 64+ tokens take faster matrix kernels (63 tokens cost more than 64).
PASS_COST: tuple[tuple[int, float], ...] = (
    (1, 1.0), (9, 4.1), (17, 6.5), (33, 11.0), (64, 16.7), (128, 29.4), (256, 58.0),
)  # fmt: skip


def pass_cost(tokens: int, curve: Sequence[tuple[int, float]] = PASS_COST) -> float:
    sizes = [size for size, _ in curve]
    i = bisect_left(sizes, tokens)
    if i < len(curve) and sizes[i] == tokens:
        return curve[i][1]
    if i == 0:
        return curve[0][1]
    if i == len(curve):
        (a, ca), (b, cb) = curve[-2], curve[-1]
    else:
        (a, ca), (b, cb) = curve[i - 1], curve[i]
    return ca + (cb - ca) * (tokens - a) / (b - a)


def steps_per_token(k: int, acceptance: float, curve: Sequence[tuple[int, float]]) -> float:
    """Expected decode steps per output token of passes verifying k draft tokens when
    each is accepted with probability `acceptance` (the model's own token always counts)."""
    a = min(max(acceptance, 0.0), 0.999)
    expected = (1 - a ** (k + 1)) / (1 - a)
    return pass_cost(k + 1, curve) / expected


@dataclass(frozen=True)
class DraftPolicy:
    # Draft lengths to choose from. The longest make passes of 64 and 128 tokens (the
    # pending token + k): faster kernels whose near-ties speculative.TieCheck re-decides.
    ladder: tuple[int, ...] = (2, 4, 8, 16, 32, 63, 127)
    k_start: int = 8
    match_tokens: int = 3  # output tail that must match the draft to re-align
    search_back: int = 16  # how far behind the last aligned spot a re-join may be
    search_ahead: int = 256  # how far ahead (an edit may delete original text)
    cost_curve: tuple[tuple[int, float], ...] = PASS_COST
    # The acceptance estimate starts at prior_acceptance, worth prior_tokens draft tokens.
    prior_acceptance: float = 0.95  # rewrites copy most of their draft
    prior_tokens: int = 16
    # After the output re-joins the original, a first short pass confirms the re-join (a
    # 3-token match is often chance; as long as the ladder's resume, confirm_tokens at
    # least); once one is accepted whole, the next pass verifies the rest of the draft, up
    # to rest_tokens: a rewrite's edits cluster, so what follows a confirmed re-join is
    # copied to the end far more often than a geometric acceptance predicts. Once such a
    # pass is cut short by another edit, the edits are scattered and the request stays on
    # the ladder.
    confirm_tokens: int = 4
    rest_after_rejoin: bool = True
    rest_tokens: int = 63  # the longest rest pass (a 64-token pass: the fast kernels)
    # A rewrite stops once, after a change, it has copied this many whole lines of the
    # original: the rest of the window is taken from the original (as Sweep's early
    # cancellation does); edits cluster, and the passes that would verify the rest cost
    # as much as the edit's. 0: decode to the end.
    stop_after_rejoined_lines: int = 1
    # Where the output has left the original, the draft comes from the prompt and the
    # output themselves (lookup.py): the tokens after the latest earlier occurrence of the
    # output's last lookup_match_tokens, at most lookup_tokens of them. A chance match
    # costs a pass of lookup_tokens + 1 instead of a step, so the match is longer than a
    # re-join's. 0: off.
    lookup_match_tokens: int = 6
    lookup_tokens: int = 8
    # The first pass's draft tokens ride in the prefill's last pass (speculative.Head),
    # one pass fewer where the answer begins as the original does. True: wherever they
    # fit; False: only in rows that pass computes anyway (a pass padded to the attention
    # tile, pass_plan.py). Without flash attention a pass costs about what its rows do,
    # and the rows cost less than the pass they save (docs/MEASUREMENTS.md, 2026-12-08).
    verify_in_prefill: bool = True

    @property
    def k_min(self) -> int:
        return self.ladder[0]

    @property
    def k_max(self) -> int:
        return self.ladder[-1]

    def longer(self, k: int) -> int:
        return next((rung for rung in self.ladder if rung > k), self.k_max)

    def at_most(self, k: int) -> int:
        return max((rung for rung in self.ladder if rung <= k), default=self.k_min)

    def worth_longer(self, k: int, acceptance: float) -> int:
        """The next rung when it costs fewer steps per token at this acceptance, else k."""
        longer = self.longer(k)
        cheaper = steps_per_token(longer, acceptance, self.cost_curve) <= steps_per_token(
            k, acceptance, self.cost_curve
        )
        return longer if cheaper else k


class DraftCursor:
    """`proposal()` is what to verify next; `advance()` is told what the model produced."""

    def __init__(self, draft: Sequence[int], policy: DraftPolicy | None = None) -> None:
        self.draft = list(draft)
        self.policy = policy or DraftPolicy()
        self.k = self.policy.k_start
        self.pos: int | None = 0  # None: inside an edited stretch, drafting paused
        self._last_aligned = 0
        # the aligned spot before a re-join not yet confirmed by a pass (None: none pending)
        self._anchor_before_rejoin: int | None = None
        self._k_before_edit = self.policy.k_min
        self._confirming = False  # re-joined; the next fully accepted pass confirms it
        # where the output last re-joined the draft after a change (None: no change yet,
        # or inside one)
        self.rejoined_at: int | None = None
        self._resting = False  # the pass in flight verifies the rest of the draft
        self._rest_ok = self.policy.rest_after_rejoin  # off once a rest pass was cut short
        self._proposed = self.policy.prior_tokens
        self._accepted = self.policy.prior_tokens * self.policy.prior_acceptance

    @property
    def acceptance(self) -> float:
        """The chance that the next draft token is accepted, from this request's runs so
        far (with the prior)."""
        return self._accepted / self._proposed

    def proposal(self) -> list[int]:
        if self.pos is None:
            return []
        return self.draft[self.pos : self.pos + self.k]

    def advance(
        self, proposed: int, accepted: int, model_token: int, output: Sequence[int]
    ) -> None:
        """`accepted` of `proposed` draft tokens were accepted, then the model chose
        `model_token` (already appended to `output`)."""
        if self.pos is not None:
            self.pos += accepted
            self._adapt(proposed, accepted)
            refuted = self._settle_rejoin(proposed, accepted)
            if self.pos < len(self.draft) and self.draft[self.pos] == model_token:
                self.pos += 1
                self._last_aligned = self.pos
                return
            self._last_aligned = self.pos if refuted is None else refuted
            self._k_before_edit = self.k
            self.pos = None  # divergence: the model is editing here
            self.rejoined_at = None
        anchor = self._last_aligned
        self.pos = self._realign(output)
        if self.pos is None:
            return
        self._anchor_before_rejoin = anchor
        self.rejoined_at = self.pos
        if self._rest_ok:  # a confirming pass, as long as the ladder's resume would be
            resume = max(self.policy.confirm_tokens, self._k_before_edit // 2)
            self.k = self.policy.at_most(resume)
            self._confirming = True
        else:  # resume at half the draft length that worked before the edit
            self.k = self.policy.at_most(max(self.policy.k_min, self._k_before_edit // 2))

    def _settle_rejoin(self, proposed: int, accepted: int) -> int | None:
        """After the first pass since a re-join: the anchor from before it when that pass
        refuted it (a 3-token match far from the anchor is often chance: it was not
        accepted whole nor for confirm_tokens), else None. A refuted re-join must not move
        the anchor, or the true one falls outside the search window for good."""
        if proposed == 0:  # a single step: no pass has judged the re-join yet
            return None
        anchor, self._anchor_before_rejoin = self._anchor_before_rejoin, None
        if anchor is None:
            return None
        confirmed = accepted == proposed or accepted >= self.policy.confirm_tokens
        return None if confirmed else anchor

    def _adapt(self, proposed: int, accepted: int) -> None:
        """Longer after a fully accepted pass while that lowers the expected cost per
        token (cost curve, acceptance so far); after a rejection, what was accepted."""
        if proposed == 0:
            return
        # a geometric run: each accepted token and the first rejected one were judged
        self._proposed += accepted + (1 if accepted < proposed else 0)
        self._accepted += accepted
        confirmed, self._confirming = self._confirming and accepted == proposed, False
        if self._resting and accepted < proposed:
            self._rest_ok = False  # edits are scattered here: the ladder from now on
        self._resting = confirmed
        if confirmed:
            self.k = self.policy.at_most(self.policy.rest_tokens)  # see rest_after_rejoin
        elif accepted == proposed:
            self.k = self.policy.worth_longer(self.k, self.acceptance)
        else:
            self.k = self.policy.at_most(accepted + 1)

    def _realign(self, output: Sequence[int]) -> int | None:
        """The draft index right after the nearest occurrence of the output's tail."""
        m = self.policy.match_tokens
        if len(output) < m:
            return None
        tail = list(output[-m:])
        anchor = self._last_aligned
        lo = max(m, anchor - self.policy.search_back)
        hi = min(len(self.draft), anchor + self.policy.search_ahead)
        candidates = sorted(range(lo, hi + 1), key=lambda end: (abs(end - anchor), end))
        for end in candidates:
            if self.draft[end - m : end] == tail:
                self._last_aligned = end
                return end
        return None


def whole_lines(line_ends: Sequence[bool], start: int, end: int) -> int:
    """How many whole lines the draft tokens [start, end) hold (`line_ends[i]`: token i
    ends a line): the first newline ends a line begun before `start` unless `start` is
    a line's beginning."""
    count = sum(line_ends[start:end])
    at_line_start = start == 0 or line_ends[start - 1]
    return count if at_line_start else max(count - 1, 0)
