"""Ghost text in the middle of a line: the continuation must re-join the rest of the
line; what comes before it is the insertion, and one that never re-joins is dropped,
unless decoding cut it before its own end (a sure start of an insertion)."""

from __future__ import annotations

from next_edit_samples import typing_session
from shadowtab.inference import LlamaCppEngine
from shadowtab.inference.next_edit.candidates import Query
from shadowtab.inference.next_edit.events import edit_context
from shadowtab.inference.next_edit.formats import get_format
from shadowtab.inference.next_edit.ghost_text.completion_source import CompletionSource
from shadowtab.inference.next_edit.ghost_text.rejoin import rejoined, rest_of_line
from shadowtab.inference.next_edit.situation import Situation


def test_at_the_end_of_a_line_the_continuation_stands() -> None:
    assert rejoined("urlparse)", "", finished=True) == "urlparse)"
    assert rejoined("x = 1", "   ", finished=False) == "x = 1"


def test_the_insertion_ends_where_the_rest_of_the_line_is_written_again() -> None:
    assert rejoined("3, 4, 5]", "4, 5]", finished=True) == "3, "
    assert rejoined("name, value)", ")", finished=True) == "name, value"
    # cut by the token limit while writing the rest again: still re-joined
    assert rejoined("3, 4, 5", "4, 5, 6]", finished=False) == "3, "


def test_a_continuation_that_never_rejoins_code_is_dropped() -> None:
    assert rejoined("2],", '", "zope.interface"],', finished=True) is None
    assert rejoined("os", "from mock import patch", finished=True) is None


def test_a_continuation_cut_before_its_end_is_inserted_before_the_rest() -> None:
    # `from sympy.codegen.abst|nodes import List`: the model, sure of "ract_", unsure next
    assert rejoined("ract_", "nodes import List", finished=True, cut=True) == "ract_"
    # the model's own end of line that does not re-join stays a conflict
    assert rejoined("ract_nodes import Tuple", "nodes import List", True, cut=False) is None
    assert rejoined("ract_nodes", "nodes import List", finished=True, cut=True) == "ract_"
    # a cut that starts writing the rest again would duplicate it
    assert rejoined("(x", "(x)", finished=True, cut=True) is None
    assert rejoined("fr", "from mock import patch", finished=True, cut=True) is None


def test_a_chance_match_of_one_or_two_characters_is_not_a_rejoin() -> None:
    # '"' alone matches the start of the rest, but the rest goes on: not re-joined
    assert rejoined('sphinx"', '", "zope"]', finished=True) is None


def test_before_closers_only_a_finished_line_is_an_insertion() -> None:
    assert rejoined("x", ")", finished=True) == "x"
    assert rejoined("x", "):", finished=False) is None


def test_rest_of_line() -> None:
    assert rest_of_line("a(b)\nc", 2) == "b)"
    assert rest_of_line("ab", 2) == ""


def test_the_source_offers_what_comes_before_the_rest_of_the_line(
    engine: LlamaCppEngine,
) -> None:
    """The model continues `print(` with a call and its closing parenthesis, which the
    line already has: the ghost text is the call alone, and the line stays balanced."""
    text = "def area(w, h):\n    return w * h\n\n\n" + "".join(
        f"print(area({a}, {a + 1}))\n" for a in (2, 4, 6)
    )
    text += "print()\n"
    cursor = text.index("print()") + len("print(")
    query = Query(Situation("m.py", text, cursor), n=3)
    found = CompletionSource(lambda: engine).candidates(query)
    assert found, "the packaged model continues this line"
    for candidate in found:
        (edit,) = candidate.edits
        assert (edit.start, edit.end) == (cursor, cursor)
        line = "print(" + edit.new_text + ")"
        assert line.count("(") == line.count(")"), line
        assert 0.0 < candidate.confidence <= 1.0


def test_the_fallback_prefills_only_the_lines_the_next_edit_prompt_lacks(
    engine: LlamaCppEngine,
) -> None:
    """With the next-edit prompt warmed, ghost text's fallback finds its first section in
    the cache (formats/shadowtab.py continuation_prompt)."""
    text, cursor, edits = typing_session()[8]
    context = edit_context(edits, "m.py", text, cursor)
    situation = Situation("m.py", text, cursor, context.in_progress, context.past)
    query = Query(situation, 1)
    fmt = get_format("shadowtab")
    rendered = fmt.render(situation)
    assert rendered is not None
    engine.warm(rendered.prompt)
    source = CompletionSource(lambda: engine, lambda q: fmt.continuation(q.situation))
    prompt = source.prompt(query)
    result = engine.complete(prompt, 8, stop=["\n"])
    lines_up_to_cursor = engine.tokenize(text[rendered.region_start : cursor])
    assert result.stats.evaluated_prompt_tokens <= len(lines_up_to_cursor) + 3
    assert result.stats.prompt_tokens > 4 * result.stats.evaluated_prompt_tokens
