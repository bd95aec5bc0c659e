"""Predictors: what the language server asks for ghost text and next edits.

They take plain data (text, str offsets) and return candidates.Candidate, each one
edit (TextEdit) of its kind, so the server can check a candidate in the shadow workspace
before it shows it. Calls block; the server runs them in a worker thread and cancels
them with a threading.Event when a newer keystroke comes. `EnginePredictor` runs the
next-edit pipeline (pipeline.py) over its sources.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..engines.api import Engine
from .candidates import (
    MAX_CANDIDATES,
    Candidate,
    CandidateSource,
    Query,
    distinct,
    merged,
    rank,
)
from .edits import TextEdit
from .events import Edit, edit_context
from .feedback import FeedbackCounts, Outcome
from .ghost_text import repetition
from .ghost_text.completion_source import CompletionSource
from .ghost_text.ghost_gate import SHIPPED_GATE
from .pipeline import NextEditPipeline
from .propagation.propagation_source import PropagationSource
from .reversal import undoes_user
from .rewrite.model_source import ModelSource
from .settings import NextEditOptions
from .situation import Situation, Snippet
from .token_confidence import DEFAULT_TOKEN_THRESHOLD

__all__ = [
    "EnginePredictor",
    "FixedPredictor",
    "PredictionRequest",
    "Predictor",
    "engine_predictor",
]


@dataclass(frozen=True)
class PredictionRequest:
    path: str
    language_id: str
    text: str
    cursor: int  # str offset into text
    events: Sequence[Edit] = ()  # the user's recent edits, oldest first
    max_candidates: int = 1
    open_texts: Mapping[str, str] = field(default_factory=dict)  # other open files
    # When it was asked, on the events' clock (time.time()); None: unknown (no pause known)
    asked_at: float | None = None
    # The user asked (LSP triggerKind Invoked: a key, or cycling through the suggestions):
    # ghost text then also runs the model for a choice after a cheaper source's answer.
    invoked: bool = False
    # The project's code for the prompt (the language server chooses it from its index)
    context: Sequence[Snippet] = ()


class Predictor(Protocol):
    """Both return candidates best first, each one edit (Candidate.edit): `inline` ghost
    text (kind "inline", an insertion at the cursor), `next_edit` any kind."""

    def inline(
        self, request: PredictionRequest, cancel: threading.Event | None = None
    ) -> list[Candidate]: ...

    def next_edit(
        self, request: PredictionRequest, cancel: threading.Event | None = None
    ) -> list[Candidate]: ...

    def warm(self, request: PredictionRequest, cancel: threading.Event | None = None) -> None: ...

    def follow(self, request: PredictionRequest, cancel: threading.Event | None = None) -> None:
        """At a keystroke: keep ghost text's prompt in the cache as the cursor moves."""
        ...

    def feedback(self, outcome: Outcome, source: str, format_name: str = "") -> None:
        """What became of a suggestion it made: accepted or rejected by the user, dropped
        by the server's lint check."""
        ...

    def feedback_counts(self) -> dict[str, Any]:
        """The outcomes so far, per source and format (`daemon status`)."""
        ...


def query_of(request: PredictionRequest) -> Query:
    """The request as the pipeline's query: the events split into past edits and the
    edit in progress against the text now."""
    cursor = min(max(request.cursor, 0), len(request.text))
    context = edit_context(request.events, request.path, request.text, cursor, request.open_texts)
    situation = Situation(
        request.path, request.text, cursor, context.in_progress, context.past, request.context
    )
    return Query(
        situation, request.max_candidates, request.events, request.open_texts, request.asked_at
    )


