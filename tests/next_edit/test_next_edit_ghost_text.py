"""Ghost text's early fallback: the cursor line's verdict read from a rewrite as it is
written (cursor_line.py), and the continuation asked as soon as the verdict says the
rewrite's best candidate inserts nothing at the cursor (ghost_text.py), with the rewrite
left running for the next edit and stopped by the document's next state."""

from __future__ import annotations

import threading
import time
from dataclasses import replace

from shadowtab.inference import LlamaCppEngine
from shadowtab.inference.next_edit.candidates import Candidate, Kind, Query
from shadowtab.inference.next_edit.cursor_line import (
    CursorLineReader,
    EarlyVerdict,
    EarlyVerdicts,
    state_key,
)
from shadowtab.inference.next_edit.edits import TextEdit
from shadowtab.inference.next_edit.ghost_text import GhostText
from shadowtab.inference.next_edit.model_source import ModelSource
from shadowtab.inference.next_edit.pipeline import Suggestion
from shadowtab.inference.next_edit.situation import EditInProgress, RenderedPrompt, Situation

ABOVE = "def area(width, height):\n"
LINE_BEFORE, LINE_AFTER = "    return wid", "\n"
TEXT = ABOVE + LINE_BEFORE + LINE_AFTER + "\n\nprint(area(2, 3))\n"
CURSOR = len(ABOVE + LINE_BEFORE)
SITUATION = Situation("area.py", TEXT, CURSOR, EditInProgress(CURSOR - 3, "", "wid"))
# the region from the newline before the cursor's line, as with the lines above given
REGION_START = len(ABOVE) - 1
RENDERED = RenderedPrompt("<prompt>", TEXT[REGION_START:], REGION_START, len(TEXT))


def verdict_of(*pieces: str) -> EarlyVerdict:
    verdict = EarlyVerdict()
    reader = CursorLineReader(SITUATION, RENDERED, verdict)
    for piece in pieces:
        reader.feed(piece)
    return verdict


def test_the_cursor_line_as_it_is_means_no_insertion() -> None:
    verdict = verdict_of("\n    ret", "urn wid\n", "\n")
    assert verdict.known.is_set() and verdict.no_insertion()


def test_an_insertion_at_the_cursor_is_known_when_its_line_is_written() -> None:
    verdict = verdict_of("\n    return wid", "th * height")
    assert not verdict.known.is_set()  # the line is not written whole yet
    verdict = verdict_of("\n    return wid", "th * height\n")
    assert verdict.known.is_set() and verdict.inserts


def test_a_line_changed_otherwise_is_no_insertion() -> None:
    assert verdict_of("\n    return None\n").no_insertion()


def test_an_answer_that_is_not_the_region_line_for_line_gives_no_verdict() -> None:
    verdict = verdict_of("Here is the code:\n", "    return width\n")
    assert not verdict.known.is_set()


def test_recent_verdicts_are_shared_by_state() -> None:
    verdicts = EarlyVerdicts()
    key = state_key(SITUATION)
    assert verdicts.of(key) is verdicts.of(key)
    assert verdicts.of(("other.py", 0, 0)) is not verdicts.of(key)


def suggestion(text: str, kind: Kind) -> Suggestion:
    return Suggestion(Candidate((TextEdit(CURSOR, CURSOR, text),), 0.9, kind), kind)


class ScriptedRewrite:
    """A rewrite that decides the early verdict, then runs until released (or stopped)."""

    def __init__(self, verdicts: EarlyVerdicts, inserts: bool, answer: list[Suggestion]):
        self.verdicts, self.inserts, self.answer = verdicts, inserts, answer
        self.release = threading.Event()
        self.stopped = threading.Event()
        self.finished = threading.Event()

    def __call__(self, query: Query, cancel: threading.Event | None) -> list[Suggestion]:
        self.verdicts.of(state_key(query.situation)).decide(self.inserts)
        assert cancel is not None
        while not self.release.wait(0.005):
            if cancel.is_set():
                self.stopped.set()
                return []
        self.finished.set()
        return self.answer


