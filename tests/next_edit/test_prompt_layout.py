"""The ghost-text prompt only grows while the user types (the next-edit formats are
tested in test_next_edit_formats.py, the minimal-edit logic in test_next_edit_edits.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from shadowtab.inference.next_edit.ghost_text.prompts import completion_prompt
from shadowtab.inference.next_edit.text_spans import line_of, line_starts

SOURCE = "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(100))


def test_typing_only_appends_to_the_completion_prompt() -> None:
    cursor = SOURCE.index("return x + 50") + len("return x")
    before = completion_prompt("m.py", SOURCE, cursor)
    typed = SOURCE[:cursor] + " *" + SOURCE[cursor:]
    after = completion_prompt("m.py", typed, cursor + 2)
    assert after == before + " *"


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
