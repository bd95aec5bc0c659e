"""What kind of change a replacement is, for propagation's confidence: renaming a name
where it is defined implies renaming its uses; changing one use, a value or some prose
implies little about the others (on the training split of the edit corpora those were
most of propagation's wrong suggestions).
"""

from __future__ import annotations

import keyword
from collections.abc import Sequence
from typing import Literal

from ..lexing import Kind, Region, Token

Intent = Literal[
    "rename_definition", "rename_use", "swap", "text", "insertion", "deletion", "replacement"
]

# Tokens before a name that make that place its definition.
DEFINING_WORDS = frozenset(
    [
        "def",
        "class",
        "import",
        "as",
        "for",
        "global",
        "nonlocal",
        "function",
        "let",
        "const",
        "var",
        "fn",
        "struct",
        "type",
        "interface",
        "enum",
        "func",
        "val",
    ]
)
# Tokens after a name that make that place an assignment to it.
ASSIGNING = frozenset(
    ["=", ":=", "+=", "-=", "*=", "/=", "//=", "%=", "|=", "&=", "^=", ">>=", "<<=", "**="]
)
# Lines whose first token makes them imports: their names are listed once per file.
IMPORT_WORDS = frozenset({"import", "from", "use", "using", "#"})
SIGNATURE_WORDS = frozenset({"def", "function", "fn", "func", "class"})


def is_import_line(line: Sequence[Token]) -> bool:
    return bool(line) and line[0].kind is not Kind.COMMENT and line[0].text in IMPORT_WORDS


def intent_of(
    before: str,
    region: Region,
    old_tokens: Sequence[tuple[Kind, str]],
    new_tokens: Sequence[tuple[Kind, str]],
    line: Sequence[Token],
    first: int,
    last: int,
) -> Intent:
    """`line`: the old text's tokens of the edited line; before[first:last] the old
    sequence."""
    if region != "code":
        return "text"
    if not (_one_name(old_tokens) and _one_name(new_tokens)):
        return _sequence_intent(old_tokens, new_tokens)
    old, new = old_tokens[0][1], new_tokens[0][1]
    if keyword.iskeyword(old) or keyword.iskeyword(new):
        return "swap"  # True -> None, and -> or: a value or an operator, not a name
    if _occurs_as_word(before, new):
        return "swap"  # the new name exists already: this use now means another thing
    return "rename_definition" if _defines(line, first, last) else "rename_use"


def _sequence_intent(
    old_tokens: Sequence[tuple[Kind, str]], new_tokens: Sequence[tuple[Kind, str]]
) -> Intent:
    """Insertion or deletion when one token sequence is the other with tokens added."""
    shorter, longer = sorted((list(old_tokens), list(new_tokens)), key=len)
    prefix = 0
    while prefix < len(shorter) and shorter[prefix] == longer[prefix]:
        prefix += 1
    if shorter[prefix:] == longer[len(longer) - len(shorter) + prefix :]:
        return "insertion" if len(new_tokens) > len(old_tokens) else "deletion"
    return "replacement"


def _occurs_as_word(text: str, word: str, max_checks: int = 64) -> bool:
    """Whether `word` occurs in `text` as a whole word: str.find (C speed; a regex with
    look-arounds is far slower on a large file), at most `max_checks` occurrences looked
    at (after that many inside longer words, it is taken as present)."""
    at = text.find(word)
    for _ in range(max_checks):
        if at == -1:
            return False
        end = at + len(word)
        if not (at and _is_word_char(text[at - 1])) and not (
            end < len(text) and _is_word_char(text[end])
        ):
            return True
        at = text.find(word, at + 1)
    return at != -1


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def _one_name(sequence: Sequence[tuple[Kind, str]]) -> bool:
    return len(sequence) == 1 and sequence[0][0] is Kind.NAME


def _defines(line: Sequence[Token], first: int, last: int) -> bool:
    previous = [t for t in line if t.end <= first]
    following = [t for t in line if t.start >= last]
    if previous and previous[-1].text in DEFINING_WORDS:
        return True
    if following and following[0].text in ASSIGNING:
        return True
    return bool(line) and line[0].text in SIGNATURE_WORDS  # a parameter
