"""Which diagnostics an edit introduced: the diagnostics before the edit are carried
over to the text after it (lines below the edit shift by the lines it added or
removed); whatever the linters report after it that was not there before is new."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from .line_text import LineText
from .model import Diagnostic, TextChange

Identity = tuple[str, str | None, str, int]
Shift = tuple[int, int, int]  # (last edited line before the edit, line delta, first edited line)


def _line_shift(change: TextChange) -> Shift | None:
    """(old end line, line delta, start line) of a ranged change; None for full text."""
    if change.range is None:
        return None
    removed = change.range.end.line - change.range.start.line
    added = LineText(change.text).line_count - 1
    return change.range.end.line, added - removed, change.range.start.line


def _map_line(line: int, shifts: Sequence[Shift]) -> int | None:
    """The line after all changes, or None when an edit touched it."""
    for old_end, delta, start in shifts:
        if line > old_end:
            line += delta
        elif line >= start:
            return None
    return line


def _identity(diag: Diagnostic, line: int | None) -> Identity:
    return (diag.source, diag.code, diag.message, -1 if line is None else line)


def diagnostics_delta(
    before: Sequence[Diagnostic],
    after: Sequence[Diagnostic],
    changes: Sequence[TextChange] = (),
) -> list[Diagnostic]:
    """Diagnostics in `after` that the `changes` (applied in order to the text `before`
    was computed on) introduced. A diagnostic counts as old when one with the same source,
    code and message sat on the same line (after shifting), or anywhere inside the edited
    lines for one inside them. A full-text change compares by message only."""
    shifts = [_line_shift(change) for change in changes]
    if any(shift is None for shift in shifts):
        old = Counter(_identity(d, None) for d in before)
        return _unmatched(after, old, lambda d: None)
    real_shifts = [s for s in shifts if s is not None]
    old = Counter(_identity(d, _map_line(d.range.start.line, real_shifts)) for d in before)
    edited = _edited_lines(real_shifts)
    return _unmatched(
        after, old, lambda d: None if d.range.start.line in edited else d.range.start.line
    )


def _edited_lines(shifts: Sequence[Shift]) -> set[int]:
    """Lines of the after-text that the changes wrote (start line .. new end line)."""
    lines: set[int] = set()
    for old_end, delta, start in shifts:
        lines = {line + delta if line > old_end else line for line in lines}
        lines.update(range(start, old_end + delta + 1))
    return lines


def _unmatched(
    after: Sequence[Diagnostic], old: Counter[Identity], line_of: Callable[[Diagnostic], int | None]
) -> list[Diagnostic]:
    introduced = []
    for diag in after:
        identity = _identity(diag, line_of(diag))
        if old[identity] > 0:
            old[identity] -= 1
        else:
            introduced.append(diag)
    return introduced
