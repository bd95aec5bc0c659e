"""One top-level key of VS Code's settings.json (JSON with comments) set by a minimal
edit: comments, order, formatting and the other settings survive; anything that is not
JSON with comments is refused, never rewritten."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from shadowtab.daemon.cli.vscode.jsonc_edit import JsoncError, loads, set_top_level_key

KEY = "shadowtab.command"
VALUE = "/home/me/.venv/bin/shadowtab"


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("", '{\n    "shadowtab.command": "/home/me/.venv/bin/shadowtab"\n}\n'),
        ("{}", '{\n    "shadowtab.command": "/home/me/.venv/bin/shadowtab"\n}'),
        (
            '{\n\t"editor.fontSize": 14\n}\n',
            '{\n\t"editor.fontSize": 14,\n'
            '\t"shadowtab.command": "/home/me/.venv/bin/shadowtab"\n}\n',
        ),
        (  # comments stay where they were; a trailing comma stays a trailing comma
            '// mine\n{\n  "a": 1, // one\n  /* two */\n  "b": [1, {"c": 2}],\n}\n',
            '// mine\n{\n  "a": 1, // one\n  /* two */\n  "b": [1, {"c": 2}],\n'
            '  "shadowtab.command": "/home/me/.venv/bin/shadowtab",\n}\n',
        ),
        (  # a comment after the last member keeps its line
            '{\n  "a": 1 // one\n}',
            '{\n  "a": 1, // one\n  "shadowtab.command": "/home/me/.venv/bin/shadowtab"\n}',
        ),
        (  # an existing value is replaced in place, its comment kept
            '{\n  "shadowtab.command": "shadowtab", // old\n  "z": null\n}',
            '{\n  "shadowtab.command": "/home/me/.venv/bin/shadowtab", // old\n  "z": null\n}',
        ),
        (  # only comments: an object is added after them
            "// Place your settings in this file\n",
            "// Place your settings in this file\n"
            '{\n    "shadowtab.command": "/home/me/.venv/bin/shadowtab"\n}\n',
        ),
    ],
)
def test_the_edit_is_minimal(before: str, after: str) -> None:
    assert set_top_level_key(before, KEY, VALUE) == after


def test_a_duplicate_key_gets_the_value_where_json_reads_it() -> None:
    edited = set_top_level_key('{"shadowtab.command": "a", "shadowtab.command": "b"}', KEY, VALUE)
    assert edited == '{"shadowtab.command": "a", "shadowtab.command": ' + json.dumps(VALUE) + "}"


def test_a_nested_key_of_the_same_name_is_not_the_setting() -> None:
    edited = set_top_level_key('{"x": {"shadowtab.command": "inner"}}', KEY, VALUE)
    assert loads(edited) == {"x": {KEY: "inner"}, KEY: VALUE}


def test_strings_that_look_like_comments_or_hold_escapes_are_strings() -> None:
    text = '{"url": "http://x//y /* z */", "q": "a \\" // b"}'
    assert loads(set_top_level_key(text, KEY, VALUE)) == {
        "url": "http://x//y /* z */",
        "q": 'a " // b',
        KEY: VALUE,
    }


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("[]", "not an object"),
        ('{"a": 1', "not valid JSON"),
        ('{"a": 1} {}', "not valid JSON"),
        ("{/* open", "comment is not closed"),
        ('{"a": "open', "string is not closed"),
        ("{'a': 1}", "unexpected"),
        ('{"a": 1,,}', "not valid JSON"),
    ],
)
def test_what_is_not_json_with_comments_is_refused(text: str, reason: str) -> None:
    with pytest.raises(JsoncError, match=reason):
        set_top_level_key(text, KEY, VALUE)


settings_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)


@given(
    settings=st.dictionaries(st.text(max_size=12), settings_values, max_size=6),
    indent=st.sampled_from([None, 2, 4, "\t"]),
    comment=st.booleans(),
)
def test_any_settings_object_gets_the_key_and_keeps_the_rest(
    settings: dict[str, Any], indent: int | str | None, comment: bool
) -> None:
    text = json.dumps(settings, indent=indent)
    if comment:
        text = "// my settings\n" + text + "\n/* end */\n"
    edited = set_top_level_key(text, KEY, VALUE)
    assert loads(edited) == {**settings, KEY: VALUE}
    assert edited.startswith("// my settings") == comment
    assert set_top_level_key(edited, KEY, VALUE) == edited  # a second run changes nothing
