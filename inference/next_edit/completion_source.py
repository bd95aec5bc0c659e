"""Plain continuation at the cursor as a candidate source (ghost text when the rewrite
offers none): the file up to the cursor, continued to the end of the line."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable

from ..engines.api import Engine
from .candidates import Candidate, Query
from .edits import TextEdit
from .prompts import completion_prompt

NAME = "completion"
MAX_TOKENS = 24
MAX_CANDIDATES = 6


class CompletionSource:
    name = NAME

    def __init__(self, engine_getter: Callable[[], Engine | None]) -> None:
        self._engine_getter = engine_getter

    @staticmethod
    def prompt(query: Query) -> str:
        s = query.situation
        return completion_prompt(s.path, s.text, min(max(s.cursor, 0), len(s.text)))

    def candidates(self, query: Query, cancel: threading.Event | None = None) -> list[Candidate]:
        engine = self._engine_getter()
        s = query.situation
        if engine is None or not 0 <= s.cursor <= len(s.text):
            return []
        completion = engine.complete(
            self.prompt(query),
            MAX_TOKENS,
            stop=["\n"],
            n=max(1, min(query.n, MAX_CANDIDATES)),
            cancel=cancel,
        )
        found = []
        for index, text in enumerate(completion.texts):
            if not text.strip():
                continue
            logprobs = completion.logprobs[index] if index < len(completion.logprobs) else []
            score = math.exp(sum(logprobs) / len(logprobs)) if logprobs else 0.0
            found.append(Candidate((TextEdit(s.cursor, s.cursor, text),), score, NAME, NAME))
        return found
