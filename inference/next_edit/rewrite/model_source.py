"""The model as a candidate source: render the situation in the configured format,
rewrite the region (the region as the speculative draft; n candidates), parse each
answer fail-closed, diff it into minimal edits, score it by the changed tokens."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace

from ...engines.api import Completion, Engine
from ..candidates import MAX_CANDIDATES, Candidate, Query
from ..confidence import changed_spans, changed_tokens, confidence
from ..edits import TextEdit, minimal_edits
from ..filters import is_noise
from ..formats import AUTO, Format, choose_format, get_format, stop_strings
from ..formats.base import FinishReason
from ..situation import RenderedPrompt
from ..token_confidence import TokenTrace, candidates_to_ask, trace_of, unsure_change
from .given_lines import with_lines_given

NAME = "model"
EXTRA_TOKENS = 48  # room for the rewrite to grow beyond the draft
MAX_TOKENS = 512  # the decode stays bounded whatever the region
_REASONS: dict[str, FinishReason] = {
    "eos": "eos",
    # the rewrite re-joined the original and took the rest of the window from it: the
    # answer is complete, as if the model had copied it and written its end token
    "rejoined": "eos",
    "stop": "stop",
    "length": "length",
    "cancelled": "cancelled",
}


class ModelSource:
    """`engine_getter` returns None while the model loads: then no candidates.
    `token_threshold`: a candidate that changes text through a token less likely than it
    is dropped (0: none is)."""

    name = NAME

    def __init__(
        self,
        engine_getter: Callable[[], Engine | None],
        format_name: str | None = None,
        token_threshold: float = 0.0,
    ) -> None:
        self._engine_getter = engine_getter
        self.token_threshold = token_threshold
        self.format_name = format_name  # None / "auto": the loaded adapter's format
        self._chosen: tuple[Engine | None, Format] | None = None

    @property
    def format(self) -> Format:
        """The configured format, or (auto) the format of the adapter the engine loaded
        (its GGUF names the format it was trained on), else generic."""
        if self.format_name and self.format_name != AUTO:
            return get_format(self.format_name)
        engine = self._engine_getter()
        if self._chosen is None or self._chosen[0] is not engine:
            self._chosen = (engine, choose_format(self.format_name, adapter_format(engine)))
        return self._chosen[1]

    def prompt(self, query: Query) -> RenderedPrompt | None:
        """What the model is sent: the format's prompt, with the region's lines above an
        edit in progress given (given_lines.py)."""
        rendered = self.format.render(query.situation)
        return None if rendered is None else with_lines_given(rendered, query.situation)

    def candidates(self, query: Query, cancel: threading.Event | None = None) -> list[Candidate]:
        engine = self._engine_getter()
        fmt = self.format
        window = fmt.render(query.situation)
        if engine is None or window is None:
            return []
        rendered = with_lines_given(window, query.situation)
        stop = stop_strings(fmt, rendered)
        draft_tokens = len(engine.tokenize(rendered.draft, special=True))
        completion = engine.rewrite(
            rendered.prompt,
            rendered.draft,
            min(MAX_TOKENS, draft_tokens + EXTRA_TOKENS),
            stop=list(stop),
            cancel=cancel,
            n=candidates_to_ask(query.n, self.token_threshold, MAX_CANDIDATES),
            min_token_p=self.token_threshold,
        )
        body = rendered.draft
        for marker in stop:
            body = body.removesuffix(marker)
        found = (
            self._candidate(fmt, query, rendered, body, completion, i)
            for i in range(len(completion.texts))
        )
        # the window, not the part rewritten, tells an edit from a jump (candidates.kind_of)
        return [
            replace(c, region=(window.region_start, window.region_end))
            for c in found
            if c is not None
        ]

    def _candidate(
        self,
        fmt: Format,
        query: Query,
        rendered: RenderedPrompt,
        body: str,
        completion: Completion,
        index: int,
    ) -> Candidate | None:
        answer = completion.texts[index]
        reasons = completion.finish_reasons
        finish = _REASONS.get(reasons[index], "unknown") if index < len(reasons) else "unknown"
        parsed = fmt.parse(answer, finish)
        text = query.situation.text
        region = text[rendered.region_start : rendered.region_end]
        if parsed is None:
            return None
        if not region.endswith("\n"):  # the region ends the file without a newline
            parsed = parsed.removesuffix("\n")
        edits = minimal_edits(region, parsed, rendered.region_start)
        if not edits or is_noise(region, parsed) or _deletes_while_typing(edits, query):
            return None
        logprobs = completion.logprobs[index] if index < len(completion.logprobs) else []
        offsets = completion.text_offsets[index] if index < len(completion.text_offsets) else []
        trace = trace_of(completion, index)
        probs, margins = _changed_probabilities(body, answer, trace)
        if trace is not None and unsure_change(body, answer, trace, self.token_threshold):
            return None
        return Candidate(
            edits,
            confidence(body, answer, logprobs, offsets),
            NAME,
            fmt.name,
            region=(rendered.region_start, rendered.region_end),
            token_probs=probs,
            token_margins=margins,
        )


def _changed_probabilities(
    body: str, answer: str, trace: TokenTrace | None
) -> tuple[tuple[float, ...] | None, tuple[float, ...] | None]:
    """The probabilities (and margins) of the tokens that wrote the change."""
    if trace is None:
        return None, None
    return trace.picked(changed_tokens(changed_spans(body, answer), trace.offsets))


def _deletes_while_typing(edits: tuple[TextEdit, ...], query: Query) -> bool:
    """While the user types an edit, a rewrite whose only change is deleting text is
    dropped: the user is adding text, and a small model's rewrite that loses what follows
    the cursor (the rest of a line, the next line's first word) is a frequent wrong
    answer there (the evaluation that made the rule: docs/MEASUREMENTS.md)."""
    typing = query.situation.in_progress is not None
    return typing and all(not edit.new_text for edit in edits)


def adapter_format(engine: Engine | None) -> str | None:
    """The prompt format the engine's loaded adapter was trained on, if it says."""
    if engine is None:
        return None
    try:
        name = engine.stats().get("adapter_format")
    except Exception:  # an engine that cannot describe itself has no adapter format
        return None
    return name if isinstance(name, str) else None
