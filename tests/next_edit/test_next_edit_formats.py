"""Every prompt format: cache-aware while the user types (measured in the packaged
model's tokens), fail-closed parsing, escaping of user text, bad input."""

from __future__ import annotations

import pytest
from next_edit_samples import SOURCE, typing_session
from shadowtab.inference import LlamaCppEngine
from shadowtab.inference.next_edit.events import edit_context
from shadowtab.inference.next_edit.formats import (
    FORMATS,
    FinishReason,
    Format,
    choose_format,
    get_format,
    stop_strings,
)
from shadowtab.inference.next_edit.formats.base import ESCAPE
from shadowtab.inference.next_edit.situation import EditInProgress, Situation

MIN_REUSE = 0.98


def finish_of(fmt: Format) -> FinishReason:
    """How a complete answer of this format ends."""
    return "eos" if "eos" in fmt.complete_on else "stop"


def common_prefix(a: list[int], b: list[int]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_typing_a_line_reuses_at_least_98_percent_of_the_prompt(
    name: str, engine: LlamaCppEngine
) -> None:
    """The KV cache serves the longest common token prefix of consecutive prompts (in
    the packaged model's tokens, control strings parsed as the engine parses prompts)."""
    fmt = get_format(name)
    previous: list[int] = []
    shares = []
    for text, cursor, edits in typing_session():
        context = edit_context(edits, "m.py", text, cursor)
        rendered = fmt.render(Situation("m.py", text, cursor, context.in_progress, context.past))
        assert rendered is not None
        tokens = engine.tokenize(rendered.prompt, special=True)
        if previous:
            shares.append(common_prefix(previous, tokens) / len(tokens))
        previous = tokens
    assert min(shares) >= MIN_REUSE, (name, min(shares), len(previous))


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_the_draft_is_the_region_now(name: str) -> None:
    fmt = get_format(name)
    text, cursor, edits = typing_session()[5]
    context = edit_context(edits, "m.py", text, cursor)
    rendered = fmt.render(Situation("m.py", text, cursor, context.in_progress, context.past))
    assert rendered is not None
    region = text[rendered.region_start : rendered.region_end]
    assert rendered.region_start <= cursor <= rendered.region_end
    stop = stop_strings(fmt, rendered)
    body = rendered.draft
    for marker in stop:
        body = body.removesuffix(marker)
    # The model's answer when nothing changes parses back to the region.
    finish = finish_of(fmt)
    assert fmt.parse(body, finish) == region


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_answers_that_did_not_end_cleanly_are_no_answer(name: str) -> None:
    fmt = get_format(name)
    assert fmt.parse("x = 1\n", "length") is None
    assert fmt.parse("x = 1\n", "cancelled") is None
    assert fmt.parse("x = 1\n", "unknown") is None
    finish = finish_of(fmt)
    assert fmt.parse("x = 1\n<|im_end|>junk", finish) is None
    if name != "shadowtab":  # shadowtab escapes only SmolLM2's own control strings
        assert fmt.parse("x = <|editable_region_start|>1\n", finish) is None


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_user_text_with_marker_strings_round_trips(name: str) -> None:
    fmt = get_format(name)
    nasty = (
        'MARKERS = ["<|im_end|>", "<jupyter_code>", "<|editable_region_end|>",\n'
        '           "<|file_sep|>", "```", "<|user_cursor_is_here|>"]\n'
    )
    text = SOURCE[:200] + nasty + SOURCE[200:]
    cursor = 200 + 5
    rendered = fmt.render(Situation("m.py", text, cursor))
    assert rendered is not None
    body = rendered.draft
    for marker in stop_strings(fmt, rendered):
        assert marker not in body.removesuffix(marker)  # user text cannot end the answer
        body = body.removesuffix(marker)
    finish = finish_of(fmt)
    assert fmt.parse(body, finish) == text[rendered.region_start : rendered.region_end]
    assert nasty in fmt.parse(body, finish)  # type: ignore[operator]
    # The prompt's control strings are the format's own, never the user's unescaped.
    assert rendered.prompt.count("<|im_end|>") == 0


@pytest.mark.parametrize("name", sorted(FORMATS))
@pytest.mark.parametrize(
    "text,cursor",
    [("", 0), ("", 10), ("x = 1", 99), ("a = '\U0001f600'\n", 6), ("\n\n\n", 1)],
)
def test_bad_positions_and_empty_files_render_or_abstain(name: str, text: str, cursor: int) -> None:
    rendered = get_format(name).render(Situation("m.py", text, cursor))
    assert rendered is not None
    assert 0 <= rendered.region_start <= rendered.region_end <= len(text)


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_a_10_mb_file_gives_a_bounded_prompt(name: str) -> None:
    text = SOURCE * (10_000_000 // len(SOURCE))
    cursor = len(text) // 2
    edit = EditInProgress(cursor, "", "")
    rendered = get_format(name).render(Situation("m.py", text, cursor, edit))
    assert rendered is not None and len(rendered.prompt) < 20_000
    one_line = "x" * 10_000_000
    assert get_format(name).render(Situation("m.py", one_line, 5_000_000)) is None


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_text_holding_the_escape_character_is_not_rendered(name: str) -> None:
    assert get_format(name).render(Situation("m.py", f"a{ESCAPE}b\n", 0)) is None


def test_the_format_follows_the_config_then_the_adapter() -> None:
    assert choose_format(None, None).name == "generic"
    assert choose_format("auto", "shadowtab").name == "shadowtab"
    assert choose_format("zeta", "shadowtab").name == "zeta"
    with pytest.raises(ValueError, match="known"):
        choose_format("nope", None)


def test_the_continuation_prompt_begins_as_the_next_edit_prompt(engine: LlamaCppEngine) -> None:
    """Ghost text's fallback shares the next-edit prompt's first section in the KV
    cache: in tokens, all but the region's lines up to the cursor are common."""
    fmt = get_format("shadowtab")
    for text, cursor, edits in typing_session()[::6]:
        context = edit_context(edits, "m.py", text, cursor)
        situation = Situation("m.py", text, cursor, context.in_progress, context.past)
        rendered, continuation = fmt.render(situation), fmt.continuation(situation)
        assert rendered is not None and continuation is not None
        assert continuation.endswith(text[rendered.region_start : cursor])
        head = continuation[: len(continuation) - (cursor - rendered.region_start)]
        assert rendered.prompt.startswith(head)
        ours = engine.tokenize(continuation, special=True)
        theirs = engine.tokenize(rendered.prompt, special=True)
        tail = engine.tokenize(text[rendered.region_start : cursor])
        assert common_prefix(ours, theirs) >= len(ours) - len(tail) - 2


@pytest.mark.parametrize("name", sorted(set(FORMATS) - {"shadowtab"}))
def test_other_formats_leave_the_continuation_its_own_prompt(name: str) -> None:
    text, cursor, edits = typing_session()[0]
    context = edit_context(edits, "m.py", text, cursor)
    situation = Situation("m.py", text, cursor, context.in_progress, context.past)
    assert get_format(name).continuation(situation) is None
