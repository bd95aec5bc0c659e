"""Repeat-edit propagation, no model: the user's last edit replaced one token sequence
with another (a rename, an argument added, a call swapped); offer the same replacement at
the other places of the open files where the old sequence occurs in the same kind of
context, nearest first, each with its location for "Tab to jump".

Pure: plain strings and offsets in, candidates out (each one edit of its file, `path`).
Work is bounded whatever the files hold: at most `max_examined` occurrences are looked
at (nearest first), and each costs a lex of one line.

    edit = CompletedEdit.from_texts("a.py", before, after)
    for candidate in propagate(edit, {"a.py": after, "b.py": other_text}):
        ...  # candidate.path, .edit (start, end, new_text), .confidence

A predictor plugs it in as a candidate source ahead of the model, from the last
completed history event:

    edit = CompletedEdit.from_event(path, text, event.offset, event.old_text, event.new_text)
    candidates = propagate(edit, open_texts, max_candidates=n)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from ..candidates import Candidate
from ..edits import TextEdit
from ..lexing import BlockState, Language, language_for
from .propagation_features import EditShape, features
from .propagation_gate import PropagationGate
from .replacement import Neighbours, Replacement, find_replacement, hit_context

__all__ = ["CompletedEdit", "propagate"]

SOURCE = "propagation"
MAX_CANDIDATES = 20
MAX_EXAMINED = 400  # occurrences looked at, over all files: bounds the work
# Confidence: the share of correct suggestions of each kind of edit, measured on the
# training split of the edit corpora (training/split.py; never the held-back
# one), rounded toward 0.5 where few were seen. For token sequences the neighbours count:
# the same tokens on both sides as at the edited place (index 2) are the strongest sign
# an occurrence means the same thing. Another file is a weaker sign.
CONFIDENCE_BY_INTENT = {"rename_definition": 0.85, "rename_use": 0.5, "swap": 0.45, "text": 0.5}
CONFIDENCE_BY_SAME_NEIGHBOURS = {  # 0, 1 or 2 neighbours as at the edit
    "insertion": (0.3, 0.4, 0.8),
    "replacement": (0.25, 0.35, 0.65),
    "deletion": (0.25, 0.3, 0.55),
}
OTHER_FILE_PENALTY = 0.1


@dataclass(frozen=True)
class CompletedEdit:
    """One finished edit of one file: its text before and after, and the changed
    stretch: before[start:old_end] became after[start:new_end]."""

    path: str
    before: str
    after: str
    start: int
    old_end: int
    new_end: int

    @classmethod
    def from_texts(cls, path: str, before: str, after: str) -> CompletedEdit | None:
        """The edit between two texts (their common prefix and suffix cut off); None
        when they are equal."""
        if before == after:
            return None
        limit = min(len(before), len(after))
        start = _common_prefix(before, after, limit)
        tail = _common_suffix(before, after, limit - start)
        return cls(path, before, after, start, len(before) - tail, len(after) - tail)

    @classmethod
    def from_event(
        cls, path: str, text_now: str, offset: int, old_text: str, new_text: str
    ) -> CompletedEdit | None:
        """The edit of one history event (text_now[offset:offset + len(new_text)] was
        old_text), as the shadow workspace records it; None when it changed nothing or
        does not fit the text."""
        end = offset + len(new_text)
        if old_text == new_text or text_now[offset:end] != new_text:
            return None
        before = text_now[:offset] + old_text + text_now[end:]
        return cls(path, before, text_now, offset, offset + len(old_text), end)

    def is_consistent(self) -> bool:
        return (
            0 <= self.start <= self.old_end <= len(self.before)
            and self.start <= self.new_end <= len(self.after)
            and len(self.before) - self.old_end == len(self.after) - self.new_end
        )


def propagate(
    edit: CompletedEdit | None,
    open_texts: Mapping[str, str],
    max_candidates: int = MAX_CANDIDATES,
    max_examined: int = MAX_EXAMINED,
    gate: PropagationGate | None = None,
) -> list[Candidate]:
    """The edit's replacement offered at its other occurrences: in the edited file
    nearest first, then in the other open files of the same language, top down. With a
    `gate`, each place's confidence is its probability, and places below its threshold
    are not offered."""
    return [p.candidate for p in places(edit, open_texts, max_candidates, max_examined, gate)]


@dataclass(frozen=True)
class Place:
    """One place offered, with what the gate knew of it (propagation_features.FEATURES)."""

    candidate: Candidate
    values: tuple[float, ...]


def places(
    edit: CompletedEdit | None,
    open_texts: Mapping[str, str],
    max_candidates: int = MAX_CANDIDATES,
    max_examined: int = MAX_EXAMINED,
    gate: PropagationGate | None = None,
) -> list[Place]:
    """propagate()'s places with their features (the gate's fitter reads them)."""
    if edit is None or not edit.is_consistent() or max_candidates <= 0:
        return []
    language = language_for(edit.path)
    blocks = BlockState(edit.after, language)  # one scan of the edited file, shared
    replacement = find_replacement(
        edit.before, edit.after, edit.start, edit.old_end, edit.new_end, language, blocks
    )
    if replacement is None:
        return []
    shape = EditShape.of(replacement, edit.before, edit.after)
    search = _Search(shape, language, max_candidates, max_examined, gate)
    search.in_edited_file(edit.path, edit.after, blocks)
    for path, text in open_texts.items():
        if path != edit.path and language_for(path) == language:
            search.in_other_file(path, text)
    return search.found


class _Search:
    def __init__(
        self,
        shape: EditShape,
        language: Language,
        max_found: int,
        max_examined: int,
        gate: PropagationGate | None,
    ) -> None:
        self.shape = shape
        self.replacement = shape.replacement
        self.language = language
        self.max_found = max_found
        self.budget = max_examined
        self.gate = gate
        self.found: list[Place] = []
        self.matched = 0  # places that matched, offered or not (the rank feature)

    def done(self) -> bool:
        return len(self.found) >= self.max_found or self.budget <= 0

    def in_edited_file(self, path: str, text: str, blocks: BlockState) -> None:
        site = self.replacement.site_start, self.replacement.site_start + len(self.replacement.new)
        hits = _nearest_first(text, self.replacement.old, site)
        self._scan(path, text, hits, site, False, blocks)

    def in_other_file(self, path: str, text: str) -> None:
        hits = _top_down(text, self.replacement.old)
        self._scan(path, text, hits, None, True, BlockState(text, self.language))

    def _scan(
        self,
        path: str,
        text: str,
        hits: Iterator[int],
        site: tuple[int, int] | None,
        other_file: bool,
        blocks: BlockState,
    ) -> None:
        taken: list[tuple[int, int]] = [site] if site is not None else []
        for hit in hits:
            if self.done():
                return
            self.budget -= 1
            span = hit, hit + len(self.replacement.old)
            if any(span[0] < end and start < span[1] for start, end in taken):
                continue
            place = self._place(path, text, hit, blocks, other_file)
            if place is None:
                continue
            taken.append(span)
            self.found.append(place)

    def _place(
        self, path: str, text: str, hit: int, blocks: BlockState, other_file: bool
    ) -> Place | None:
        """The replacement offered at `hit`; None: not the same thing, or the gate
        judges it unlikely."""
        replacement = self.replacement
        if replacement.already_applied_at(text, hit):
            return None
        context = hit_context(text, hit, replacement, self.language, blocks)
        if context is None:
            return None
        values = tuple(features(self.shape, text, hit, context, self.matched, other_file))
        self.matched += 1
        if self.gate is not None:
            confidence = self.gate.probability(values)
            if confidence < self.gate.threshold:
                return None
        else:
            confidence = _rule_confidence(replacement, context, other_file)
        start, end, new_text = replacement.minimal_at(hit)
        candidate = Candidate(
            (TextEdit(start, end, new_text),), round(confidence, 3), SOURCE, path=path
        )
        return Place(candidate, values)


def _rule_confidence(replacement: Replacement, context: Neighbours, other_file: bool) -> float:
    """The confidence without a gate: the share right of each kind of edit."""
    same = (context.before == replacement.context.before) + (
        context.after == replacement.context.after
    )
    if replacement.intent in CONFIDENCE_BY_INTENT:
        score = CONFIDENCE_BY_INTENT[replacement.intent]
    else:
        score = CONFIDENCE_BY_SAME_NEIGHBOURS[replacement.intent][same]
    return score - (OTHER_FILE_PENALTY if other_file else 0.0)


def _nearest_first(text: str, needle: str, site: tuple[int, int]) -> Iterator[int]:
    """Offsets of `needle` in `text`, by distance from `site`, both directions at once."""
    ahead = text.find(needle, site[1])
    behind = text.rfind(needle, 0, site[0] + len(needle) - 1) if site[0] > 0 else -1
    while ahead != -1 or behind != -1:
        if behind == -1 or (ahead != -1 and ahead - site[1] <= site[0] - behind):
            yield ahead
            ahead = text.find(needle, ahead + 1)
        else:
            yield behind
            behind = text.rfind(needle, 0, behind + len(needle) - 1) if behind > 0 else -1


def _top_down(text: str, needle: str) -> Iterator[int]:
    hit = text.find(needle)
    while hit != -1:
        yield hit
        hit = text.find(needle, hit + 1)


def _common_suffix(a: str, b: str, limit: int) -> int:
    """Length of the common suffix of a and b, at most `limit` (as _common_prefix)."""
    low, high = 0, limit
    while low < high:
        middle = (low + high + 1) // 2
        if a[len(a) - middle : len(a) - low] == b[len(b) - middle : len(b) - low]:
            low = middle
        else:
            high = middle - 1
    return low


def _common_prefix(a: str, b: str, limit: int) -> int:
    """Length of the common prefix of a and b, at most `limit` (by halving: C-speed
    slice comparisons rather than a Python loop over characters)."""
    low, high = 0, limit
    while low < high:
        middle = (low + high + 1) // 2
        if a[low:middle] == b[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low
