"""What a finished edit replaced, as token sequences (for repeat-edit propagation), and
whether another occurrence of the old sequence stands in the same kind of context.

The changed characters are widened to whole tokens (`get_value` -> `get_amount`, not
`value` -> `amount`), and, when that leaves nothing distinctive (`1` -> `2`, an argument
`, b` added after `a`), to the neighbouring tokens until a name of two or more
characters is part of it (`timeout=1`, `foo(a)`): a bare `1` or `)` occurs everywhere and
means nothing in particular.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..lexing import BlockState, Kind, Language, Region, Token, tokens
from .edit_intent import Intent, intent_of, is_import_line

MAX_LINE_CHARS = 1000  # an edit on a longer line (minified code, data) is not propagated
HIT_WINDOW_CHARS = 300  # how much of an occurrence's line is lexed on each side of it
MAX_WIDENING_TOKENS = 6
MEMBER_OPERATORS = frozenset({".", "->", "::", "?."})
_WORD = re.compile(r"\w+|[^\w\s]")


@dataclass(frozen=True)
class Neighbours:
    """The classes of the tokens just before and after a sequence on its line: an
    operator's own text, another token's kind, "" at the line's edge."""

    before: str
    after: str


@dataclass(frozen=True)
class Replacement:
    old: str
    new: str
    site_start: int  # where `new` starts in the edited file's text now
    keep_prefix: int  # leading characters old and new share (the anchor kept)
    keep_suffix: int
    region: Region
    old_tokens: tuple[tuple[Kind, str], ...]
    context: Neighbours
    intent: Intent

    @property
    def member(self) -> bool:
        return self.context.before in MEMBER_OPERATORS

    def minimal_at(self, hit: int) -> tuple[int, int, str]:
        """(start, end, new_text): the change alone, for an occurrence of `old` at hit."""
        end = len(self.new) - self.keep_suffix
        return (
            hit + self.keep_prefix,
            hit + len(self.old) - self.keep_suffix,
            self.new[self.keep_prefix : end],
        )

    def already_applied_at(self, text: str, hit: int) -> bool:
        """True when `old` at hit is part of `new` already there (`x` -> `x + 1` where
        `x + 1` is written)."""
        inner = self.new.find(self.old)
        return inner >= 0 and hit >= inner and text.startswith(self.new, hit - inner)


def find_replacement(
    before: str,
    after: str,
    start: int,
    old_end: int,
    new_end: int,
    language: Language,
    blocks: BlockState | None = None,
) -> Replacement | None:
    """The token-level replacement of before[start:old_end] by after[start:new_end];
    None when it is not one to repeat (several lines, whitespace only, no anchor)."""
    if "\n" in before[start:old_end] or "\n" in after[start:new_end]:
        return None
    line_start = after.rfind("\n", 0, start) + 1
    line_end = _line_end(before, old_end)
    if line_end - line_start > MAX_LINE_CHARS:
        return None
    old_line = tokens(before, language, line_start, line_end)
    new_line = tokens(after, language, line_start, _line_end(after, new_end))
    if is_import_line(old_line):
        return None  # an import list names each thing once
    blocks = blocks or BlockState(after, language)
    region = _edit_region(blocks, line_start, start, old_end, new_end, old_line, new_line)
    if region != "code":
        old_line, new_line = (
            _words(before, line_start, line_end),
            _words(after, line_start, _line_end(after, new_end)),
        )
    delta = len(after) - len(before)
    changed = _token_span(old_line, new_line, start, old_end, delta)
    span = _anchored_span(old_line, *changed)
    if span is None:
        return None
    first, last = span  # before[first:last] is the old sequence
    old, new = before[first:last], after[first : last + delta]
    old_tokens = _token_key(old_line, first, last)
    new_tokens = _token_key(new_line, first, last + delta)
    if old_tokens == new_tokens:
        return None  # whitespace only
    return Replacement(
        old=old,
        new=new,
        site_start=first,
        keep_prefix=changed[0] - first,
        keep_suffix=last - changed[1],
        region=region,
        old_tokens=old_tokens,
        context=_neighbours(old_line, first, last),
        intent=intent_of(before, region, old_tokens, new_tokens, old_line, first, last),
    )


def hit_context(
    text: str, hit: int, replacement: Replacement, language: Language, blocks: BlockState
) -> Neighbours | None:
    """The neighbours of the occurrence of the old sequence at `hit` when it is the same
    token sequence in the same region as the edited one; None otherwise."""
    end = hit + len(replacement.old)
    line_start = text.rfind("\n", 0, hit) + 1
    low = max(line_start, hit - HIT_WINDOW_CHARS)
    high = min(_line_end(text, end), end + HIT_WINDOW_CHARS)
    line = tokens(text, language, low, high)
    region = blocks.region_at(line_start)
    if region == "code":
        region = _region_of(line, hit, end)
    if region != replacement.region:
        return None
    if region != "code":
        line = _words(text, low, high)
    if any(t.start < hit < t.end or t.start < end < t.end for t in line):
        return None  # part of a longer token: `xvalue`, `value_2`
    if _token_key(line, hit, end) != replacement.old_tokens:
        return None
    context = _neighbours(line, hit, end)
    if region == "code" and (context.before in MEMBER_OPERATORS) != replacement.member:
        return None  # an attribute where the edit was on a bare name, or the reverse
    return context


def _line_end(text: str, offset: int) -> int:
    end = text.find("\n", offset)
    return len(text) if end == -1 else end


