"""Candidates and where they come from: each source (repeat-edit propagation, the model,
...) returns ranked candidates with a confidence and its name; the pipeline ranks them
and gives each its kind, and the predictor hands the same Candidate to the language
server, its edits merged into one. Plain data, no engine."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, Protocol

from .edits import TextEdit, apply_all
from .events import Edit
from .situation import Situation
from .text_spans import line_end_after, line_start_before

# ghost text at the cursor | a change in the window around it | a change elsewhere
Kind = Literal["inline", "edit", "jump"]
WINDOW_LINES = 10  # a source without a region of its own: the cursor line +- this

# The most candidates one query gets (query.n is clamped to 1..MAX_CANDIDATES): the
# pipeline, its model sources and the language server's `n` parameter all use this one.
MAX_CANDIDATES = 6


@dataclass(frozen=True)
class Query:
    """What every source gets: the situation, how many candidates are wanted, the
    coalesced edit events (newest last) and the texts of the other open files."""

    situation: Situation
    n: int = 3
    events: Sequence[Edit] = ()
    open_texts: Mapping[str, str] = field(default_factory=dict)
    asked_at: float | None = None  # on the events' clock; None: unknown


@dataclass(frozen=True)
class Candidate:
    """One suggestion, from the source that proposed it to the editor: edits of the
    document `path` (the query's file when empty), with the source's confidence in
    [0, 1]. `kind`: how the editor shows it, set where it is known (the pipeline's
    kind_of; a ghost-text source's own). `region`: the span the source rewrote (the
    model's window), which tells an edit there from a jump elsewhere. A model candidate
    carries the probability of each token that wrote its change (`token_probs`, and each
    one's top-1/top-2 margin when known); None: the engine reported no probabilities."""

    edits: tuple[TextEdit, ...]
    confidence: float
    source: str
    format: str = ""
    path: str = ""
    kind: Kind = "edit"
    region: tuple[int, int] | None = None
    token_probs: tuple[float, ...] | None = None
    token_margins: tuple[float, ...] | None = None

    @property
    def edit(self) -> TextEdit:
        """Its one edit. A candidate as the predictor hands it over has one (merged():
        an editor takes one replacement per suggestion); ValueError for several."""
        if len(self.edits) != 1:
            raise ValueError(f"a candidate of {len(self.edits)} edits: merged() makes it one")
        return self.edits[0]


class CandidateSource(Protocol):
    name: str

    def candidates(self, query: Query, cancel: threading.Event | None = None) -> list[Candidate]:
        """Ranked, best first; [] when it has nothing (never raises for bad input)."""
        ...


def kind_of(candidate: Candidate, situation: Situation) -> Kind:
    """Ghost text when it is one insertion at the cursor; an edit when it lies in the
    region the source rewrote (or near the cursor); else a jump."""
    edits = candidate.edits
    if candidate.path and candidate.path != situation.path:
        return "jump"
    if len(edits) == 1 and edits[0].start == edits[0].end == situation.cursor:
        return "inline"
    low, high = candidate.region or _near(situation)
    inside = all(low <= e.start and e.end <= high for e in edits)
    return "edit" if inside else "jump"


def classified(candidate: Candidate, situation: Situation) -> Candidate:
    """The candidate with its kind (kind_of) in this situation."""
    return replace(candidate, kind=kind_of(candidate, situation))


def _near(situation: Situation) -> tuple[int, int]:
    text, cursor = situation.text, min(max(situation.cursor, 0), len(situation.text))
    return line_start_before(text, cursor, WINDOW_LINES), line_end_after(text, cursor, WINDOW_LINES)


def rank(
    candidates: Sequence[Candidate], text: str, n: int, min_confidence: float
) -> list[Candidate]:
    """Best first (confidence; the earlier source wins a tie), distinct by the text they
    produce, at or above `min_confidence`, at most `n`."""
    order = sorted(enumerate(candidates), key=lambda pair: (-pair[1].confidence, pair[0]))
    seen: set[tuple[str, tuple[TextEdit, ...]]] = set()
    kept: list[Candidate] = []
    for _, candidate in order:
        if candidate.confidence < min_confidence or not candidate.edits:
            continue
        key = (
            (candidate.path, candidate.edits) if candidate.path else ("", _result(candidate, text))
        )
        if key in seen:
            continue
        seen.add(key)
        kept.append(candidate)
        if len(kept) >= n:
            break
    return kept


def distinct(candidates: Sequence[Candidate]) -> list[Candidate]:
    """The candidates in their order, each edit once (the first to propose it kept):
    two ghost-text sources that agree offer one choice, not two."""
    seen: set[tuple[str, tuple[TextEdit, ...]]] = set()
    kept = []
    for candidate in candidates:
        key = (candidate.path, candidate.edits)
        if key not in seen:
            seen.add(key)
            kept.append(candidate)
    return kept


def _result(candidate: Candidate, text: str) -> tuple[TextEdit, ...]:
    """A canonical form of what the candidate does to the text: the whole change as
    one replacement (two sources may split the same change differently)."""
    start = min(e.start for e in candidate.edits)
    end = max(e.end for e in candidate.edits)
    new = apply_all(text, candidate.edits)
    return (TextEdit(start, end, new[start : len(new) - (len(text) - end)]),)


def merged(candidate: Candidate, text: str) -> Candidate:
    """The candidate with its edits as one replacement (editors take one). `text` is
    the query's file; a candidate that names its file (`path`: propagation's, one edit
    each, maybe of another file) keeps its first edit."""
    edits = candidate.edits[:1] if candidate.path else _result(candidate, text)
    return replace(candidate, edits=edits)
