"""Set one top-level key of a JSON-with-comments document (VS Code's settings.json) by a
minimal text edit: the user's comments, order, formatting and other settings stay as they
were. Rewriting the file through `json` would drop the comments VS Code allows there.

The edit is checked before it is returned: the result, parsed, must equal the original
plus the one key, or JsoncError is raised and nothing should be written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

PUNCTUATION = "{}[]:,"
LITERAL_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.")
DEFAULT_INDENT = "    "  # VS Code's own (editor.tabSize 4, spaces)


class JsoncError(ValueError):
    """The document is not JSON with comments, or its top level is not an object."""


@dataclass(frozen=True)
class Token:
    kind: str  # one of PUNCTUATION, "string" or "literal"
    start: int
    end: int


@dataclass(frozen=True)
class Member:
    key: str
    key_start: int
    value_start: int
    value_end: int


def tokenize(text: str) -> list[Token]:
    """The tokens of `text`, comments and whitespace left out."""
    tokens: list[Token] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char.isspace():
            i += 1
        elif text.startswith("//", i):
            newline = text.find("\n", i)
            i = len(text) if newline < 0 else newline + 1
        elif text.startswith("/*", i):
            close = text.find("*/", i + 2)
            if close < 0:
                raise JsoncError(f"a comment is not closed ({_where(text, i)})")
            i = close + 2
        elif char == '"':
            end = _string_end(text, i)
            tokens.append(Token("string", i, end))
            i = end
        elif char in PUNCTUATION:
            tokens.append(Token(char, i, i + 1))
            i += 1
        elif char in LITERAL_CHARS:
            end = i
            while end < len(text) and text[end] in LITERAL_CHARS:
                end += 1
            tokens.append(Token("literal", i, end))
            i = end
        else:
            raise JsoncError(f"unexpected {char!r} ({_where(text, i)})")
    return tokens


def _string_end(text: str, start: int) -> int:
    i = start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
        elif text[i] == '"':
            return i + 1
        elif text[i] == "\n":
            break
        else:
            i += 1
    raise JsoncError(f"a string is not closed ({_where(text, start)})")


def _where(text: str, offset: int) -> str:
    line = text.count("\n", 0, offset) + 1
    return f"line {line}, column {offset - text.rfind(chr(10), 0, offset)}"


def loads(text: str) -> Any:
    """Parse JSON with comments and trailing commas, as VS Code reads settings.json."""
    tokens = tokenize(text)
    kept = [
        text[token.start : token.end]
        for index, token in enumerate(tokens)
        if not (token.kind == "," and index + 1 < len(tokens) and tokens[index + 1].kind in "}]")
    ]
    try:
        return json.loads(" ".join(kept), strict=False)  # VS Code allows raw tabs in strings
    except json.JSONDecodeError as exc:
        raise JsoncError(f"not valid JSON with comments: {exc.msg}") from None


def set_top_level_key(text: str, key: str, value: Any) -> str:
    """`text` with `key` set to `value` in its top-level object: the last existing member
    of that name gets the new value, else a member is added at the end. An empty document
    (whitespace and comments only) becomes an object with that one member."""
    before = loads(text) if tokenize(text) else {}
    if not isinstance(before, dict):
        raise JsoncError("the top level is not an object ({ ... })")
    tokens = tokenize(text)
    encoded = json.dumps(value)
    if not tokens:
        lead = text.rstrip()
        member = f"{DEFAULT_INDENT}{json.dumps(key)}: {encoded}"
        edited = (lead + "\n" if lead else "") + "{\n" + member + "\n}\n"
    else:
        members, close = _members(text, tokens)
        existing = [member for member in members if member.key == key]
        if existing:
            last = existing[-1]
            edited = text[: last.value_start] + encoded + text[last.value_end :]
        else:
            edited = _append_member(text, tokens, members, close, f"{json.dumps(key)}: {encoded}")
    after = loads(edited)
    if after != {**before, key: value}:
        raise JsoncError("the edit would change more than the one setting")  # a bug: refuse
    return edited


def _members(text: str, tokens: list[Token]) -> tuple[list[Member], int]:
    """The top-level object's members, and the index of its closing `}` token."""
    if tokens[0].kind != "{":
        raise JsoncError("the top level is not an object ({ ... })")
    members: list[Member] = []
    i = 1
    while tokens[i].kind != "}":
        key_token = tokens[i]
        if key_token.kind != "string" or tokens[i + 1].kind != ":":
            raise JsoncError(f'expected a member, "key": value ({_where(text, key_token.start)})')
        value_end_index = _skip_value(tokens, i + 2)
        key = json.loads(text[key_token.start : key_token.end])
        value_start, value_end = tokens[i + 2].start, tokens[value_end_index - 1].end
        members.append(Member(key, key_token.start, value_start, value_end))
        i = value_end_index + 1 if tokens[value_end_index].kind == "," else value_end_index
    return members, i


def _skip_value(tokens: list[Token], i: int) -> int:
    """The index just past the value that starts at tokens[i]."""
    depth = 0
    while True:
        kind = tokens[i].kind
        if kind in "{[":
            depth += 1
        elif kind in "}]":
            depth -= 1
        i += 1
        if depth == 0:
            return i


def _append_member(
    text: str, tokens: list[Token], members: list[Member], close: int, member: str
) -> str:
    """Adds `member` as the object's last, on its own line, indented like the others; a
    trailing comma after the last member stays a trailing comma."""
    close_at = tokens[close].start
    previous = tokens[close - 1]
    trailing_comma = bool(members) and previous.kind == ","
    indent = _indent(text, members[0].key_start) if members else DEFAULT_INDENT
    # Insert before the closing brace: after the last newline that precedes it, when
    # only whitespace follows that newline (so comments after the last member stay put).
    gap = text[previous.end : close_at]
    newline = gap.rfind("\n")
    line = f"\n{indent}{member}" + ("," if trailing_comma else "")
    if newline >= 0 and not gap[newline:].strip():
        at = previous.end + newline
    else:
        at, line = close_at, line + "\n"
    if members and not trailing_comma:
        comma_at = members[-1].value_end
        return text[:comma_at] + "," + text[comma_at:at] + line + text[at:]
    return text[:at] + line + text[at:]


def _indent(text: str, offset: int) -> str:
    """The whitespace that starts the line holding `offset` (the first member's indent),
    or the default when the member does not start its line."""
    line_start = text.rfind("\n", 0, offset) + 1
    line = text[line_start:offset]
    return line if line and not line.strip() else DEFAULT_INDENT
