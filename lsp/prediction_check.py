"""Predictions checked against the code before anyone sees them: the predictor's
candidates, then the name check (name_check.py: ghost text cut before a name that does
not resolve; before lint, so lint judges what is shown), then the lint gate
(next_edit.filters.lint_gate decides; this module gives it the callables: each candidate
applied to a scratch copy of the text, never the document, and linted;
diagnostics_delta says what the edit introduced). The editors' sessions and `shadowtab
predict` both go through `checked_candidates`."""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

from shadowtab.inference.next_edit.candidates import Candidate
from shadowtab.inference.next_edit.edits import TextEdit
from shadowtab.inference.next_edit.filters import lint_gate
from shadowtab.inference.next_edit.predictor import PredictionRequest, Predictor
from shadowtab.lsp.name_check import NamesCheck
from shadowtab.shadow_workspace import (
    Diagnostic,
    LinterSpec,
    Position,
    Range,
    ShadowWorkspace,
    TextChange,
    diagnostics_delta,
    lint_text,
    position_in,
)

T = TypeVar("T")
ERROR = 1
LintText = Callable[[str], Awaitable[list[Diagnostic]]]
# The lint gate (filters.lint_gate with the caller's linters): a verdict per candidate.
Check = Callable[[str, Sequence[Candidate]], Awaitable[list[bool]]]
# Runs a blocking predictor call (given its cancel event) in a worker thread.
RunBlocking = Callable[[Callable[[threading.Event], T]], Awaitable[T]]


async def checked_candidates(
    predictor: Predictor,
    request: PredictionRequest,
    inline: bool,
    run: RunBlocking[list[Candidate]],
    check: Check | None = None,
    names: NamesCheck | None = None,
) -> list[Candidate]:
    """Ask the predictor (ghost text, or next edits) through `run`, then keep the
    candidates the name check and the lint gate pass (a cut one keeps its place and
    score), best first; the predictor hears of each one dropped."""

    def call(cancel: threading.Event) -> list[Candidate]:
        if inline:
            return predictor.inline(request, cancel)
        return predictor.next_edit(request, cancel)

    candidates = await run(call)
    if names is not None:
        candidates = await _names_checked(predictor, request.text, candidates, names)
    if check is None:
        return candidates
    verdicts = await check(request.text, candidates)
    for candidate, ok in zip(candidates, verdicts, strict=True):
        if not ok:
            predictor.feedback("dropped_lint", candidate.source, candidate.format)
    return [c for c, ok in zip(candidates, verdicts, strict=True) if ok]


async def _names_checked(
    predictor: Predictor, text: str, candidates: list[Candidate], names: NamesCheck
) -> list[Candidate]:
    kept = []
    for candidate, checked in zip(candidates, await names(text, candidates), strict=True):
        if checked is None:
            predictor.feedback("dropped_names", candidate.source, candidate.format)
        else:
            kept.append(checked)
    return kept


class LintCache:
    """Diagnostics of recently linted texts: the text before the candidates is the same
    for every request between two keystrokes (inline, then next edit, then a retry).
    The hub holds one for all sessions."""

    def __init__(self, size: int = 16) -> None:
        self._size = size
        self._entries: OrderedDict[tuple[str, str], list[Diagnostic]] = OrderedDict()

    async def lint(self, path: str, text: str, lint: LintText) -> list[Diagnostic]:
        key = (path, text)
        if (cached := self._entries.get(key)) is not None:
            self._entries.move_to_end(key)
            return cached
        diagnostics = await lint(text)
        self._entries[key] = diagnostics
        while len(self._entries) > self._size:
            self._entries.popitem(last=False)
        return diagnostics

    def forget(self, path: str, text: str) -> None:
        self._entries.pop((path, text), None)


def as_change(text: str, edit: TextEdit) -> TextChange:
    start, end = position_in(text, edit.start), position_in(text, edit.end)
    return TextChange(Range(Position(*start), Position(*end)), edit.new_text)


def adds_errors(
    text: str,
    before: Sequence[Diagnostic],
    after: Sequence[Diagnostic],
    edit: TextEdit,
) -> bool:
    introduced = diagnostics_delta(list(before), list(after), [as_change(text, edit)])
    return any(d.severity == ERROR for d in introduced)


def check_with(lint: LintText, lint_before: LintText | None = None) -> Check:
    """The pipeline's lint gate over `lint` (a text's diagnostics)."""

    async def check(text: str, candidates: Sequence[Candidate]) -> list[bool]:
        edits = [c.edit for c in candidates]
        return await lint_gate(text, edits, lint, adds_errors, lint_before)

    return check


def workspace_check(
    workspace: ShadowWorkspace, path: str, language_id: str, cache: LintCache
) -> Check:
    """Editors: lint with the workspace's linters; the unchanged text through `cache`."""
    lint: LintText = functools.partial(workspace.lint_text, path, language_id=language_id)
    return check_with(lint, lambda text: cache.lint(path, text, lint))


def linters_check(
    linters: Mapping[str, LinterSpec], path: Path, language_id: str, cwd: Path
) -> Check:
    """`shadowtab predict`: the same gate with the configured linters, no workspace."""

    async def lint(text: str) -> list[Diagnostic]:
        return (await lint_text(linters, path, text, language_id, cwd)).diagnostics

    return check_with(lint)
