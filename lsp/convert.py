"""Conversions between lsprotocol types and the shadow workspace's plain data."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from lsprotocol import types
from shadowtab.shadow_workspace import Diagnostic, Position, Range, TextChange


def to_shadow_position(position: types.Position) -> Position:
    return Position(position.line, position.character)


def to_shadow_range(rng: types.Range) -> Range:
    return Range(to_shadow_position(rng.start), to_shadow_position(rng.end))


def to_lsp_position(position: Position) -> types.Position:
    return types.Position(line=position.line, character=position.character)


def to_lsp_range(rng: Range) -> types.Range:
    return types.Range(start=to_lsp_position(rng.start), end=to_lsp_position(rng.end))


def to_text_change(change: types.TextDocumentContentChangeEvent) -> TextChange:
    if isinstance(change, types.TextDocumentContentChangePartial):
        return TextChange(to_shadow_range(change.range), change.text)
    return TextChange(None, change.text)


def to_lsp_diagnostic(diagnostic: Diagnostic) -> types.Diagnostic:
    severity = diagnostic.severity if 1 <= diagnostic.severity <= 4 else 1
    return types.Diagnostic(
        range=to_lsp_range(diagnostic.range),
        message=diagnostic.message,
        severity=types.DiagnosticSeverity(severity),
        source=diagnostic.source or "shadowtab",
        code=diagnostic.code,
    )


def edits_to_changes(edits: Sequence[types.TextEdit]) -> list[TextChange]:
    """LSP TextEdits all refer to the original text; applied one by one, last first, each
    change leaves the positions of the ones still to apply intact."""
    ordered = sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character))
    for before, after in itertools.pairwise(ordered):
        if (after.range.start.line, after.range.start.character) < (
            before.range.end.line,
            before.range.end.character,
        ):
            raise ValueError("overlapping text edits")
    return [TextChange(to_shadow_range(e.range), e.new_text) for e in reversed(ordered)]
