"""Repeat-edit propagation as a candidate source of the next-edit pipeline.

It offers the user's last completed edit again at the other places that need it. An
edit still being typed is not propagated: a half-typed rename ("nam") would be offered
everywhere as if it were the new name. One exception is the moment a user expects the
other places: a whole identifier replaced by another, the cursor still at its end, and a
pause in typing (RENAME_PAUSE_S) before the request; if typing goes on, type-through
updates what was offered.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path

from ..candidates import Candidate, Query
from ..events import Edit
from .propagation import SOURCE, CompletedEdit, propagate
from .propagation_gate import SHIPPED_GATE, gate_at

RENAME_PAUSE_S = 0.3
IDENTIFIER = re.compile(r"[^\W\d]\w*")


def finished_rename(query: Query, last: Edit) -> bool:
    """The edit in progress replaced one whole identifier with another, the cursor is
    at the new one's end, and the user paused before asking."""
    situation = query.situation
    text, start, end = situation.text, last.offset, last.offset + len(last.new_text)
    if query.asked_at is None or query.asked_at - last.time < RENAME_PAUSE_S:
        return False
    if situation.cursor != end or last.old_text == last.new_text:
        return False
    if not (IDENTIFIER.fullmatch(last.old_text) and IDENTIFIER.fullmatch(last.new_text)):
        return False
    before = text[start - 1 : start] if start > 0 else ""
    after = text[end : end + 1]
    return not re.match(r"\w", before) and not re.match(r"\w", after)


class PropagationSource:
    """`gate_path`: the learned gate's file (propagation_gate.py); None, or a file that
    cannot be used: the fixed confidences of each kind of edit."""

    name = SOURCE

    def __init__(self, gate_path: Path | None = SHIPPED_GATE) -> None:
        self._gate, self.gate_state = (
            gate_at(gate_path) if gate_path is not None else (None, "gate off: fixed confidences")
        )

    def candidates(self, query: Query, cancel: threading.Event | None = None) -> list[Candidate]:
        situation = query.situation
        if not query.events:
            return []
        last = query.events[-1]
        if last.path != situation.path:
            return []
        if situation.in_progress is not None and not finished_rename(query, last):
            return []
        edit = CompletedEdit.from_event(
            situation.path, situation.text, last.offset, last.old_text, last.new_text
        )
        texts = {**query.open_texts, situation.path: situation.text}
        return propagate(edit, texts, max_candidates=query.n, gate=self._gate)
