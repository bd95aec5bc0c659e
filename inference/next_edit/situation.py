"""What a next-edit prompt is made from and what it makes: the plain data every prompt
format shares (the `shadowtab` format defined these first; it re-exports them)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class PastEdit:
    """A completed edit: the file's text just before and just after it."""

    path: str
    before: str
    after: str


@dataclass(frozen=True)
class EditInProgress:
    """The edit being typed: text[start:start + len(new_text)] of the current text was
    old_text before the user began it."""

    start: int
    old_text: str
    new_text: str


@dataclass(frozen=True)
class Snippet:
    """Code from the project put before the file's own text: a window of another file,
    or a far part of this one. `path` is as the prompt names it (relative to the root)."""

    path: str
    text: str


@dataclass(frozen=True)
class Situation:
    """What the predictor knows when it asks: the file now, the cursor, the edits, and
    the project's code chosen for it (`context`, least similar first)."""

    path: str
    text: str
    cursor: int  # str offset into text
    in_progress: EditInProgress | None = None
    past_edits: Sequence[PastEdit] = ()  # oldest first
    context: Sequence[Snippet] = ()


@dataclass(frozen=True)
class RenderedPrompt:
    """The model rewrites text[region_start:region_end] (whole lines, with their
    newlines); `draft` is that region as it is now: the speculative draft, and what
    the model should write when nothing needs to change."""

    prompt: str
    draft: str
    region_start: int
    region_end: int
