"""`shadowtab lsp --standalone` with the model replaced by a deterministic stand-in, so that
client tests get real, non-empty next edits and ghost text from the real server and can
show and accept them. The editor is what these tests look at, not the model.

usage: python fixed_predictor_lsp.py FILE
  a WordReplacer: next edit = replace the first "hello" of the text by "goodbye" (none
  once there is no "hello"); ghost text = ".title()" at the cursor.

usage: python fixed_predictor_lsp.py --choices FILE
  a WordReplacer with choices to cycle through: ghost text ".title()", and also ".upper()"
  when the user asks (triggerKind Invoked), as the real predictor adds the model's
  continuation only then; next edits "goodbye", then "farewell".

usage: python fixed_predictor_lsp.py --follow-renames FILE
  a RenameFollower: after the user renames one identifier of FILE (the first place where
  its words differ from FILE's text on disk at start), the next edit renames the next
  occurrence of the old name (a second choice: `str(new)` there, to cycle to); ghost
  text ".title()" only at the end of a line that assigns a value (`message =
  greet('world')`), and ".upper()" after it when the user asks (VS Code asks when the
  user cycles, Alt+]). Nothing else is suggested, so Tab does one thing at a time.

--warm-log LOG (with any of the above): each warm's cursor appended to LOG as
  "line:character" (where the server prefilled the prompt: a client test reads it).
"""

from __future__ import annotations

import argparse
import asyncio
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shadowtab.daemon.config import load_settings
from shadowtab.inference.next_edit.candidates import Candidate
from shadowtab.inference.next_edit.edits import TextEdit
from shadowtab.inference.next_edit.feedback import FeedbackCounts, Outcome
from shadowtab.inference.next_edit.predictor import PredictionRequest, Predictor
from shadowtab.lsp.hub import Hub

GHOST_TEXT = ".title()"
OTHER_GHOST_TEXT = ".upper()"  # --choices: the second choice, offered when asked
OLD_WORD, NEW_WORD = "hello", "goodbye"
OTHER_NEW_WORD = "farewell"  # --choices: the second next edit
WORD = re.compile(r"[A-Za-z_]\w*")
GHOST_AFTER = re.compile(r"=\s*\S.*[\w)\]'\"]$")  # an assignment with a value


def ghost_text(request: PredictionRequest, text: str = GHOST_TEXT) -> Candidate:
    at = request.cursor
    return Candidate((TextEdit(at, at, text),), 1.0, "", kind="inline")


def replacing(start: int, end: int, new_text: str) -> Candidate:
    return Candidate((TextEdit(start, end, new_text),), 1.0, "")


def log_warm(path: Path | None, request: PredictionRequest) -> None:
    """Append the warm's cursor to `path` as "line:character" (None: nothing)."""
    if path is None:
        return
    before = request.text[: request.cursor]
    line, character = before.count("\n"), len(before) - before.rfind("\n") - 1
    with path.open("a") as log:
        log.write(f"{line}:{character}\n")


@dataclass
class CountedFeedback:
    """What the editor said of the suggestions (accepted, rejected), counted as the
    product's predictor counts it."""

    counts: FeedbackCounts = field(default_factory=FeedbackCounts, kw_only=True)

    def feedback(self, outcome: Outcome, source: str, format_name: str = "") -> None:
        self.counts.add(outcome, source, format_name)

    def feedback_counts(self) -> dict[str, Any]:
        return self.counts.to_dict()


@dataclass
class WordReplacer(CountedFeedback):
    """Always the same suggestion, found in the text as it is now (a FixedPredictor's fixed
    offsets would point into other words once the text before them changed).
    `choices`: a second ghost text when the user asks, and a second next edit."""

    choices: bool = False
    warm_log: Path | None = None

    def inline(
        self, request: PredictionRequest, cancel: threading.Event | None = None
    ) -> list[Candidate]:
        if self.choices and request.invoked:
            return [ghost_text(request), ghost_text(request, OTHER_GHOST_TEXT)]
        return [ghost_text(request)]

    def next_edit(
        self, request: PredictionRequest, cancel: threading.Event | None = None
    ) -> list[Candidate]:
        start = request.text.find(OLD_WORD)
        if start < 0:
            return []
        words = [NEW_WORD, OTHER_NEW_WORD] if self.choices else [NEW_WORD]
        return [replacing(start, start + len(OLD_WORD), word) for word in words]

    def warm(self, request: PredictionRequest, cancel: threading.Event | None = None) -> None:
        log_warm(self.warm_log, request)

    def follow(self, request: PredictionRequest, cancel: threading.Event | None = None) -> None:
        return None


@dataclass
class RenameFollower(CountedFeedback):
    """Suggests finishing a rename the user started: a stand-in for what the model (or
    repeat-edit propagation) would suggest, deterministic so an editor test can rely on it."""

    original: str
    warm_log: Path | None = None

    def inline(
        self, request: PredictionRequest, cancel: threading.Event | None = None
    ) -> list[Candidate]:
        line_start = request.text.rfind("\n", 0, request.cursor) + 1
        line_end = request.text.find("\n", request.cursor)
        rest = request.text[request.cursor : None if line_end < 0 else line_end]
        before = request.text[line_start : request.cursor]
        accepted = before.endswith((GHOST_TEXT, OTHER_GHOST_TEXT))
        if rest.strip() or not GHOST_AFTER.search(before) or accepted:
            # once a choice is accepted the line is done: offering ".title()" again at
            # once raced the editor's acceptance (a CI run saw the line end ".title().title()")
            return []
        if request.invoked:
            return [ghost_text(request), ghost_text(request, OTHER_GHOST_TEXT)]
        return [ghost_text(request)]

    def next_edit(
        self, request: PredictionRequest, cancel: threading.Event | None = None
    ) -> list[Candidate]:
        renamed = self._renamed(request.text)
        if renamed is None:
            return []
        old, new = renamed
        for match in WORD.finditer(request.text):
            if match.group() == old:
                start, end = match.span()
                return [replacing(start, end, new), replacing(start, end, f"str({new})")]
        return []

    def _renamed(self, text: str) -> tuple[str, str] | None:
        """(old, new) at the first word that differs from the original, if it is a rename."""
        before = WORD.findall(self.original)
        after = WORD.findall(text)
        for index, (old, new) in enumerate(zip(before, after, strict=False)):
            if old != new:
                following = slice(index + 1, index + 4)
                if before[following] != after[following] or old in new or new in old:
                    return None  # still typing, or not a one-word replacement
                return old, new
        return None

    def warm(self, request: PredictionRequest, cancel: threading.Event | None = None) -> None:
        log_warm(self.warm_log, request)

    def follow(self, request: PredictionRequest, cancel: threading.Event | None = None) -> None:
        return None


async def serve(predictor: Predictor) -> None:
    options = load_settings(Path.cwd()).hub_options()
    options.predictor = predictor
    hub = Hub(options)
    await hub.start()
    try:
        await hub.serve_stdio()
    finally:
        await hub.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--follow-renames", action="store_true")
    parser.add_argument("--choices", action="store_true")
    parser.add_argument("--warm-log", type=Path)
    args = parser.parse_args()
    text = args.file.read_text()
    predictor: Predictor = (
        RenameFollower(text, warm_log=args.warm_log)
        if args.follow_renames
        else WordReplacer(choices=args.choices, warm_log=args.warm_log)
    )
    asyncio.run(serve(predictor))


if __name__ == "__main__":
    main()
