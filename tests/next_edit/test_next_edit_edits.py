"""Minimal edits of a rewrite, and the reversal check (never undo the user)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from shadowtab.inference.next_edit.edits import TextEdit, apply_all, minimal_edits
from shadowtab.inference.next_edit.reversal import last_change, undoes_user
from shadowtab.inference.next_edit.situation import EditInProgress, PastEdit, Situation


def test_a_completion_at_the_cursor_is_one_insertion_there() -> None:
    old = "def f(x):\n    return x.va\n\n"
    new = "def f(x):\n    return x.value\n\n"
    assert minimal_edits(old, new, 100) == (
        TextEdit(100 + old.index("va") + 2, 100 + old.index("va") + 2, "lue"),
    )


def test_two_separate_changes_are_two_edits() -> None:
    old = "a = 1\nb = 2\nc = 3\n"
    new = "a = 10\nb = 2\nc = 30\n"
    assert minimal_edits(old, new) == (TextEdit(5, 5, "0"), TextEdit(17, 17, "0"))


def test_equal_texts_have_no_edits() -> None:
    assert minimal_edits("x\n", "x\n") == ()


@given(st.text(alphabet="ab\n ", max_size=40), st.text(alphabet="ab\n ", max_size=40))
def test_minimal_edits_turn_old_into_new(old: str, new: str) -> None:
    assert apply_all(old, minimal_edits(old, new)) == new


TEXT = "name = compute(value, other)\nprint(name)\n"


def situation(start: int, old: str, new: str) -> Situation:
    return Situation("a.py", TEXT, start + len(new), EditInProgress(start, old, new))


def test_deleting_just_typed_text_undoes_the_user() -> None:
    typed_at = TEXT.index("other")
    s = situation(typed_at, "", "other")
    assert undoes_user((TextEdit(typed_at, typed_at + 5, "x"),), s)
    assert not undoes_user((TextEdit(typed_at + 5, typed_at + 5, ", more"),), s)


def test_putting_back_what_was_deleted_undoes_the_user() -> None:
    at = TEXT.index(", other")
    s = Situation("a.py", TEXT, at, EditInProgress(at, ", legacy_flag", ""))
    assert undoes_user((TextEdit(at, at, ", legacy_flag"),), s)
    assert undoes_user((TextEdit(at, at, ", legacy_flag=True"),), s)
    assert not undoes_user((TextEdit(at, at, ", flag"),), s)


def test_retyping_a_shared_suffix_is_not_a_restoration() -> None:
    # The user deleted "old_name" and typed "new"; completing "new_name" is forward.
    text = "x = new\n"
    s = Situation("a.py", text, 7, EditInProgress(4, "old_name", "new"))
    assert not undoes_user((TextEdit(7, 7, "_name"),), s)
    assert undoes_user((TextEdit(4, 7, "old_name"),), s)  # a full undo


def test_the_last_past_edit_counts_when_nothing_is_in_progress() -> None:
    before = TEXT.replace("compute", "calc")
    s = Situation("a.py", TEXT, 0, None, (PastEdit("a.py", before, TEXT),))
    assert last_change(s) == EditInProgress(8, "alc", "ompute")  # common "c" trimmed
    at = TEXT.index("compute")
    assert undoes_user((TextEdit(at, at + 7, "calc"),), s)
    assert not undoes_user((), Situation("a.py", TEXT, 0))  # no history