def continuation(query: Query, cancel: threading.Event | None) -> list[Suggestion]:
    return [suggestion("th", "inline")]


def test_no_insertion_asks_the_continuation_and_leaves_the_rewrite_running() -> None:
    verdicts = EarlyVerdicts()
    rewrite = ScriptedRewrite(verdicts, False, [suggestion("x", "edit")])
    ghost = GhostText(rewrite, continuation, verdicts)
    found = ghost.suggestions(Query(SITUATION), threading.Event())
    assert [s.candidate.edits[0].new_text for s in found] == ["th"]
    assert not rewrite.finished.is_set() and not rewrite.stopped.is_set()
    ghost.other_state("area.py", state_key(SITUATION))  # the same state: it goes on
    time.sleep(0.05)
    assert not rewrite.stopped.is_set()
    ghost.other_state("area.py", ("area.py", 1, 2))  # the next keystroke: it stops
    assert rewrite.stopped.wait(5)


def test_an_insertion_waits_for_the_whole_rewrite() -> None:
    verdicts = EarlyVerdicts()
    rewrite = ScriptedRewrite(verdicts, True, [suggestion("th * height", "inline")])
    ghost = GhostText(rewrite, continuation, verdicts)
    answer: list[list[Suggestion]] = []
    asking = threading.Thread(
        target=lambda: answer.append(ghost.suggestions(Query(SITUATION), threading.Event()))
    )
    asking.start()
    time.sleep(0.1)
    assert not answer  # waits for the rewrite
    rewrite.release.set()
    asking.join(5)
    assert [s.candidate.edits[0].new_text for s in answer[0]] == ["th * height"]


def test_an_empty_continuation_waits_for_the_rewrites_alternatives() -> None:
    verdicts = EarlyVerdicts()
    rewrite = ScriptedRewrite(verdicts, False, [suggestion("th + 1", "inline")])
    ghost = GhostText(rewrite, lambda query, cancel: [], verdicts)
    rewrite.release.set()
    found = ghost.suggestions(Query(SITUATION), threading.Event())
    assert [s.candidate.edits[0].new_text for s in found] == ["th + 1"]


def test_a_cancelled_request_stops_the_rewrite_nobody_else_waits_for() -> None:
    verdicts = EarlyVerdicts()
    rewrite = ScriptedRewrite(verdicts, True, [])
    ghost = GhostText(rewrite, continuation, verdicts)
    cancel = threading.Event()
    threading.Timer(0.05, cancel.set).start()
    assert ghost.suggestions(Query(SITUATION), cancel) == []
    assert rewrite.stopped.wait(5)


def test_the_early_verdict_agrees_with_the_whole_answer_of_the_real_model(
    engine: LlamaCppEngine,
) -> None:
    """Read from the real model's rewrite as it is written, the verdict says what the
    finished answer's cursor line says."""
    source = ModelSource(lambda: engine, "shadowtab")
    typed = [SITUATION, replace(SITUATION, text=TEXT.replace("return wid", "return width"))]
    for situation in typed:
        if situation is not SITUATION:
            cursor = situation.text.index("width") + len("width")
            edit = EditInProgress(cursor - 5, "", "width")
            situation = replace(situation, cursor=cursor, in_progress=edit)
        rendered = source.prompt(Query(situation))
        assert rendered is not None
        verdict = EarlyVerdict()
        reader = CursorLineReader(situation, rendered, verdict)
        answer = engine.rewrite(
            rendered.prompt, rendered.draft, 64, stop=list(source.format.stop), on_text=reader.feed
        ).texts[0]
        assert verdict.known.is_set()
        line_start = situation.text.rfind("\n", 0, situation.cursor) + 1
        above = situation.text[rendered.region_start : line_start]
        line = answer[len(above) :].split("\n", 1)[0]
        now = situation.text[line_start : situation.text.index("\n", situation.cursor)]
        before = situation.text[line_start : situation.cursor]
        after = now[len(before) :]
        inserts = len(line) > len(now) and line.startswith(before) and line.endswith(after)
        assert verdict.inserts == inserts, (answer, line)
