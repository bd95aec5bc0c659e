"""Mined examples: a line completion's prompt is exactly what ghost text's continuation
sends for the same situation, and its answer, through the product's own re-joining,
finishes the line as the commit did; a typed hunk is kept, not undone; a record whose
texts do not match its hunks is refused (and counted by the miner)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from shadowtab.inference.next_edit.candidates import Query
from shadowtab.inference.next_edit.formats import get_format
from shadowtab.inference.next_edit.formats.shadowtab import unescape
from shadowtab.inference.next_edit.ghost_text.completion_source import CompletionSource
from shadowtab.inference.next_edit.ghost_text.rejoin import rejoined, rest_of_line
from shadowtab.inference.next_edit.situation import Situation

from training.commits import BadRecord, commit_from_record
from training.line_completion import line_example
from training.situations import half_typed, kept

HEAD = "".join(f"value_{n} = compute({n}, <|im_end|>)\n" for n in range(40))
AFTER = HEAD + "total = add(first, second)\nprint(total)\n"
RECORD: dict[str, Any] = {
    "repo": "example/repo",
    "commit": "abc",
    "path": "pkg/mod.py",
    "before": HEAD + "total = add(first)\nprint(total)\n",
    "after": AFTER,
    "hunks": [[41, 1, 41, 1]],
}


def product_prompt(situation: Situation) -> str:
    fmt = get_format("shadowtab")  # the packaged adapter's format
    source = CompletionSource(lambda: None, lambda query: fmt.continuation(query.situation))
    return source.prompt(Query(situation))


@pytest.mark.parametrize("cut", [0, 1, 3, 7])
def test_a_line_completion_prompt_is_what_ghost_text_sends(cut: int) -> None:
    commit = commit_from_record(RECORD)
    state = half_typed(commit, 0, cut, random.Random(0))
    assert state is not None
    example = line_example(state)
    assert example is not None and example.kind == "line" and not example.eos
    assert example.prompt == product_prompt(state.situation)
    assert "<|im_end|>" not in example.prompt  # user text escaped, as the product does
    # the engine stops on "\n" (not returned); rejoin.py decides what is inserted
    text, cursor = state.situation.text, state.situation.cursor
    assert example.answer.endswith("\n")
    generated = unescape(example.answer[:-1])
    inserted = rejoined(generated, rest_of_line(text, cursor), finished=True)
    assert inserted is not None
    assert text[:cursor] + inserted + text[cursor:] == RECORD["after"]


def test_a_fully_typed_hunk_is_kept_by_the_answer() -> None:
    commit = commit_from_record(RECORD)
    example = kept(commit, 0, random.Random(0))
    assert example is not None and example.kind == "keep" and example.eos
    assert "total = add(first, second)\n" in example.answer
    assert "total = add(first)\n" not in example.answer


@pytest.mark.parametrize(
    "broken",
    [
        {"after": AFTER.replace("value_3 =", "value_three =")},  # outside hunks
        {"hunks": [[41, 1, 41, 2]]},  # the wrong length: `print` would come twice
        {"hunks": [[90, 1, 90, 1]]},  # a hunk outside the window
        {"hunks": []},
        {"before": None},
    ],
)
def test_a_record_whose_texts_do_not_match_its_hunks_is_refused(broken: dict) -> None:
    with pytest.raises(BadRecord):
        commit_from_record({**RECORD, **broken})


def test_the_miner_skips_and_counts_bad_records() -> None:
    pytest.importorskip("llama_cpp")
    from training.mine import mine_all

    bad = {**RECORD, "after": AFTER.replace("value_3 =", "value_three =")}
    mined = mine_all([RECORD, bad, bad], seed=0)
    assert mined.bad_records == 2
    assert {e["kind"] for e in mined.train + mined.held} >= {"line", "keep"}
