"""The next-edit pipeline every caller shares (the language server, `shadowtab predict`,
the evaluation): type-through first, then each source in order (propagation before the
model), never-undo-the-user, kinds, ranking, abstention below `min_confidence`."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from .candidates import MAX_CANDIDATES, Candidate, CandidateSource, Query, classified, rank
from .feedback import FeedbackCounts
from .reversal import undoes_user
from .single_flight import SingleFlight
from .typethrough import PredictionMemory

DEFAULT_CANDIDATES = 3
TYPE_THROUGH = "type-through"
MODEL_SOURCES = ("model", "completion")  # the sources whose tokens have probabilities


@dataclass
class NextEditPipeline:
    sources: Sequence[CandidateSource]
    min_confidence: float = 0.0
    memory: PredictionMemory = field(default_factory=PredictionMemory)
    feedback: FeedbackCounts = field(default_factory=FeedbackCounts)
    flights: SingleFlight[list[Candidate]] = field(default_factory=SingleFlight)

    def predict(self, query: Query, cancel: threading.Event | None = None) -> list[Candidate]:
        """Ranked candidates, each of its kind, at most query.n (clamped to
        1..MAX_CANDIDATES)."""
        situation = query.situation
        n = max(1, min(query.n, MAX_CANDIDATES))
        path, text, cursor = situation.path, situation.text, situation.cursor
        kept = self.memory.type_through(path, text, cursor)
        if kept:
            for candidate in kept:
                self.feedback.add("typed_through", candidate.source, candidate.format)
            return kept[:n]
        found = self._found(query, n, cancel)
        ranked = rank(found, text, n, self.min_confidence)
        return [classified(c, situation) for c in ranked]

    def typed_through(self, query: Query) -> list[Candidate]:
        """The ghost text shown before that the user has typed part of, the rest kept."""
        s = query.situation
        kept = self.memory.type_through(s.path, s.text, s.cursor)
        for candidate in kept:
            self.feedback.add("typed_through", candidate.source, candidate.format)
        return kept[: max(1, min(query.n, MAX_CANDIDATES))]

    def remembered(self, query: Query) -> list[Candidate]:
        """The candidates of the sources already asked for this state (no source runs)."""
        s = query.situation
        found = self.memory.recall(s.path, s.text, s.cursor)
        if not found:
            return []
        ranked = rank(found, s.text, max(1, min(query.n, MAX_CANDIDATES)), self.min_confidence)
        return [classified(c, s) for c in ranked]

    def _found(self, query: Query, n: int, cancel: threading.Event | None) -> list[Candidate]:
        """The sources' candidates for this state: remembered, or computed once for
        concurrent callers (ghost text and next edit of one keystroke)."""
        s = query.situation

        def compute() -> list[Candidate]:
            found = self.memory.recall(s.path, s.text, s.cursor)
            if found is None:
                found = self._ask(query, cancel)
                if not (cancel is not None and cancel.is_set()):
                    self.memory.remember(s.path, s.text, s.cursor, found)
            return found

        key = (s.path, hash(s.text), s.cursor, n)
        return self.flights.run(key, compute, cancel) or []

    def _ask(self, query: Query, cancel: threading.Event | None) -> list[Candidate]:
        found: list[Candidate] = []
        for source in self.sources:
            if cancel is not None and cancel.is_set():
                break
            for candidate in source.candidates(query, cancel):
                if not candidate.path and undoes_user(candidate.edits, query.situation):
                    self.feedback.add("dropped_reversal", candidate.source, candidate.format)
                else:
                    found.append(candidate)
        return found

    def shown(self, query: Query, candidates: Sequence[Candidate]) -> None:
        """The editor got these: count them, remember the ghost text for type-through."""
        s = query.situation
        self.memory.show(s.path, s.text, s.cursor, list(candidates))
        for c in candidates:
            self.feedback.add("shown", c.source, c.format)
            if c.token_probs is None and c.source in MODEL_SOURCES:
                self.feedback.add("unscored", c.source, c.format)
