"""The `generic` format: plain Markdown-like sections for an instruct or base model
without a next-edit adapter (the packaged SmolLM2 default).

    # File: PATH                          stable
    CONTEXT ABOVE THE REGION
    ### Recent edits                      changes when an edit completes
    ### Code        (the region before the edit in progress, fenced)
    ### Below       (context below the region, fenced)
    ### Edit in progress                  only its tail changes while typing
    ### Updated code                      -> the model writes the region, then the fence

The fence is longer than any run of backticks in the user's text (as Markdown does),
so user text cannot close it; control strings in user text are escaped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..situation import PastEdit, RenderedPrompt, Situation
from . import shadowtab
from .base import (
    FinishReason,
    changed_lines,
    edit_lines,
    ensure_newline,
    escape,
    has_marker,
    unescape,
    usable_edit,
    window,
)

NAME = "generic"
REGION_LINES_ABOVE = 3
REGION_LINES_BELOW = 5
CONTEXT_LINES_ABOVE = 64
CONTEXT_LINES_BELOW = 6
MAX_PAST_EDITS = 6
_BACKTICKS = re.compile(r"`+")


def fence_for(texts: Sequence[str]) -> str:
    longest = max((len(m.group()) for t in texts for m in _BACKTICKS.finditer(t)), default=0)
    return "`" * max(3, longest + 1)


def _diff_lines(old: str, new: str) -> str:
    minus = "".join(f"-{line}\n" for line in old.splitlines())
    plus = "".join(f"+{line}\n" for line in new.splitlines())
    return minus + plus


def _past(edits: Sequence[PastEdit]) -> str:
    blocks = []
    for edit in list(edits)[-MAX_PAST_EDITS:]:
        old, new = changed_lines(edit)
        blocks.append(f"In {edit.path}:\n{_diff_lines(old, new)}")
    return "".join(blocks) if blocks else "(none)\n"


@dataclass(frozen=True)
class GenericFormat:
    name: str = NAME
    stop: tuple[str, ...] = ()  # the fence, per prompt: see stop_for
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
        above = text[found.context_start : found.region_start]
        below = text[found.region_end : found.context_end]
        edit = usable_edit(situation)
        old, new = edit_lines(text, edit) if edit is not None else ("", "")
        fence = fence_for((above, found.region_before, found.region_now, below, old, new))
        prompt = "".join(
            (
                f"# File: {escape(situation.path)}\n",
                escape(above, shadowtab.CONTROL_STRINGS),
                "### Recent edits\n",
                escape(_past(situation.past_edits), shadowtab.CONTROL_STRINGS),
                f"### Code\n{fence}\n",
                escape(ensure_newline(found.region_before), shadowtab.CONTROL_STRINGS),
                f"{fence}\n### Below\n{fence}\n",
                escape(ensure_newline(below), shadowtab.CONTROL_STRINGS),
                f"{fence}\n### Edit in progress\n{fence}diff\n",
                escape(_diff_lines(old, new), shadowtab.CONTROL_STRINGS),
                f"{fence}\n### Updated code\n{fence}\n",
            )
        )
        draft = escape(ensure_newline(found.region_now), shadowtab.CONTROL_STRINGS) + fence
        return RenderedPrompt(prompt, draft, found.region_start, found.region_end)

    def stop_for(self, rendered: RenderedPrompt) -> tuple[str, ...]:
        """The fence this prompt uses (the run of backticks the draft ends with)."""
        return (rendered.draft[len(rendered.draft.rstrip("`")) :],)

    def continuation(self, situation: Situation) -> str | None:
        return None  # its prompt does not begin with the code: nothing to share

    def parse(self, answer: str, finish: FinishReason) -> str | None:
        if finish not in self.complete_on or has_marker(answer, shadowtab.CONTROL_STRINGS):
            return None
        return unescape(answer)
