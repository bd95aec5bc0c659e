"""The `sweep` format, for Sweep's next-edit models (Qwen2.5-Coder tokens): recent
changes as `original:` / `updated:` blocks, the window before the edit in progress
as `original/PATH`, and `updated/PATH` for the model to write. A fixed window: 10
lines above the edit, 10 below (21 for a one-line edit), so the answer's length is
known.

Cache-aware order: Sweep also shows the window now as `current/PATH` after
`original/PATH`; here the edit in progress is shown instead as the last
`original:` / `updated:` block (the window now is the window before plus that block),
because a window now would put everything after the cursor behind the keystroke.
"""

from __future__ import annotations

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

NAME = "sweep"
FILE_SEP = "<|file_sep|>"
END_OF_TEXT = "<|endoftext|>"
WINDOW_LINES_ABOVE = 10
WINDOW_LINES_BELOW = 10
CONTEXT_LINES_ABOVE = 96
MAX_CHANGES = 6


def _block(path: str, old: str, new: str) -> str:
    return (
        f"{FILE_SEP}{path}.diff\noriginal:\n{escape(ensure_newline(old))}"
        f"updated:\n{escape(ensure_newline(new))}"
    )


def _changes(edits: Sequence[PastEdit]) -> str:
    return "".join(_block(escape(e.path), *changed_lines(e)) for e in list(edits)[-MAX_CHANGES:])


@dataclass(frozen=True)
class SweepFormat:
    name: str = NAME
    stop: tuple[str, ...] = (FILE_SEP, END_OF_TEXT)
    complete_on: frozenset[FinishReason] = field(default_factory=lambda: frozenset({"eos", "stop"}))

    def render(self, situation: Situation) -> RenderedPrompt | None:
        found = window(situation, WINDOW_LINES_ABOVE, WINDOW_LINES_BELOW, CONTEXT_LINES_ABOVE, 0)
        text = situation.text
        if found is None or shadowtab.ESCAPE in text:
            return None
        path = escape(situation.path)
        edit = usable_edit(situation)
        typing = _block(path, *edit_lines(text, edit)) if edit is not None else ""
        prompt = "".join(
            (
                f"{FILE_SEP}{path}\n",
                escape(text[found.context_start : found.region_start]),
                _changes(situation.past_edits),
                f"{FILE_SEP}original/{path}\n",
                escape(ensure_newline(found.region_before)),
                typing,
                f"{FILE_SEP}updated/{path}\n",
            )
        )
        draft = escape(ensure_newline(found.region_now)) + FILE_SEP
        return RenderedPrompt(prompt, draft, found.region_start, found.region_end)

    def continuation(self, situation: Situation) -> str | None:
        return None  # its prompt does not begin with the code: nothing to share

    def parse(self, answer: str, finish: FinishReason) -> str | None:
        if finish not in self.complete_on or has_marker(answer, ()):
            return None
        return unescape(answer)
