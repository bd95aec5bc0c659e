"""What the propagation gate knows of one place a finished edit could be repeated: the
kind of edit, how alike the place's line is to the edited one, how far it is, whether
the new text already stands elsewhere (a series of the same change under way), and how
common the old text is (a value such as `True` changed once implies little about the
others).

Work is bounded whatever the file's size: each place costs a look at at most
LINE_WINDOW_CHARS of its line and DISTANCE_WINDOW_CHARS towards the edit (a place
further away counts as that far), and the counts are taken once per edit over at most
COUNT_LIMIT occurrences.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ..lexing import Kind
from .edit_intent import Intent
from .replacement import Neighbours, Replacement

INTENTS: tuple[Intent, ...] = (
    "rename_definition",
    "rename_use",
    "swap",
    "text",
    "insertion",
    "deletion",
    "replacement",
)
# The order of the gate file's weights (a gate fitted on another list does not load).
FEATURES = (
    *(f"intent_{intent}" for intent in INTENTS),
    "same_before",  # the token class before the place is the edited place's
    "same_after",
    "other_file",
    "prose",  # in a comment or a string
    "log_old_chars",
    "log_new_chars",
    "old_is_literal",  # the old tokens are only keywords, numbers or strings (True -> None)
    "partial_token",  # the change keeps part of a token on either side (Tru|e -> Non|e)
    "log_line_distance",
    "log_rank",  # places offered before this one
    "log_old_count",  # occurrences of the old text in the edited file, the place included
    "log_new_count",  # occurrences of the new text besides the edit itself
    "line_similarity",  # the words of the place's line against the edited line's
    "same_indent",
)
COUNT_LIMIT = 200  # occurrences counted, at most (a count saturates there)
LINE_WINDOW_CHARS = 300  # of the place's line on each side (replacement.HIT_WINDOW_CHARS)
DISTANCE_WINDOW_CHARS = 200_000  # lines counted towards the edit within this many chars
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class EditShape:
    """What every place of one edit shares, computed once per edit."""

    replacement: Replacement
    edit_line: str  # the edited line before the edit
    old_count: int
    new_count: int

    @classmethod
    def of(cls, replacement: Replacement, before: str, after: str) -> EditShape:
        site = replacement.site_start
        line_start = before.rfind("\n", 0, site) + 1
        line_end = before.find("\n", site)
        edit_line = before[line_start : len(before) if line_end < 0 else line_end]
        return cls(
            replacement,
            edit_line,
            _count(after, replacement.old),
            max(_count(after, replacement.new) - 1, 0) if replacement.new else 0,
        )


def features(
    shape: EditShape,
    text: str,
    hit: int,
    context: Neighbours,
    rank: int,
    other_file: bool,
) -> list[float]:
    """FEATURES of offering the edit at `hit` of `text` (the place's neighbours
    `context`, `rank` places offered before it)."""
    r = shape.replacement
    line = _line_around(text, hit)
    distance = 0 if other_file else _lines_between(text, r.site_start, hit)
    return [
        *(float(r.intent == intent) for intent in INTENTS),
        float(context.before == r.context.before),
        float(context.after == r.context.after),
        float(other_file),
        float(r.region != "code"),
        math.log1p(len(r.old)),
        math.log1p(len(r.new)),
        float(_is_literal(r)),
        float(r.keep_prefix > 0 and _inside_word(r.old, r.keep_prefix))
        + float(r.keep_suffix > 0 and _inside_word(r.old, len(r.old) - r.keep_suffix)),
        math.log1p(distance),
        math.log1p(rank),
        math.log1p(shape.old_count),
        math.log1p(shape.new_count),
        _similarity(line, shape.edit_line),
        float(_indent(line) == _indent(shape.edit_line)),
    ]


def _line_around(text: str, at: int) -> str:
    """The line holding offset `at`, at most LINE_WINDOW_CHARS of it on each side."""
    low = max(0, at - LINE_WINDOW_CHARS)
    start = text.rfind("\n", low, at) + 1 or low
    end = text.find("\n", at, at + LINE_WINDOW_CHARS)
    return text[start : min(len(text), at + LINE_WINDOW_CHARS) if end < 0 else end]


def _lines_between(text: str, a: int, b: int) -> int:
    """Line breaks between offsets a and b, counted over DISTANCE_WINDOW_CHARS at most."""
    low, high = min(a, b), max(a, b)
    return text.count("\n", low, min(high, low + DISTANCE_WINDOW_CHARS))


def _count(text: str, needle: str) -> int:
    found, at = 0, text.find(needle)
    while at != -1 and found < COUNT_LIMIT:
        found += 1
        at = text.find(needle, at + 1)
    return found


def _is_literal(r: Replacement) -> bool:
    return all(
        kind in (Kind.NUMBER, Kind.STRING) or text in ("True", "False", "None", "null", "nil")
        for kind, text in r.old_tokens
    )


def _inside_word(text: str, at: int) -> bool:
    """Whether offset `at` of `text` falls between two word characters."""
    return 0 < at < len(text) and _word_char(text[at - 1]) and _word_char(text[at])


def _word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def _similarity(a: str, b: str) -> float:
    """Jaccard similarity of the two lines' word sets."""
    words_a, words_b = set(_WORD.findall(a)), set(_WORD.findall(b))
    union = words_a | words_b
    return len(words_a & words_b) / len(union) if union else 0.0


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]