class EnginePredictor:
    """The next-edit pipeline over `propagation` (when given) then the model, in the
    format `format_name` (None/"auto": the format of the adapter the engine loaded,
    else generic). Ghost text has its own fast path, its sources in order of preference:
    the shown ghost text the user is typing through; the open files' own continuation
    where the text before the cursor occurs elsewhere at length (repetition.py,
    `use_repetition`: right more often than the model on the dev split's line
    completions, 10 of 12 against 9 of 17); the plain continuation at the cursor, cut at
    the first token less likely than `token_threshold` (a next edit that changes text
    through such a token is dropped); the rewrite's ghost text when the rewrite for this
    state is already known (ghost text never runs or waits for a rewrite). The first
    source with an answer gives the first candidate; the others' distinct answers follow
    as choices to cycle through. `engine_getter` returns None while the model loads."""

    def __init__(
        self,
        engine_getter: Callable[[], Engine | None],
        format_name: str | None = None,
        min_confidence: float = 0.0,
        propagation: PropagationSource | None = None,
        token_threshold: float = DEFAULT_TOKEN_THRESHOLD,
        use_repetition: bool = True,
        ghost_gate: bool = True,
    ) -> None:
        self.model = ModelSource(engine_getter, format_name, token_threshold)
        self.propagation = propagation
        sources: list[CandidateSource] = (
            [self.model] if propagation is None else [propagation, self.model]
        )
        self.pipeline = NextEditPipeline(sources, min_confidence)
        self._completion = CompletionSource(
            engine_getter,
            lambda query: self.model.format.continuation(query.situation),
            token_threshold,
            SHIPPED_GATE if ghost_gate else None,
        )
        self._engine_getter = engine_getter
        self.use_repetition = use_repetition

    @property
    def ghost_gate_state(self) -> str:
        """Whether the learned gate cuts ghost text, and why not (`daemon status`)."""
        return self._completion.gate_state

    @property
    def propagation_gate_state(self) -> str | None:
        """Whether propagation's learned gate chooses its places (None: no propagation)."""
        return self.propagation.gate_state if self.propagation is not None else None

    def feedback(self, outcome: Outcome, source: str, format_name: str = "") -> None:
        self.pipeline.feedback.add(outcome, source, format_name)

    def feedback_counts(self) -> dict[str, Any]:
        return self.pipeline.feedback.to_dict()

    def inline(
        self, request: PredictionRequest, cancel: threading.Event | None = None
    ) -> list[Candidate]:
        query = query_of(request)
        found = self._ghost_texts(query, request.invoked, cancel)
        self.pipeline.shown(query, found)
        return found

    def _ghost_texts(
        self, query: Query, invoked: bool, cancel: threading.Event | None
    ) -> list[Candidate]:
        """Each source's ghost text in order of preference, distinct, at most query.n:
        the first is the first source's answer, so choices never displace it. The model
        runs after a cheaper answer only when the user asked (`invoked`): typing keeps
        the speed of typed-through and repeated text."""
        n = max(1, min(query.n, MAX_CANDIDATES))
        found: list[Candidate] = []
        sources: list[tuple[bool, Callable[[], list[Candidate]]]] = [
            (False, lambda: self.pipeline.typed_through(query)),
            (False, lambda: self._repetition(query) if self.use_repetition else []),
            (True, lambda: self._continuations(query, cancel)),
            (False, lambda: [c for c in self.pipeline.remembered(query) if c.kind == "inline"]),
        ]
        for runs_model, source in sources:
            if len(found) >= n:
                break
            if not (runs_model and found and not invoked):
                found = distinct([*found, *source()])
        return found[:n]

    def _continuations(self, query: Query, cancel: threading.Event | None) -> list[Candidate]:
        found = [
            c
            for c in self._completion.candidates(query, cancel)
            if not undoes_user(c.edits, query.situation)
        ]
        return rank(found, query.situation.text, query.n, self.pipeline.min_confidence)

    def _repetition(self, query: Query) -> list[Candidate]:
        """The open files' own continuation of the text before the cursor."""
        found = repetition.candidate(query)
        if found is None or undoes_user(found.edits, query.situation):
            return []
        return [found]

    def next_edit(
        self, request: PredictionRequest, cancel: threading.Event | None = None
    ) -> list[Candidate]:
        query = query_of(request)
        found = self.pipeline.predict(query, cancel)
        self.pipeline.shown(query, found)
        return [merged(c, request.text) for c in found]

    def follow(self, request: PredictionRequest, cancel: threading.Event | None = None) -> None:
        """Prefill the plain continuation's prompt (run at every keystroke): it ends at
        the cursor, so typing appends a few tokens to it and ghost text asked after a
        pause costs only its decoding."""
        engine = self._engine_getter()
        if engine is not None:
            self._warm_continuation(engine, query_of(request), cancel)

    def warm(self, request: PredictionRequest, cancel: threading.Event | None = None) -> None:
        """Prefill the prompts the next requests will send (run when typing pauses):
        the plain continuation's first (ghost text, asked first), then the next-edit
        prompt. Each stops early when a real request waits."""
        engine = self._engine_getter()
        if engine is None:
            return
        query = query_of(request)
        if not self._warm_continuation(engine, query, cancel):
            return
        rendered = self.model.prompt(query)
        if rendered is not None:
            engine.warm(rendered.prompt, cancel=cancel)

    def _warm_continuation(
        self, engine: Engine, query: Query, cancel: threading.Event | None
    ) -> bool:
        """True when it ran to the end (not preempted nor cancelled)."""
        stats = engine.warm(self._completion.prompt(query), cancel=cancel)
        return not stats.preempted and not (cancel is not None and cancel.is_set())