def _edit_region(
    blocks: BlockState,
    line_start: int,
    start: int,
    old_end: int,
    new_end: int,
    old_line: Sequence[Token],
    new_line: Sequence[Token],
) -> Region:
    """Where the edit happened: "string"/"comment" when the changed characters lie
    inside one such token (its delimiters kept), else "code"."""
    block = blocks.region_at(line_start)
    if block != "code":
        return block
    inside_old = _inside(old_line, start, old_end)
    inside_new = _inside(new_line, start, new_end)
    if inside_old is not None and inside_old == inside_new:
        return inside_old
    return "code"


def _inside(line: Sequence[Token], start: int, end: int) -> Region | None:
    for token in line:
        if token.kind in (Kind.STRING, Kind.COMMENT) and token.start < start <= end < token.end:
            return "string" if token.kind is Kind.STRING else "comment"
    return None


def _region_of(line: Sequence[Token], start: int, end: int) -> Region:
    for token in line:
        if token.kind in (Kind.STRING, Kind.COMMENT) and token.start <= start and end <= token.end:
            return "string" if token.kind is Kind.STRING else "comment"
    return "code"


def _words(text: str, start: int, end: int) -> list[Token]:
    """Words and single punctuation characters: the tokens of prose in strings and
    comments."""
    return [
        Token(
            Kind.NAME if m.group()[0].isalnum() or m.group()[0] == "_" else Kind.OP,
            m.start(),
            m.end(),
            m.group(),
        )
        for m in _WORD.finditer(text, start, end)
    ]


def _token_span(
    old_line: Sequence[Token], new_line: Sequence[Token], start: int, old_end: int, delta: int
) -> tuple[int, int]:
    """(first, last) in the old text: the changed characters widened to whole tokens of
    the old and the new text."""
    first, last = start, old_end
    for token in old_line:
        if token.start < old_end and token.end > start:
            first, last = min(first, token.start), max(last, token.end)
    for token in new_line:
        if token.start < old_end + delta and token.end > start:
            first, last = min(first, token.start), max(last, token.end - delta)
    return first, last


def _anchored_span(old_line: Sequence[Token], first: int, last: int) -> tuple[int, int] | None:
    """The span itself when it holds an anchor; else the enclosing call or bracket
    group (`load(path)` for an argument added to it); else the span widened by
    neighbouring tokens until it holds one."""
    if first != last and _anchored(old_line, first, last):
        return first, last
    if first == last and old_line and not any(t.start >= last for t in old_line):
        # An insertion at the end of the line: only the whole line says where the same
        # insertion belongs (`x = f(a)` + `  # type: ignore`, not after every `f(a)`).
        whole = old_line[0].start, last
        return whole if _anchored(old_line, *whole) else None
    group = _enclosing_group(old_line, first, last)
    if group is not None and _anchored(old_line, *group):
        return group
    insertion_point = last if first == last else None
    for _ in range(MAX_WIDENING_TOKENS):
        if _anchored(old_line, first, last):
            break
        previous = [t for t in old_line if t.end <= first]
        following = [t for t in old_line if t.start >= last]
        if previous:
            first = previous[-1].start
        elif following:
            last = following[0].end
        else:
            return None
    if not _anchored(old_line, first, last):
        return None
    if insertion_point is not None and last == insertion_point:
        # An insertion needs an anchor on its right too: `foo(a` + `, b` alone would
        # also match `foo(a, c)`.
        following = [t for t in old_line if t.start >= last]
        if following:
            last = following[0].end
    return first, last


OPENING, CLOSING = "([{", ")]}"


def _enclosing_group(line: Sequence[Token], first: int, last: int) -> tuple[int, int] | None:
    """The innermost bracket group on the line around [first, last), with the name
    before its opening bracket (the callee); None when there is none."""
    before = [t for t in line if t.end <= first]
    after = [t for t in line if t.start >= last]
    back = _unmatched(before[::-1], CLOSING, OPENING)
    closing = _unmatched(after, OPENING, CLOSING)
    if back is None or closing is None:
        return None
    opening = len(before) - 1 - back
    start = before[opening - 1] if opening > 0 and before[opening - 1].kind is Kind.NAME else None
    return (start or before[opening]).start, after[closing].end


def _unmatched(walk: Sequence[Token], nest: str, unnest: str) -> int | None:
    """The index in `walk` of the first bracket that closes more groups than were
    opened since its start, or None."""
    depth = 0
    for index, token in enumerate(walk):
        if token.kind is Kind.OP and token.text in nest:
            depth += 1
        elif token.kind is Kind.OP and token.text in unnest:
            if depth == 0:
                return index
            depth -= 1
    return None


def _anchored(line: Sequence[Token], first: int, last: int) -> bool:
    return any(
        t.kind is Kind.NAME and len(t.text) >= 2 and first <= t.start and t.end <= last
        for t in line
    )


def _token_key(line: Sequence[Token], first: int, last: int) -> tuple[tuple[Kind, str], ...]:
    return tuple((t.kind, t.text) for t in line if first <= t.start and t.end <= last)


def _neighbours(line: Sequence[Token], first: int, last: int) -> Neighbours:
    previous = [t for t in line if t.end <= first]
    following = [t for t in line if t.start >= last]
    return Neighbours(
        _token_class(previous[-1]) if previous else "",
        _token_class(following[0]) if following else "",
    )


def _token_class(token: Token) -> str:
    return token.text if token.kind is Kind.OP else token.kind.value
