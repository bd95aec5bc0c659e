"""Prompt layouts keep their prefix stable while the user types, and the minimal-edit
logic lives in test_next_edit_edits.py."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from shadowtab.inference.next_edit.prompts import (
    RecentEdit,
    completion_prompt,
    editable_region,
    line_of,
    line_starts,
    next_edit_prompt,
)

SOURCE = "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(100))


def common_prefix(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def test_typing_only_appends_to_the_completion_prompt() -> None:
    cursor = SOURCE.index("return x + 50") + len("return x")
    before = completion_prompt("m.py", SOURCE, cursor)
    typed = SOURCE[:cursor] + " *" + SOURCE[cursor:]
    after = completion_prompt("m.py", typed, cursor + 2)
    assert after == before + " *"


def test_next_edit_prompt_keeps_its_stable_part_while_typing_in_the_region() -> None:
    cursor = SOURCE.index("return x + 50")
    before = next_edit_prompt("m.py", SOURCE, cursor)
    typed = SOURCE[:cursor] + "y" + SOURCE[cursor:]
    after = next_edit_prompt("m.py", typed, cursor + 1, [RecentEdit("m.py", "", "y")])
    shared = common_prefix(before.prompt, after.prompt)
    assert shared >= before.prompt.index("### Recent edits")
    assert before.draft.startswith(SOURCE[before.region_start : before.region_end])


def test_editable_region_is_whole_lines_around_the_cursor() -> None:
    cursor = SOURCE.index("return x + 7")
    start, end = editable_region(SOURCE, cursor)
    assert start <= cursor <= end
    assert start == 0 or SOURCE[start - 1] == "\n"
    assert end == len(SOURCE) or SOURCE[end] == "\n"


@given(st.text(alphabet="ab\n", max_size=40), st.integers(min_value=0, max_value=40))
def test_line_of_matches_counting_newlines(text: str, offset: int) -> None:
    offset = min(offset, len(text))
    assert line_of(line_starts(text), offset) == text.count("\n", 0, offset)


def test_noise_filter_drops_whitespace_changes_and_unrelated_rewrites() -> None:
    from shadowtab.inference.next_edit.filters import is_noise

    old = "def f(x):\n    return x + 1\n"
    assert is_noise(old, "def f(x):\n        return x + 1\n")
    assert is_noise(old, "The user asked for three bullet points in lowercase.\n")
    assert not is_noise(old, "def f(x):\n    return x + 2\n")
