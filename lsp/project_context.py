"""The project's code put in a prediction's prompt: windows of the project most similar
to the lines around the cursor (RepoCoder's retrieval: Jaccard similarity of identifier
sets), this file's far parts included, chosen from the workspace's project index.

The snippets come first in the prompt, so they must stay put while the user types, or
every keystroke would re-prefill them: `StableContext` keeps a document's choice while
the cursor stays near where it was chosen, and chooses again when the cursor goes
elsewhere (the warm at the cursor's arrival prefills the new choice)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from shadowtab.inference.next_edit.situation import Snippet
from shadowtab.shadow_workspace.project_index import ProjectIndex

# The lines whose identifiers make the query: those above the cursor, its own line.
QUERY_LINES_ABOVE = 10
# This file's lines the prompt shows anyway (the format's context and region, about 30
# lines above the cursor and 12 below): its windows overlapping them are not chosen.
PROMPT_LINES_ABOVE = 40
PROMPT_LINES_BELOW = 14
# Windows looked at for each one chosen: overlapping windows (stride 10 of 20 lines)
# and those over the budget are passed over.
CANDIDATE_WINDOWS = 4
CHARS_PER_TOKEN = 3.2  # code in SmolLM2's tokenizer (a budget's estimate, not a cut)
# The cursor this many lines from where the choice was made: another place.
SAME_PLACE_LINES = 12
REMEMBERED_DOCUMENTS = 64


def choose(
    index: ProjectIndex, path: str, text: str, cursor: int, budget_tokens: int
) -> tuple[Snippet, ...]:
    """The most similar windows that fit in `budget_tokens`, least similar first (the
    best is nearest the code it helps), none overlapping another or the prompt's own."""
    if budget_tokens <= 0:
        return ()
    lines = text[:cursor].split("\n")
    line = len(lines) - 1
    query = "\n".join(lines[max(0, line - QUERY_LINES_ABOVE) :]) + _rest_of_line(text, cursor)
    shown = (max(0, line - PROMPT_LINES_ABOVE), line + PROMPT_LINES_BELOW)
    budget = budget_tokens * CHARS_PER_TOKEN
    found = index.similar_windows(query, CANDIDATE_WINDOWS * 3, exclude=(path, shown))
    chosen: list[Snippet] = []
    taken: list[tuple[str, int, int]] = []
    for match in found:
        if any(p == match.path and s < match.end and match.start < e for p, s, e in taken):
            continue
        if len(match.text) > budget:
            continue
        budget -= len(match.text) + len(match.path)
        taken.append((match.path, match.start, match.end))
        chosen.append(Snippet(_shown_path(index.root, match.path), match.text.rstrip("\n")))
    return tuple(reversed(chosen))


def _rest_of_line(text: str, cursor: int) -> str:
    end = text.find("\n", cursor)
    return text[cursor : len(text) if end < 0 else end]


def _shown_path(root: Path, path: str) -> str:
    """The path as the prompt names it: relative to the workspace's root."""
    try:
        return str(Path(path).relative_to(root))
    except ValueError:
        return path


@dataclass(frozen=True)
class _Choice:
    line: int
    snippets: tuple[Snippet, ...]


class StableContext:
    """Each document's chosen snippets, kept while the cursor stays in one place.
    Called from worker threads (requests and warms build their prompts there)."""

    def __init__(self, budget_tokens: int) -> None:
        self.budget_tokens = budget_tokens
        self._choices: OrderedDict[str, _Choice] = OrderedDict()
        self._lock = threading.Lock()

    def snippets(
        self,
        index: ProjectIndex | None,
        path: str,
        text: str,
        cursor: int,
    ) -> tuple[Snippet, ...]:
        """The snippets for a prompt at `cursor`: the document's last choice when the
        cursor is still near it, else a new one. Not at a pause: a new choice there
        re-prefills the whole prompt, and the warm doing it is cut by the next key
        (next edit p50 218 -> 564 ms, docs/MEASUREMENTS.md)."""
        if index is None or self.budget_tokens <= 0:
            return ()
        line = text.count("\n", 0, cursor)
        with self._lock:
            kept = self._choices.get(path)
        if kept is not None and abs(line - kept.line) < SAME_PLACE_LINES:
            return kept.snippets
        snippets = choose(index, path, text, cursor, self.budget_tokens)
        with self._lock:
            self._choices[path] = _Choice(line, snippets)
            self._choices.move_to_end(path)
            while len(self._choices) > REMEMBERED_DOCUMENTS:
                self._choices.popitem(last=False)
        return snippets

    def forget(self, path: str) -> None:
        with self._lock:
            self._choices.pop(path, None)
