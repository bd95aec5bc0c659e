"""Repeat-edit propagation as a candidate source of the next-edit pipeline.

It offers the user's last completed edit again at the other places that need it. An
edit still being typed is not propagated: a half-typed rename ("nam") would be offered
everywhere as if it were the new name.
"""

from __future__ import annotations

import threading

from .candidates import Candidate, Query
from .edits import TextEdit
from .propagation import SOURCE, CompletedEdit, propagate


class PropagationSource:
    name = SOURCE

    def candidates(self, query: Query, cancel: threading.Event | None = None) -> list[Candidate]:
        situation = query.situation
        if situation.in_progress is not None or not query.events:
            return []
        last = query.events[-1]
        if last.path != situation.path:
            return []
        edit = CompletedEdit.from_event(
            situation.path, situation.text, last.offset, last.old_text, last.new_text
        )
        texts = {**query.open_texts, situation.path: situation.text}
        return [
            Candidate(
                (TextEdit(found.start, found.end, found.new_text),),
                found.confidence,
                found.source,
                path=found.path,
            )
            for found in propagate(edit, texts, max_candidates=query.n)
        ]
