"""The `zeta` format, for Zed's Zeta-family models: `### Instruction:`, the excerpt
with `<|editable_region_start|>` / `<|user_cursor_is_here|>` /
`<|editable_region_end|>`, `### User Edits:` (`User edited "PATH":` + a fenced diff),
`### Response:`. The model writes the region and stops at its end marker.

Cache-aware order (Zeta itself puts the edits first): the excerpt shows the region
as it was before the edit in progress, with the cursor where that edit began, so it
stays fixed while the user types; the edits follow, the one in progress last.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..situation import PastEdit, RenderedPrompt, Situation
from . import shadowtab
from .base import (
    FinishReason,
    changed_lines,
    edit_lines,
    escape,
    has_marker,
    unescape,
    usable_edit,
    window,
)

NAME = "zeta"
START_OF_FILE = "<|start_of_file|>"
REGION_START = "<|editable_region_start|>"
REGION_END = "<|editable_region_end|>"
CURSOR = "<|user_cursor_is_here|>"
INSTRUCTION = (
    "### Instruction:\nYou are a code completion assistant and your task is to analyze "
    "user edits and then rewrite an excerpt that the user provides, suggesting the "
    "appropriate edits within the excerpt, taking into account the cursor location.\n\n"
)
REGION_LINES_ABOVE = 4
REGION_LINES_BELOW = 8
CONTEXT_LINES_ABOVE = 96
CONTEXT_LINES_BELOW = 8
MAX_EVENTS = 8


def _event(path: str, old: str, new: str) -> str:
    diff = difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), lineterm="", n=1
    )
    body = "".join(line if line.endswith("\n") else line + "\n" for line in list(diff)[2:])
    return f'User edited "{path}":\n```diff\n{body}```\n\n' if body else ""


def _events(edits: Sequence[PastEdit]) -> str:
    return "".join(_event(e.path, *changed_lines(e)) for e in list(edits)[-MAX_EVENTS:])


@dataclass(frozen=True)
class ZetaFormat:
    name: str = NAME
    stop: tuple[str, ...] = (REGION_END,)
    complete_on: frozenset[FinishReason] = field(default_factory=lambda: frozenset({"stop"}))

    def render(self, situation: Situation) -> RenderedPrompt | None:
        found = window(
            situation,
            REGION_LINES_ABOVE,
            REGION_LINES_BELOW,
            CONTEXT_LINES_ABOVE,
            CONTEXT_LINES_BELOW,
        )
        text = situation.text
        if found is None or shadowtab.ESCAPE in text:
            return None
        edit = usable_edit(situation)
        cursor = edit.start if edit is not None else min(max(situation.cursor, 0), len(text))
        cut = cursor - found.region_start
        before = found.region_before
        region = escape(before[:cut]) + CURSOR + escape(before[cut:])
        path = escape(situation.path)
        start = START_OF_FILE + "\n" if found.context_start == 0 else ""
        typing = _event(situation.path, *edit_lines(text, edit)) if edit is not None else ""
        prompt = "".join(
            (
                INSTRUCTION,
                f"### User Excerpt:\n\n```{path}\n{start}",
                escape(text[found.context_start : found.region_start]),
                f"{REGION_START}\n{region}{REGION_END}\n",
                escape(text[found.region_end : found.context_end]),
                "```\n\n### User Edits:\n\n",
                escape(_events(situation.past_edits) + typing),
                f"### Response:\n{REGION_START}\n",
            )
        )
        return RenderedPrompt(
            prompt, escape(found.region_now) + REGION_END, found.region_start, found.region_end
        )

    def continuation(self, situation: Situation) -> str | None:
        return None  # its prompt does not begin with the code: nothing to share

    def parse(self, answer: str, finish: FinishReason) -> str | None:
        if finish not in self.complete_on:
            return None
        if answer.count(CURSOR) > 1:
            return None
        answer = answer.replace(CURSOR, "")
        return None if has_marker(answer, ()) else unescape(answer)
