"""Checks predictions in the shadow workspace before an editor sees them: each candidate
is applied to a scratch copy of the text and linted; candidates that add errors are
dropped (diagnostics_delta: what the edit introduced)."""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from shadowtab.lsp.edits_push import utf16_position
from shadowtab.shadow_workspace import (
    Diagnostic,
    Position,
    Range,
    ShadowWorkspace,
    TextChange,
    diagnostics_delta,
)

logger = logging.getLogger(__name__)

ERROR = 1


@dataclass(frozen=True)
class TextCandidate:
    """A candidate as a replacement of text[start:end]."""

    start: int
    end: int
    new_text: str

    def apply(self, text: str) -> str:
        return text[: self.start] + self.new_text + text[self.end :]

    def as_change(self, text: str) -> TextChange:
        start, end = utf16_position(text, self.start), utf16_position(text, self.end)
        rng = Range(Position(start.line, start.character), Position(end.line, end.character))
        return TextChange(rng, self.new_text)


class LintCache:
    """Diagnostics of recently linted texts: the text before the candidates is the same
    for every request between two keystrokes (inline, then next edit, then a retry)."""

    def __init__(self, size: int = 16) -> None:
        self._size = size
        self._entries: OrderedDict[tuple[str, str], list[Diagnostic]] = OrderedDict()

    async def lint(
        self, workspace: ShadowWorkspace, path: str, text: str, language_id: str
    ) -> list[Diagnostic]:
        key = (path, text)
        if (cached := self._entries.get(key)) is not None:
            self._entries.move_to_end(key)
            return cached
        diagnostics = await workspace.lint_text(path, text, language_id)
        self._entries[key] = diagnostics
        while len(self._entries) > self._size:
            self._entries.popitem(last=False)
        return diagnostics


_before_cache = LintCache()


async def keep_clean(
    workspace: ShadowWorkspace,
    path: str,
    text: str,
    language_id: str,
    candidates: Sequence[TextCandidate],
) -> list[bool]:
    """For each candidate: True when applying it adds no error diagnostic."""
    if not candidates:
        return []
    try:
        lints = await asyncio.gather(
            _before_cache.lint(workspace, path, text, language_id),
            *(workspace.lint_text(path, c.apply(text), language_id) for c in candidates),
        )
    except Exception as exc:  # a broken linter must not hide every suggestion
        logger.warning("lint of predictions for %s failed: %s", path, exc)
        return [True] * len(candidates)
    before = lints[0]
    return [
        not _adds_errors(before, after, c.as_change(text))
        for c, after in zip(candidates, lints[1:], strict=True)
    ]


def _adds_errors(before: list[Diagnostic], after: list[Diagnostic], change: TextChange) -> bool:
    introduced = diagnostics_delta(before, after, [change])
    return any(d.severity == ERROR for d in introduced)
