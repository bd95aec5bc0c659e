"""The region's lines above an edit in progress are given to the model, not rewritten by
it: what moves from the draft into the prompt, when nothing moves, and (the real model)
that the answer is the same as the full rewrite's when that copies those lines."""

from __future__ import annotations

import pytest
from shadowtab.inference import LlamaCppEngine
from shadowtab.inference.next_edit.formats import get_format
from shadowtab.inference.next_edit.rewrite.given_lines import with_lines_given
from shadowtab.inference.next_edit.situation import EditInProgress, RenderedPrompt, Situation

TEXT = "".join(f"x{i} = compute({i})\n" for i in range(30))
AT = TEXT.index("x15 = ") + len("x15 = ")
TYPED = "comp"
NOW = TEXT[:AT] + TYPED + TEXT[AT + len("compute(15)") :]
TYPING = Situation("a.py", NOW, AT + len(TYPED), EditInProgress(AT, "compute(15)", TYPED))


def rendered(situation: Situation, fmt: str = "shadowtab") -> RenderedPrompt:
    found = get_format(fmt).render(situation)
    assert found is not None
    return found


@pytest.mark.parametrize("fmt", ["shadowtab", "sweep", "zeta", "generic"])
def test_the_lines_above_the_edit_move_into_the_prompt(fmt: str) -> None:
    window = rendered(TYPING, fmt)
    given = with_lines_given(window, TYPING)
    line_start = NOW.rindex("\n", 0, AT) + 1
    assert given.region_start == line_start - 1  # the newline before the edit's line
    assert given.region_end == window.region_end
    assert given.prompt + given.draft == window.prompt + window.draft  # nothing lost
    assert given.draft.startswith("\nx15 = comp")
    assert given.prompt.endswith("x14 = compute(14)")  # cut before the newline


def test_nothing_is_given_without_an_edit_in_progress_or_a_line_above() -> None:
    idle = Situation("a.py", NOW, AT)
    assert with_lines_given(rendered(idle), idle) == rendered(idle)
    first = Situation("a.py", "comp\n" + TEXT, 4, EditInProgress(0, "", "comp"))
    assert with_lines_given(rendered(first), first) == rendered(first)


def test_a_draft_that_does_not_start_with_the_region_gets_nothing_given() -> None:
    window = rendered(TYPING)
    marked = RenderedPrompt(
        window.prompt, "<start>\n" + window.draft, window.region_start, window.region_end
    )
    assert with_lines_given(marked, TYPING) == marked


def test_the_cut_skips_blank_lines_and_trailing_spaces() -> None:
    text = NOW.replace("x14 = compute(14)\n", "x14 = compute(14)  \n\n")
    at = text.index("x15 = comp") + len("x15 = comp")
    situation = Situation("a.py", text, at, EditInProgress(at - 4, "compute(15)", "comp"))
    given = with_lines_given(rendered(situation), situation)
    assert given.prompt.endswith("x13 = compute(13)")
    assert given.draft.startswith("\nx14 = compute(14)  \n\nx15 = comp")


def test_escaped_user_text_is_given_as_sent() -> None:
    text = NOW.replace("x14 = compute(14)", "x14 = '<jupyter_code>'")
    at = text.index("x15 = comp") + len("x15 = comp")
    situation = Situation("a.py", text, at, EditInProgress(at - 4, "compute(15)", "comp"))
    window, given = rendered(situation), with_lines_given(rendered(situation), situation)
    assert given.prompt + given.draft == window.prompt + window.draft
    assert "<jupyter_code>" not in given.prompt.rsplit("<jupyter_code>", 1)[1]


def test_the_real_model_answers_as_its_full_rewrite_does(engine: LlamaCppEngine) -> None:
    """Greedy, unbatched: when the full rewrite copies the lines above the edit, giving
    them changes nothing after them (the cut keeps the tokenizer's own split)."""
    window = rendered(TYPING)
    given = with_lines_given(window, TYPING)
    limit = len(engine.tokenize(window.draft)) + 16
    full = engine.rewrite(window.prompt, window.draft, limit, speculative=False).texts[0]
    part = engine.rewrite(given.prompt, given.draft, limit, speculative=False).texts[0]
    above = window.draft[: len(window.draft) - len(given.draft)]
    assert full.startswith(above), "the full rewrite changed the lines above: no comparison"
    assert above + part == full
