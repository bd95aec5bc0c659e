"""The pipeline over fake sources: order, abstention, distinct candidates, kinds,
never-undo-the-user, type-through and the feedback counts. Pure: no model."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
from shadowtab.inference.next_edit.candidates import Candidate, Query, merged
from shadowtab.inference.next_edit.edits import TextEdit, apply_all
from shadowtab.inference.next_edit.pipeline import NextEditPipeline
from shadowtab.inference.next_edit.situation import EditInProgress, Situation

TEXT = "def area(width, height):\n    return wid\n" + "\n" * 30 + "area(1, 2)\n"
CURSOR = TEXT.index("wid\n") + 3


@dataclass
class FakeSource:
    name: str
    found: list[Candidate]
    calls: list[Query] = field(default_factory=list)

    def candidates(self, query: Query, cancel: threading.Event | None = None) -> list[Candidate]:
        self.calls.append(query)
        return list(self.found)


def insert(text: str, confidence: float, source: str = "model") -> Candidate:
    return Candidate((TextEdit(CURSOR, CURSOR, text),), confidence, source, "generic")


def query(text: str = TEXT, cursor: int = CURSOR, n: int = 3) -> Query:
    edit = EditInProgress(cursor - 3, "", "wid") if text == TEXT else None
    return Query(Situation("a.py", text, cursor, edit), n)


def test_ranked_by_confidence_distinct_and_at_most_n() -> None:
    model = FakeSource("model", [insert("th", 0.5), insert("th * height", 0.9), insert("th", 0.4)])
    found = NextEditPipeline([model]).predict(query(n=2))
    assert [s.edits[0].new_text for s in found] == ["th * height", "th"]
    assert [s.kind for s in found] == ["inline", "inline"]


def test_earlier_source_wins_a_tie_and_is_asked_first() -> None:
    jump_at = TEXT.index("area(1, 2)")
    rename = Candidate((TextEdit(jump_at, jump_at + 4, "size"),), 0.9, "propagation")
    propagation = FakeSource("propagation", [rename])
    model = FakeSource("model", [insert("th", 0.9)])
    found = NextEditPipeline([propagation, model]).predict(query())
    assert [s.source for s in found] == ["propagation", "model"]
    assert found[0].kind == "jump"  # 30 lines below the cursor


def test_below_the_threshold_nothing_is_shown() -> None:
    model = FakeSource("model", [insert("th", 0.3), insert("x", 0.1)])
    assert NextEditPipeline([model], min_confidence=0.5).predict(query()) == []
    assert len(NextEditPipeline([model], min_confidence=0.2).predict(query())) == 1


def test_a_candidate_that_removes_what_was_just_typed_is_dropped_and_counted() -> None:
    undo = Candidate((TextEdit(CURSOR - 3, CURSOR, ""),), 0.99, "model", "generic")
    pipeline = NextEditPipeline([FakeSource("model", [undo, insert("th", 0.5)])])
    found = pipeline.predict(query())
    assert [s.edits[0].new_text for s in found] == ["th"]
    assert pipeline.feedback.to_dict()["model/generic"]["dropped_reversal"] == 1


def test_an_edit_in_the_region_is_an_edit() -> None:
    at = TEXT.index("width,")
    edit = Candidate((TextEdit(at, at + 5, "w"),), 0.8, "model", region=(0, CURSOR + 10))
    (found,) = NextEditPipeline([FakeSource("model", [edit])]).predict(query())
    assert found.kind == "edit"


def test_a_candidate_is_handed_over_as_one_edit() -> None:
    """What lsp/ reads (Candidate.edit) is one replacement: the candidate's edits merged,
    everything else about it kept; a candidate of several edits has no single edit."""
    at = TEXT.index("width,")
    two = Candidate(
        (TextEdit(at, at + 5, "w"), TextEdit(CURSOR, CURSOR, "th")), 0.8, "model", "generic"
    )
    with pytest.raises(ValueError):
        _ = two.edit
    one = merged(two, TEXT)
    assert one.edit.apply(TEXT) == apply_all(TEXT, two.edits)
    assert (one.edit.start, one.edit.end) == (at, CURSOR)
    assert (one.confidence, one.source, one.format, one.kind) == (0.8, "model", "generic", "edit")
    elsewhere = Candidate((TextEdit(0, 1, "y"),), 0.5, "propagation", path="b.py")
    assert merged(elsewhere, TEXT) == elsewhere  # offsets into its own file


def test_typing_what_was_shown_keeps_the_rest_without_asking_again() -> None:
    model = FakeSource("model", [insert("th * height", 0.9)])
    pipeline = NextEditPipeline([model])
    first = query()
    pipeline.shown(first, pipeline.predict(first))
    pipeline.predict(first)  # a second request for the same state keeps what was shown
    typed = TEXT[:CURSOR] + "th" + TEXT[CURSOR:]
    (rest,) = pipeline.predict(Query(Situation("a.py", typed, CURSOR + 2), 3))
    assert rest.edits == (TextEdit(CURSOR + 2, CURSOR + 2, " * height"),)
    assert rest.kind == "inline"
    assert len(model.calls) == 1
    counts = pipeline.feedback.to_dict()["model/generic"]
    assert counts["shown"] == 1 and counts["typed_through"] == 1
    # A character that disagrees drops it: the sources are asked again.
    other = TEXT[:CURSOR] + "x" + TEXT[CURSOR:]
    pipeline.predict(Query(Situation("a.py", other, CURSOR + 1), 3))
    assert len(model.calls) == 2


def test_an_unshown_result_is_kept_for_the_same_context() -> None:
    model = FakeSource("model", [insert("th", 0.9)])
    pipeline = NextEditPipeline([model])
    pipeline.predict(query())
    pipeline.predict(query())
    assert len(model.calls) == 1


def test_no_sources_or_no_answers_give_nothing() -> None:
    assert NextEditPipeline([]).predict(query()) == []
    empty = Query(Situation("a.py", "", 0), 3)
    assert NextEditPipeline([FakeSource("model", [])]).predict(empty) == []


@dataclass
class BlockingSource:
    """A source that holds its first call until released: a second caller arrives while
    the first computes."""

    found: list[Candidate]
    entered: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    calls: int = 0
    name: str = "model"

    def candidates(self, query: Query, cancel: threading.Event | None = None) -> list[Candidate]:
        self.calls += 1
        self.entered.set()
        assert self.release.wait(30)
        return list(self.found)


def predict_in_thread(
    pipeline: NextEditPipeline, cancel: threading.Event | None = None
) -> tuple[threading.Thread, list[list[object]]]:
    out: list[list[object]] = []
    thread = threading.Thread(target=lambda: out.append(list(pipeline.predict(query(), cancel))))
    thread.start()
    return thread, out


def wait_until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.005)


def test_concurrent_callers_of_one_state_share_one_computation() -> None:
    source = BlockingSource([insert("th", 0.9)])
    pipeline = NextEditPipeline([source])
    first, first_out = predict_in_thread(pipeline)
    assert source.entered.wait(30)
    second, second_out = predict_in_thread(pipeline)
    wait_until(lambda: pipeline.flights.waiting() == 1 or source.calls > 1)
    source.release.set()
    first.join(30)
    second.join(30)
    assert source.calls == 1
    assert first_out == second_out and len(first_out[0]) == 1


def test_a_cancelled_first_caller_hands_the_work_to_the_waiting_one() -> None:
    source = BlockingSource([insert("th", 0.9)])
    pipeline = NextEditPipeline([source])
    cancel = threading.Event()
    first, _ = predict_in_thread(pipeline, cancel)
    assert source.entered.wait(30)
    second, second_out = predict_in_thread(pipeline)
    wait_until(lambda: pipeline.flights.waiting() == 1)
    cancel.set()  # e.g. $/cancelRequest of the ghost text only
    source.release.set()
    first.join(30)
    second.join(30)
    assert source.calls == 2  # the cancelled result is neither shared nor remembered
    assert len(second_out[0]) == 1
