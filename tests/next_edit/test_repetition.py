"""The repetition source: the open files' own continuation of the text before the
cursor, one word or one run of punctuation, from the longest match elsewhere."""

from __future__ import annotations

import time

from shadowtab.inference.next_edit.candidates import Query
from shadowtab.inference.next_edit.ghost_text import repetition
from shadowtab.inference.next_edit.situation import Situation, Snippet

FILE = (
    "result = compute_total(items, discount=rate)\n"
    "other = compute_total(items, tax=rate)\n"
    "\n"
    "again = total(items, dis\n"
)
CURSOR = FILE.index("dis\n") + len("dis")


def test_the_longest_match_is_continued_by_one_word() -> None:
    found = repetition.continuation(FILE, CURSOR, min_match=12)
    assert found == repetition.Repetition("count", len("total(items, dis"))


def test_then_one_run_of_punctuation() -> None:
    text = FILE.replace("again = total(items, dis\n", "again = compute_total(items\n")
    at = text.index("items\n", text.index("again")) + len("items")
    found = repetition.continuation(text, at, min_match=12)
    assert found is not None and found.text == ","  # then the word: one step at a time


def test_a_short_match_or_a_new_line_is_not_offered() -> None:
    assert repetition.continuation(FILE, CURSOR) is None  # 24 characters do not match
    line_end = FILE.index("rate)\n") + len("rate)")
    assert repetition.continuation(FILE[:line_end] + "\n", line_end, min_match=4) is None
    assert repetition.continuation("", 0) is None


def test_other_open_files_are_searched() -> None:
    here = "value = normalise_vector(points, axis=0)\nx = normalise_vector(points, ax"
    other = {"b.py": "y = normalise_vector(points, axis_hint)\n"}
    found = repetition.continuation(here, len(here), other)
    assert found is not None and found.text == "is"  # the nearest earlier match first


def test_the_projects_code_in_the_prompt_is_searched() -> None:
    """The prompt's snippets of the project (lsp/project_context.py) are searched as
    the open files are: a line the project has written elsewhere is continued."""
    here = "def load(path):\n    settings = read_settings_file(path, encod"
    query = Query(Situation("a.py", here, len(here)))
    assert repetition.candidate(query) is None
    snippet = Snippet("pkg/config.py", "    settings = read_settings_file(path, encoding='utf-8')")
    found = repetition.candidate(Query(Situation("a.py", here, len(here), context=(snippet,))))
    assert found is not None and found.edits[0].new_text == "ing"


def test_the_candidate_is_ghost_text_that_rejoins_the_line() -> None:
    query = Query(Situation("a.py", FILE, CURSOR))
    assert repetition.candidate(query) is None  # the default needs 24 characters
    typed = "again = compute_total(items, discount=ra"
    text = FILE.replace("again = total(items, dis", typed + ")")
    at = text.index(typed) + len(typed)
    found = repetition.candidate(Query(Situation("a.py", text, at)))
    assert found is not None and found.edits[0].new_text == "te"
    assert found.source == "repetition" and 0.5 < found.confidence < 1


def test_a_huge_file_takes_bounded_time() -> None:
    text = "x = 1\n" * 1_500_000 + "value = compute_total(items, discount=ra"
    started = time.perf_counter()
    repetition.continuation(text, len(text))
    assert time.perf_counter() - started < 5.0


def test_the_predictor_asks_it_before_the_model() -> None:
    """A long match: ghost text comes from the repetition, the model is not asked;
    switched off, the model's continuation (here below the threshold: nothing)."""
    from shadowtab.inference import Completion, RequestStats
    from shadowtab.inference.next_edit.predictor import EnginePredictor, PredictionRequest

    class Unsure:
        calls = 0

        def complete(self, *args: object, **kwargs: object) -> Completion:
            self.calls += 1
            return Completion(
                ["xyz"], RequestStats(), finish_reasons=["stop"], logprobs=[[-3.0]],
                text_offsets=[[3]],
            )  # fmt: skip

        def stats(self) -> dict[str, object]:
            return {}

    typed = "again = compute_total(items, discount=ra"
    text = FILE.replace("again = total(items, dis", typed)
    request = PredictionRequest("a.py", "python", text, text.index(typed) + len(typed))
    engine = Unsure()
    predictor = EnginePredictor(lambda: engine, "shadowtab")  # type: ignore[arg-type, return-value]
    (ghost,) = predictor.inline(request)
    assert ghost.edit.new_text == "te" and ghost.source == "repetition" and engine.calls == 0
    off = EnginePredictor(lambda: engine, "shadowtab", use_repetition=False)  # type: ignore[arg-type, return-value]
    assert off.inline(request) == [] and engine.calls == 1
