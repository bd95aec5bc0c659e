"""ShadowDocument against a naive reference: random edit sequences, UTF-16 positions
with astral characters, clamping past line and file ends, all three line endings."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from shadowtab.shadow_workspace import (
    EditHistory,
    Position,
    Range,
    ShadowDocument,
    StaleVersion,
    TextChange,
)
from shadowtab.shadow_workspace import line_text as line_text_module
from shadowtab.shadow_workspace.disk import MISSING


# -- the naive reference: scans the whole string every time --------------------------------
def ref_line_starts(text: str) -> list[int]:
    starts, i = [0], 0
    while i < len(text):
        if text[i] == "\r" and text[i + 1 : i + 2] == "\n":
            i += 2
            starts.append(i)
        elif text[i] in "\r\n":
            i += 1
            starts.append(i)
        else:
            i += 1
    return starts


def ref_content_end(text: str, start: int) -> int:
    end = start
    while end < len(text) and text[end] not in "\r\n":
        end += 1
    return end


def ref_offset(text: str, line: int, character: int) -> int:
    starts = ref_line_starts(text)
    if line < 0:
        return 0
    if line >= len(starts):
        return len(text)
    index, units = starts[line], 0
    end = ref_content_end(text, index)
    while index < end:
        width = 2 if ord(text[index]) > 0xFFFF else 1
        if units + width > character:
            break
        units += width
        index += 1
    return index


def ref_position(text: str, offset: int) -> tuple[int, int]:
    starts = ref_line_starts(text)
    line = max(i for i, start in enumerate(starts) if start <= offset)
    start = starts[line]
    end = min(offset, ref_content_end(text, start))
    return line, sum(2 if ord(c) > 0xFFFF else 1 for c in text[start:end])


def ref_apply(text: str, change: TextChange) -> str:
    if change.range is None:
        return change.text
    start = ref_offset(text, change.range.start.line, change.range.start.character)
    end = max(start, ref_offset(text, change.range.end.line, change.range.end.character))
    return text[:start] + change.text + text[end:]


def make_doc(text: str) -> ShadowDocument:
    return ShadowDocument("file:///x.py", Path("/x.py"), text, 0, MISSING, text)


FIXTURE_OK = [HealthCheck.function_scoped_fixture]  # the patched block size holds for all


# -- strategies ---------------------------------------------------------------------------
PIECES = ["a", "bc", " ", "é", "😀", "𝄞x", "\n", "\r\n", "\r", "\t"]
texts = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)
coords = st.integers(min_value=-1, max_value=9)
ranges = st.builds(Range.of, coords, coords, coords, coords)
changes = st.one_of(
    st.builds(TextChange, ranges, texts),
    st.builds(TextChange, st.none(), texts).filter(lambda c: len(c.text) < 6),
)


@pytest.fixture(params=[2, 256], ids=["tiny-blocks", "default-blocks"])
def block_lines(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    """Tiny blocks make random edits split, merge and empty blocks."""
    monkeypatch.setattr(line_text_module, "BLOCK_LINES", request.param)
    return int(request.param)


@settings(max_examples=300, deadline=None, suppress_health_check=FIXTURE_OK)
@given(initial=texts, edits=st.lists(changes, max_size=25))
def test_random_edits_equal_reference(
    block_lines: int, initial: str, edits: list[TextChange]
) -> None:
    doc, expected = make_doc(initial), initial
    for change in edits:
        before = expected
        events = doc.apply([change], None, "user")
        expected = ref_apply(expected, change)
        assert doc.text == expected
        assert doc.line_count == len(ref_line_starts(expected))
        event = events[0]
        assert before[event.offset : event.offset + len(event.old_text)] == event.old_text
        assert (
            ref_offset(before, event.range.start.line, event.range.start.character) == event.offset
        )


@settings(max_examples=200, deadline=None, suppress_health_check=FIXTURE_OK)
@given(text=texts, line=coords, character=st.integers(-2, 12))
def test_positions_match_reference(block_lines: int, text: str, line: int, character: int) -> None:
    doc = make_doc(text)
    assert doc.offset_at(Position(line, character)) == ref_offset(text, line, character)
    offset, clamped = doc._text.locate(line, character)  # the keystroke path's one lookup
    assert clamped == ref_position(text, offset)
    for offset in range(len(text) + 1):
        position = doc.position_at(offset)
        assert (position.line, position.character) == ref_position(text, offset)


def test_astral_characters_count_two_utf16_units() -> None:
    doc = make_doc("a😀b\n𝄞")
    assert doc.offset_at(Position(0, 3)) == 2  # after the emoji: 1 + 2 units
    assert doc.offset_at(Position(0, 2)) == 1  # inside the surrogate pair: before it
    assert doc.position_at(2) == Position(0, 3)
    doc.apply([TextChange(Range.of(0, 1, 0, 3), "")], 1, "user")
    assert doc.text == "ab\n𝄞"
    assert doc.position_at(len(doc.text)) == Position(1, 2)


def test_clamping_like_vscode() -> None:
    doc = make_doc("ab\r\ncd")
    assert doc.offset_at(Position(0, 99)) == 2  # end of the line, before "\r\n"
    assert doc.offset_at(Position(9, 0)) == len(doc.text)  # past the last line: the end
    assert doc.offset_at(Position(-1, 5)) == 0
    doc.apply([TextChange(Range.of(1, 5, 7, 7), "!")], 1, "user")
    assert doc.text == "ab\r\ncd!"


def test_full_change_and_versions() -> None:
    doc = make_doc("old")
    doc.apply([TextChange(None, "new\ntext")], 5, "user")
    assert (doc.text, doc.version, doc.line_count) == ("new\ntext", 5, 2)
    with pytest.raises(StaleVersion):
        doc.apply([TextChange(None, "x")], 4, "user")
    assert doc.text == "new\ntext"


def test_bare_cr_joins_following_lf() -> None:
    doc = make_doc("a\rX\nb")
    doc.apply([TextChange(Range.of(1, 0, 1, 1), "")], 1, "user")
    assert doc.text == "a\r\nb"
    assert doc.line_count == 2


def test_large_file_edit_does_not_resplit(monkeypatch: pytest.MonkeyPatch) -> None:
    """A keystroke on a 10 MB text touches one line: splitting is never called on it all."""
    text = "x = 1  # some words on a line\n" * 350_000
    doc = make_doc(text)
    calls: list[int] = []
    real_split = line_text_module.split_lines

    def counting_split(text: str) -> list[str]:
        calls.append(len(text))
        return real_split(text)

    monkeypatch.setattr(line_text_module, "split_lines", counting_split)
    for i in range(100):
        doc.apply([TextChange(Range.of(200_000 + i, 3, 200_000 + i, 3), "y")], None, "user")
    assert max(calls) < 100
    assert doc.line(200_050).startswith("x =y 1")


@settings(max_examples=200, deadline=None)
@given(initial=texts, edits=st.lists(changes, min_size=1, max_size=15))
def test_coalesced_history_replays_to_the_same_text(initial: str, edits: list[TextChange]) -> None:
    """Replaying the coalesced events (old text -> new text at their offsets) in order
    turns the initial text into the final one: merging never loses or invents a byte."""
    doc, history = make_doc(initial), EditHistory(window_s=60, limit=1000)
    for change in edits:
        for event in doc.apply([change], None, "user"):
            history.record(event)
    text = initial
    for event in history._events:
        assert text[event.offset : event.offset + len(event.old_text)] == event.old_text
        text = text[: event.offset] + event.new_text + text[event.offset + len(event.old_text) :]
    assert text == doc.text


def test_typing_a_word_is_one_event() -> None:
    doc, history = make_doc("def f():\n    pass\n"), EditHistory()
    for i, char in enumerate("return"):
        for event in doc.apply([TextChange(Range.of(1, 4 + i, 1, 4 + i), char)], None, "user"):
            history.record(event)
    for event in doc.apply([TextChange(Range.of(1, 9, 1, 10), "")], None, "user"):
        history.record(event)  # a backspace
    events = history.recent()
    assert len(events) == 1
    assert (events[0].old_text, events[0].new_text, events[0].range.start) == (
        "",
        "retur",
        Position(1, 4),
    )
