"""The draft for speculative edits: a pointer into the original text's tokens that follows
the output, pauses inside edited stretches and re-aligns when the output re-joins the
original; the draft length adapts to the acceptance seen so far."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class DraftPolicy:
    # Draft lengths to choose from. Measured here (llama.cpp CPU, Q8_0): passes of 64+
    # tokens take faster matrix kernels (64 tokens ~9 decode steps, like 33 tokens; 63 ~18),
    # but their different arithmetic flips many more near-ties against single-token
    # decoding (gaps up to 0.19 seen), so drafts stay below 64 tokens per pass.
    ladder: tuple[int, ...] = (2, 4, 8, 16, 32)
    k_start: int = 8
    match_tokens: int = 3  # output tail that must match the draft to re-align
    search_back: int = 16  # how far behind the last aligned spot a re-join may be
    search_ahead: int = 256  # how far ahead (an edit may delete original text)

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


class DraftCursor:
    """`proposal()` is what to verify next; `advance()` is told what the model produced."""

    def __init__(self, draft: Sequence[int], policy: DraftPolicy | None = None) -> None:
        self.draft = list(draft)
        self.policy = policy or DraftPolicy()
        self.k = self.policy.k_start
        self.pos: int | None = 0  # None: inside an edited stretch, drafting paused
        self._last_aligned = 0
        self._k_before_edit = self.policy.k_min

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
            if self.pos < len(self.draft) and self.draft[self.pos] == model_token:
                self.pos += 1
                self._last_aligned = self.pos
                return
            self._last_aligned = self.pos
            self._k_before_edit = self.k
            self.pos = None  # divergence: the model is editing here
        self.pos = self._realign(output)
        if self.pos is not None:
            # re-joined after an edit: resume at half the draft length that worked before
            self.k = self.policy.at_most(max(self.policy.k_min, self._k_before_edit // 2))

    def _adapt(self, proposed: int, accepted: int) -> None:
        if proposed == 0:
            return
        if accepted == proposed:
            self.k = self.policy.longer(self.k)
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
