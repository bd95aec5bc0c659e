"""Token healing: a prompt that ends inside a word (`self.na`, the user still typing)
ends on a token the model rarely saw there (`na`, where it learned `name`), so the next
token's probability is low and a suggestion cut at an unsure token is cut to nothing.
Healing backs the prompt up over its last token(s) and makes the first generated tokens
re-write the removed bytes: each must start with what is left of them (`name` after
`na`) or be a prefix of it (`n`, then the rule again for `a`). What the request returns
is only what follows the original prompt's end."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .runtime import Runtime

# At most this many prompt tokens are backed up. A typed fragment of a word splits into
# one or two tokens at its end (`ret` + `u` for `retu`, `E` + `q` for `assertEq`); going
# further would re-decode text that is whole tokens anyway, one constrained forward pass
# per token re-written, and move the request's prompt further back from the one warming
# prefilled (a prefix of it still, so the KV cache serves it).
MAX_HEALED_TOKENS = 2
# A disallowed token's logit is set this far below the best allowed one instead of -inf:
# its probability (e^-50 each, ~1e-17 for the whole vocabulary) does not change the
# renormalized ones, and a lone allowed token reports a finite gap to the runner-up
# (speculative.COPIED_GAP: "sure") rather than an infinite one.
DISALLOWED_GAP = 50.0


class Vocabulary:
    """Every token's bytes, indexed for healing's two questions: which tokens start with
    these bytes, and which are a prefix of them. Built once per runtime (49k pieces).
    Control tokens (and empty pieces) are left out: healing never writes them."""

    def __init__(self, runtime: Runtime) -> None:
        self.pieces: list[bytes] = []
        self.control: list[bool] = []
        for token in range(runtime.vocab_size()):
            self.pieces.append(runtime.piece(token))
            self.control.append(runtime.is_control(token) or runtime.is_end_of_generation(token))
        usable = [t for t, p in enumerate(self.pieces) if p and not self.control[t]]
        usable.sort(key=lambda t: self.pieces[t])
        self._order = np.asarray(usable, dtype=np.int64)  # token ids, by their bytes
        self._sorted = [self.pieces[t] for t in usable]
        self._by_piece: dict[bytes, list[int]] = {}
        for token in usable:
            self._by_piece.setdefault(self.pieces[token], []).append(token)

    def starting_with(self, prefix: bytes) -> npt.NDArray[np.int64]:
        """The usable tokens whose bytes start with `prefix` (itself included)."""
        lo = bisect_left(self._sorted, prefix)
        after = _successor(prefix)
        hi = bisect_left(self._sorted, after) if after is not None else len(self._sorted)
        return self._order[lo:hi]

    def prefixes_of(self, text: bytes) -> list[int]:
        """The usable tokens whose bytes are a non-empty proper prefix of `text`."""
        return [t for end in range(1, len(text)) for t in self._by_piece.get(text[:end], [])]

    def extended(self, fragment: bytes) -> bool:
        """Some token starts with `fragment` and goes on: a token boundary at its end is
        an artifact of where the text stops, which healing undoes."""
        return len(self.starting_with(fragment)) > len(self._by_piece.get(fragment, []))

    def healable(self, token: int) -> bool:
        """A token healing may back up over: text, not a control token, and no line end
        (the suggestion continues the line; the line before it is settled)."""
        if not 0 <= token < len(self.pieces) or self.control[token]:
            return False
        piece = self.pieces[token]
        return bool(piece) and b"\n" not in piece


def _successor(prefix: bytes) -> bytes | None:
    """The least byte string greater than every string starting with `prefix` (None:
    there is none, `prefix` is all 0xff)."""
    stripped = prefix.rstrip(b"\xff")
    if not stripped:
        return None
    return stripped[:-1] + bytes([stripped[-1] + 1])


def backed_up(tokens: Sequence[int], vocabulary: Vocabulary) -> int:
    """How many of the prompt's last tokens to remove (0: none): the longest tail of at
    most MAX_HEALED_TOKENS healable tokens whose bytes a longer token starts with; one
    token at least stays, to prefill (a BOS is a control token: it always stays)."""
    back = 0
    for depth in range(1, MAX_HEALED_TOKENS + 1):
        if len(tokens) - depth < 1 or not vocabulary.healable(tokens[-depth]):
            break
        fragment = b"".join(vocabulary.pieces[t] for t in tokens[-depth:])
        if vocabulary.extended(fragment):
            back = depth
    return back


@dataclass(frozen=True)
class HealedPrompt:
    """A prompt's tokens after healing backed them up, and the bytes it removed."""

    tokens: list[int]
    removed: bytes = b""
    backed_up: int = 0  # tokens removed
    vocabulary: Vocabulary | None = None

    def healing(self) -> Healing | None:
        """A fresh constraint for one candidate (None: nothing was removed)."""
        if self.vocabulary is None or not self.removed:
            return None
        return Healing(self.vocabulary, self.removed)


def heal(tokens: list[int], vocabulary: Vocabulary) -> HealedPrompt:
    back = backed_up(tokens, vocabulary)
    if back == 0:
        return HealedPrompt(tokens)
    removed = b"".join(vocabulary.pieces[t] for t in tokens[-back:])
    return HealedPrompt(tokens[:-back], removed, back, vocabulary)


@dataclass
class Healing:
    """One candidate's constraint: `pending` is what is left of the removed bytes to
    re-write. While anything is pending, the next token must start with it or be a
    prefix of it; the bytes that re-write it are not the candidate's text."""

    vocabulary: Vocabulary
    pending: bytes

    def constrain(self, row: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """`row` with every token that cannot re-write `pending` pushed DISALLOWED_GAP
        below the best one that can; `row` itself when nothing is pending. The softmax of
        the result is the model's probability renormalized over the allowed tokens,
        P(token | the text goes on with what was typed): a threshold cut on it means
        "sure, given what the user typed", not "sure the user would type this"."""
        if not self.pending:
            return row
        allowed = np.concatenate(
            [
                self.vocabulary.starting_with(self.pending),
                np.asarray(self.vocabulary.prefixes_of(self.pending), dtype=np.int64),
            ]
        )
        kept = row[allowed]
        constrained = np.full_like(row, float(kept.max()) - DISALLOWED_GAP)
        constrained[allowed] = kept
        return constrained

    def written(self, piece: bytes) -> bytes:
        """The part of a chosen token's bytes that is new text (after what it re-writes
        of `pending`)."""
        overlap = min(len(piece), len(self.pending))
        self.pending = self.pending[overlap:]
        return piece[overlap:]
