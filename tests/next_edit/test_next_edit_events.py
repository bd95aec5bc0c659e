"""Edit events: coalescing, the budget, and the split into past edits and the edit in
progress, reconstructed from the text now."""

from __future__ import annotations

from shadowtab.inference.next_edit.events import (
    Edit,
    coalesce,
    edit_context,
    within_budget,
)
from shadowtab.inference.next_edit.situation import EditInProgress, PastEdit


def typed(path: str, text: str, offset: int, chars: str, t0: float, dt: float) -> list[Edit]:
    """One Edit per character typed at `offset` of `text`."""
    return [Edit(path, t0 + i * dt, offset + i, "", c) for i, c in enumerate(chars)]


def test_keystrokes_within_a_second_on_adjacent_text_are_one_edit() -> None:
    edits = typed("a.py", "x = 1\n", 4, "42", 0.0, 0.2)
    assert coalesce(edits) == [Edit("a.py", 0.2, 4, "", "42")]


def test_a_pause_or_a_jump_starts_a_new_edit() -> None:
    paused = typed("a.py", "", 0, "ab", 0.0, 2.0)
    assert len(coalesce(paused)) == 2
    jumped = [Edit("a.py", 0.0, 0, "", "a"), Edit("a.py", 0.1, 50, "", "b")]
    assert len(coalesce(jumped)) == 2


def test_backspace_merges_and_a_net_noop_disappears() -> None:
    edits = [Edit("a.py", 0.0, 3, "", "x"), Edit("a.py", 0.1, 3, "x", "")]
    assert coalesce(edits) == []


def test_replacing_then_typing_keeps_the_old_text() -> None:
    edits = [
        Edit("a.py", 0.0, 4, "old", ""),
        Edit("a.py", 0.3, 4, "", "n"),
        Edit("a.py", 0.5, 5, "", "ew"),
    ]
    assert coalesce(edits) == [Edit("a.py", 0.5, 4, "old", "new")]


def test_budget_keeps_the_newest() -> None:
    edits = [Edit("a.py", float(i), i * 10, "", "x" * 10) for i in range(30)]
    kept = within_budget(edits, max_events=16, max_chars=35)
    assert [e.time for e in kept] == [27.0, 28.0, 29.0]
    assert within_budget(edits, max_events=16, max_chars=10_000)[0].time == 14.0


def test_no_history_is_no_context() -> None:
    assert edit_context([], "a.py", "", 0).past == ()
    assert edit_context([], "a.py", "", 0).in_progress is None


def test_last_edit_at_the_cursor_is_in_progress_and_earlier_ones_are_past() -> None:
    before = "def f(a):\n    return a\n\nprint(f(1))\n"
    middle = before.replace("f(a)", "f(a, b)")
    now = middle.replace("return a", "return a + b")
    at = middle.index("return a") + len("return a")
    edits = [
        Edit("a.py", 0.0, before.index("a)") + 1, "", ", b"),
        Edit("a.py", 5.0, at, "", " + b"),
    ]
    context = edit_context(edits, "a.py", now, cursor=at + 4)
    assert context.in_progress == EditInProgress(at, "", " + b")
    assert context.past == (PastEdit("a.py", before, middle),)


def test_a_cursor_moved_away_makes_the_last_edit_past() -> None:
    now = "x = 1\n" + "\n" * 10 + "y = 2\n"
    edits = [Edit("a.py", 0.0, 4, "0", "1")]
    context = edit_context(edits, "a.py", now, cursor=len(now))
    assert context.in_progress is None
    assert context.past == (PastEdit("a.py", "x = 0\n" + now[6:], now),)


def test_a_stale_history_stops_the_reconstruction() -> None:
    edits = [Edit("a.py", 0.0, 0, "", "zzz"), Edit("a.py", 9.0, 0, "", "q")]
    context = edit_context(edits, "a.py", "q = 1\n", cursor=1)
    assert context.in_progress == EditInProgress(0, "", "q")
    assert context.past == ()  # "zzz" is not in the text: dropped, not shown wrong


def test_other_files_without_text_give_excerpts() -> None:
    edits = [Edit("b.py", 0.0, 7, "old", "new"), Edit("a.py", 5.0, 0, "", "x")]
    context = edit_context(edits, "a.py", "x\n", cursor=1)
    assert context.past == (PastEdit("b.py", "old", "new"),)


def test_a_big_file_gets_an_excerpt_around_the_edit() -> None:
    lines = [f"line {i}\n" for i in range(100_000)]
    now = "".join(lines)
    at = now.index("line 50000")
    edits = [Edit("a.py", 0.0, at, "LINE", "line")]
    (edit,) = edit_context(edits, "a.py", now, cursor=0).past
    assert len(edit.after) < 200
    assert "line 50000" in edit.after and "LINE 50000" in edit.before
    assert edit.after.replace("line 50000", "LINE 50000") == edit.before
