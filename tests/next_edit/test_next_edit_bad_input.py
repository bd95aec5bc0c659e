"""Bad input through the pipeline's entry points: no history, a cursor past the end or
next to a character outside the BMP, an empty file, a failing linter, a malformed
--history file."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from shadowtab.daemon.cli.predict import read_history
from shadowtab.inference.next_edit.candidates import Candidate
from shadowtab.inference.next_edit.edits import TextEdit
from shadowtab.inference.next_edit.events import Edit
from shadowtab.inference.next_edit.filters import lint_gate
from shadowtab.inference.next_edit.predictor import PredictionRequest, query_of


@pytest.mark.parametrize(
    "text,cursor",
    [("", 0), ("", 7), ("x = 1\n", 999), ("s = '\U0001f600'\n", 6), ("a\n", -3)],
)
def test_any_cursor_becomes_a_valid_query(text: str, cursor: int) -> None:
    query = query_of(PredictionRequest("a.py", "python", text, cursor))
    assert 0 <= query.situation.cursor <= len(text)
    assert query.situation.in_progress is None and query.situation.past_edits == ()


def test_events_that_do_not_match_the_text_are_ignored() -> None:
    events = [Edit("a.py", 0.0, 50, "old", "new")]  # past the end of the text
    query = query_of(PredictionRequest("a.py", "python", "x\n", 1, events))
    assert query.situation.in_progress is None and query.situation.past_edits == ()


async def test_a_failing_linter_lets_every_candidate_through() -> None:
    async def broken(text: str) -> Sequence[str]:
        raise RuntimeError("linter crashed")

    edits = [TextEdit(0, 1, "y"), TextEdit(1, 1, "z")]
    verdicts = await lint_gate("x\n", edits, broken, lambda *args: True)
    assert verdicts == [True, True]


def test_history_files_are_read_and_checked(tmp_path: Path) -> None:
    good = tmp_path / "h.json"
    good.write_text(json.dumps([{"offset": 3, "old_text": "a", "new_text": "b", "time": 1}]))
    assert read_history(str(good), "m.py") == [Edit("m.py", 1.0, 3, "a", "b")]
    assert read_history(None, "m.py") == []
    for bad in ({"offset": 3}, [{"offset": "3", "old_text": "", "new_text": ""}], [7]):
        path = tmp_path / "bad.json"
        path.write_text(json.dumps(bad))
        with pytest.raises(ValueError):
            read_history(str(path), "m.py")


async def test_the_lint_gate_counts_what_it_drops() -> None:
    import threading

    from shadowtab.inference.next_edit.predictor import FixedPredictor
    from shadowtab.lsp.prediction_check import checked_candidates

    bad = Candidate((TextEdit(0, 1, "("),), 1.0, "model", "generic")
    good = Candidate((TextEdit(0, 1, "y"),), 1.0, "model", "generic")
    predictor = FixedPredictor(edits=[bad, good])
    request = PredictionRequest("a.py", "python", "x\n", 1)

    async def run(call: Callable[[threading.Event], list[Candidate]]) -> list[Candidate]:
        return call(threading.Event())

    async def check(text: str, found: Sequence[Candidate]) -> list[bool]:
        return [c.edit.new_text != "(" for c in found]

    kept = await checked_candidates(predictor, request, False, run, check)
    assert kept == [good]
    assert predictor.feedback_counts()["model/generic"]["dropped_lint"] == 1
