"""Ghost text in the middle of a line: a plain continuation sees only the text before
the cursor, so it tends to rewrite what already follows the cursor. Where the rest of the
line holds code, the continuation must re-join it (write it again, which marks where
the new text ends); the insertion is what comes before. One that never re-joins is a
guess that would duplicate or break the rest of the line, and is not offered, unless
decoding stopped it before its own end of line (at a token the model was unsure of):
then it is the sure start of an insertion, offered before the rest unless it begins by
writing the rest again."""

from __future__ import annotations

CLOSERS = frozenset(")]}>\"'`,;:")
# The shortest overlap that counts as re-joining, unless the rest of the line is shorter:
# a one- or two-character match (a quote, a bracket) is as often chance as intent.
MIN_OVERLAP = 3
# A cut continuation that begins with the rest's first characters is writing the rest
# again, not inserting before it.
REWRITE_PREFIX = 2


def rest_of_line(text: str, cursor: int) -> str:
    end = text.find("\n", cursor)
    return text[cursor : len(text) if end < 0 else end]


def rejoined(continuation: str, rest: str, finished: bool, cut: bool = False) -> str | None:
    """The part of `continuation` to insert before `rest` (the line after the cursor),
    or None when it should not be offered. `finished`: the continuation reached the end
    of its line (not cut by the token limit). `cut`: decoding stopped it before the
    model's own end of line (an unsure token next, or the token limit)."""
    if not rest.strip():
        return continuation
    overlap = _overlap_start(continuation, rest)
    if overlap is not None:
        return continuation[:overlap]
    if all(ch in CLOSERS or ch.isspace() for ch in rest):
        # Only closers follow: text that ends its line without writing them again is an
        # insertion before them (foo(| ) + "x" -> foo(x)).
        return continuation if finished else None
    if cut and not rest.startswith(continuation[:REWRITE_PREFIX]):
        return continuation
    return None


def _overlap_start(continuation: str, rest: str) -> int | None:
    """The first index from which the continuation writes the start of `rest` again (to
    its own end), with at least MIN_OVERLAP characters or all of `rest`."""
    for index in range(len(continuation)):
        tail = continuation[index:]
        if rest.startswith(tail) and (len(tail) >= MIN_OVERLAP or tail == rest):
            return index
    return None