def engine_predictor(
    engine_getter: Callable[[], Engine | None], options: NextEditOptions | None = None
) -> EnginePredictor:
    """The predictor the product runs, built one way for the daemon, `shadowtab predict`
    and the benchmarks: propagation (no model) then the model's rewrite, ghost text's
    sources, each setting of the `[next_edit]` section (None: the table's defaults)."""
    options = options or NextEditOptions()
    return EnginePredictor(
        engine_getter,
        options.format,
        min_confidence=options.min_confidence,
        propagation=PropagationSource(),
        token_threshold=options.token_threshold,
        ghost_gate=options.gate,
    )


@dataclass
class FixedPredictor:
    """Returns the candidates it was given: a stand-in for the model in tests of the
    server layer and in the server-overhead benchmark, never in the product.

    `delay_s` makes a call take that long (checking `cancel`), to test cancellation.
    """

    inline_texts: Sequence[str] = ()  # inserted at the request's cursor
    edits: Sequence[Candidate] = ()  # each of one edit
    delay_s: float = 0.0
    calls: list[str] = field(default_factory=list)
    counts: FeedbackCounts = field(default_factory=FeedbackCounts)

    def _wait(self, cancel: threading.Event | None) -> bool:
        """Sleep `delay_s`; False when cancelled meanwhile."""
        deadline = time.monotonic() + self.delay_s
        while time.monotonic() < deadline:
            if cancel is not None and cancel.wait(0.01):
                return False
        return not (cancel is not None and cancel.is_set())

    def inline(
        self, request: PredictionRequest, cancel: threading.Event | None = None
    ) -> list[Candidate]:
        self.calls.append("inline")
        if not self._wait(cancel):
            return []
        at = request.cursor
        return [
            Candidate((TextEdit(at, at, t),), 1.0, "", kind="inline")
            for t in self.inline_texts[: request.max_candidates]
        ]

    def next_edit(
        self, request: PredictionRequest, cancel: threading.Event | None = None
    ) -> list[Candidate]:
        self.calls.append("next_edit")
        if not self._wait(cancel):
            return []
        size = len(request.text)
        return [c for c in self.edits if all(0 <= e.start <= e.end <= size for e in c.edits)]

    def warm(self, request: PredictionRequest, cancel: threading.Event | None = None) -> None:
        self.calls.append("warm")

    def follow(self, request: PredictionRequest, cancel: threading.Event | None = None) -> None:
        self.calls.append("follow")

    def feedback(self, outcome: Outcome, source: str, format_name: str = "") -> None:
        self.counts.add(outcome, source, format_name)

    def feedback_counts(self) -> dict[str, Any]:
        return self.counts.to_dict()
