"""A session's held lines above its cursor: others' typing there reaches its prompts when
they are retaken, its own edits at once; the prompt's region is always the live text."""

from __future__ import annotations

from shadowtab.inference.next_edit.formats.shadowtab import continuation_prompt, render
from shadowtab.inference.next_edit.situation import HeldLines, Situation
from shadowtab.lsp.held_lines import HELD_LINES_ABOVE, HeldAbove
from shadowtab.shadow_workspace import EditEvent, Position, Range

KEY = (1, "file:///a.py")


class Lines:
    """A document's lines, edited as an editor would."""

    def __init__(self, count: int) -> None:
        self.rows = [f"x{i} = {i}\n" for i in range(count)]

    @property
    def line_count(self) -> int:
        return len(self.rows)

    def line(self, index: int) -> str:
        return self.rows[index]

    @property
    def text(self) -> str:
        return "".join(self.rows)

    def edit(self, line: int, new_text: str, end_line: int | None = None) -> EditEvent:
        """Replace lines line..end_line (whole, without the last one's ending) by
        new_text; the event as the shadow records it."""
        end_line = line if end_line is None else end_line
        old = "".join(self.rows[line : end_line + 1])[:-1]
        self.rows[line : end_line + 1] = [row + "\n" for row in new_text.split("\n")]
        rng = Range(Position(line, 0), Position(end_line, len(old.split("\n")[-1])))
        return EditEvent("file:///a.py", 0.0, rng, old, new_text, "user")


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_others_typing_above_shows_when_the_copy_is_retaken() -> None:
    clock, document = Clock(), Lines(100)
    held = HeldAbove(max_age_s=5.0, clock=clock)
    first = held.lines(KEY, document, 80)
    assert first.first_line == 80 - HELD_LINES_ABOVE
    assert "".join(first.lines) == "".join(document.rows[first.first_line : 80])
    document.edit(70, "x70 = 'theirs'")  # another editor: not told as an own edit
    clock.now = 4.0
    assert held.lines(KEY, document, 80) == first  # still the copy
    clock.now = 5.5
    assert "x70 = 'theirs'\n" in held.lines(KEY, document, 80).lines  # retaken


def test_own_edits_reach_the_copy_at_once_and_keep_it_aligned() -> None:
    clock, document = Clock(), Lines(100)
    held = HeldAbove(clock=clock)
    held.lines(KEY, document, 80)
    held.own_edit(KEY, [document.edit(70, "x70 = 'mine'")], document)
    held.own_edit(KEY, [document.edit(10, "a = 1\nb = 2")], document)  # above: lines move
    held.own_edit(KEY, [document.edit(60, "c = 3\nd = 4")], document)  # inside, a line more
    now = held.lines(KEY, document, 82)
    assert "".join(now.lines) == "".join(document.rows[now.first_line : now.first_line + 41])
    assert now.first_line == 80 - HELD_LINES_ABOVE + 1


def test_a_line_count_changed_by_others_or_a_far_cursor_retakes_the_copy() -> None:
    clock, document = Clock(), Lines(100)
    held = HeldAbove(clock=clock)
    first = held.lines(KEY, document, 80)
    document.edit(5, "y = 1\nz = 2")  # another editor adds a line above
    moved = held.lines(KEY, document, 81)
    assert moved.first_line == 81 - HELD_LINES_ABOVE
    assert "".join(moved.lines) == "".join(document.rows[moved.first_line : 81])
    assert moved != first
    assert held.lines(KEY, document, 10).first_line == 0  # the cursor went above the copy


def test_the_prompt_head_takes_the_held_lines_and_the_region_the_live_text() -> None:
    document = Lines(60)
    held = HeldLines(10, tuple(document.rows[10:50]))
    document.rows[30] = "x30 = 'theirs'\n"  # another editor, after the copy
    document.rows[48] = "x48 = 'theirs'\n"  # in the region (3 lines above the cursor's)
    cursor = len("".join(document.rows[:50])) + 2
    now = Situation("a.py", document.text, cursor, held_above=held)
    live = Situation("a.py", document.text, cursor)
    head = continuation_prompt(now)
    assert head is not None and "x30 = 30\n" in head and "x30 = 'theirs'" not in head
    assert "x48 = 'theirs'" in head  # the region is live
    rendered, rendered_live = render(now), render(live)
    assert rendered is not None and rendered_live is not None
    assert rendered.draft == rendered_live.draft  # what the model rewrites: the live text
    assert rendered.prompt.replace("x30 = 30", "x30 = 'theirs'") == rendered_live.prompt
