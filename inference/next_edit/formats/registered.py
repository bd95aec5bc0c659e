"""The `shadowtab` format (formats/shadowtab.py, frozen: the adapter is trained on
it) behind the Format interface: complete answers end on the model's EOS token."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..situation import RenderedPrompt, Situation
from . import shadowtab
from .base import MAX_REGION_CHARS, FinishReason


@dataclass(frozen=True)
class ShadowtabFormat:
    name: str = shadowtab.NAME
    stop: tuple[str, ...] = ()
    complete_on: frozenset[FinishReason] = field(default_factory=lambda: frozenset({"eos"}))

    def render(self, situation: Situation) -> RenderedPrompt | None:
        rendered = shadowtab.render(situation)
        if rendered is None or len(rendered.draft) > MAX_REGION_CHARS:
            return None  # a huge region (a minified line): no unbounded prompt
        return rendered

    def parse(self, answer: str, finish: FinishReason) -> str | None:
        if finish not in self.complete_on:
            return None
        return shadowtab.parse_answer(answer)

    def continuation(self, situation: Situation) -> str | None:
        return shadowtab.continuation_prompt(situation)
