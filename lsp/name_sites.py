"""Which identifiers a suggestion writes, and which of them need resolving: the lexical half
of the name check (name_check.py asks jedi about the sites this module returns).

A suggestion is `new_text` inserted at offset `at` of `text` (ghost text; a next edit is
its replacement inserted into the text without the replaced span). The line around it is
lexed with next_edit.lexing (line-local, tolerant of half-typed code, strings and comments
told apart), and each name the suggestion writes is classed: a keyword, a name being
defined right there (left of `=`, after `def`/`class`/`as`/`for`/`lambda`, a parameter, a
keyword argument, an import, an attribute being assigned) needs nothing; the others are
sites, plain names (resolved in the scope) or members (after a dot)."""

from __future__ import annotations

import keyword
from dataclasses import dataclass

from shadowtab.inference.next_edit.lexing import PYTHON, BlockState, Kind, Token, tokens

# After these a name is being bound: `def f`, `class C`, `... as x`, `global x`.
_BINDS_NEXT = frozenset({"def", "class", "as", "global", "nonlocal"})
_OPEN = frozenset("([{")
_CLOSE = frozenset(")]}")
_TRIPLE = ('"""', "'''")


@dataclass(frozen=True)
class Site:
    """A name the suggestion writes that must resolve. Offsets into the combined text (the
    suggestion inserted); `member`: it follows a dot; `partial`: it reaches the
    suggestion's end, so a prefix of a known name is enough (the model stopped mid-word)."""

    name: str
    start: int
    end: int
    member: bool
    partial: bool


@dataclass(frozen=True)
class Written:
    """The sites to resolve, in order, and the names the lexed lines define (a use
    before its definition is fine inside a comprehension: `[x for x in xs]`)."""

    sites: tuple[Site, ...]
    defined: frozenset[str]


def written_names(text: str, at: int, new_text: str) -> Written:
    """The names `new_text`, inserted at `at` of `text`, writes (see the module doc)."""
    combined = text[:at] + new_text + text[at:]
    end = at + len(new_text)
    start = _lex_start(combined, at, end)
    if start is None:
        return Written((), frozenset())
    stop = combined.find("\n", end)
    found = tokens(combined, PYTHON, start, len(combined) if stop < 0 else stop)
    code = [t for t in found if t.kind in (Kind.NAME, Kind.OP)]
    bound = _bound(combined, code)
    sites = []
    for i, token in enumerate(code):
        if token.kind is not Kind.NAME or token.end <= at or token.start >= end:
            continue
        if i in bound or _is_keyword(token.text):
            continue
        member = i > 0 and code[i - 1].text == "."
        sites.append(Site(token.text, token.start, token.end, member, token.end >= end))
    defined = frozenset(code[i].text for i in bound if not _after_dot(code, i))
    return Written(tuple(sites), defined)


def _lex_start(combined: str, at: int, end: int) -> int | None:
    """Where lexing begins: the start of the cursor's line, or past the close of a
    triple-quoted string that line starts inside; None when that close is not before the
    suggestion's end (the whole suggestion is in the string)."""
    start = combined.rfind("\n", 0, at) + 1
    if BlockState(combined, PYTHON).region_at(start) != "string":
        return start
    closes = [combined.find(q, start) for q in _TRIPLE if combined.count(q, 0, start) % 2]
    close = min((c for c in closes if c >= 0), default=-1)
    return close + 3 if 0 <= close < end else None


def _is_keyword(name: str) -> bool:
    return keyword.iskeyword(name) or keyword.issoftkeyword(name)


def _after_dot(code: list[Token], i: int) -> bool:
    return i > 0 and code[i - 1].text == "."


def _bound(combined: str, code: list[Token]) -> set[int]:
    """Indices of the name tokens that bind a name (or an attribute) right there."""
    bound: set[int] = set()
    for statement in _statements(combined, code):
        bound |= _bound_in(code, statement)
    return bound


def _statements(combined: str, code: list[Token]) -> list[range]:
    """Index ranges of the logical statements: a line break at bracket depth 0, or `;`."""
    ranges, first, depth = [], 0, 0
    for i, token in enumerate(code):
        ends = i > first and (
            "\n" in combined[code[i - 1].end : token.start] or code[i - 1].text == ";"
        )
        if depth <= 0 and ends:
            ranges.append(range(first, i))
            first, depth = i, 0
        depth += (token.text in _OPEN) - (token.text in _CLOSE)
    ranges.append(range(first, len(code)))
    return [r for r in ranges if len(r)]


def _bound_in(code: list[Token], statement: range) -> set[int]:
    head = code[statement.start].text
    names = [i for i in statement if code[i].kind is Kind.NAME]
    if head in ("import", "from"):
        return set(names)  # module paths and imported names: defined by the import itself
    bound = {i for i in names if _binds(code, statement, i)}
    bound |= _targets(code, statement)
    bound |= _between(code, statement, "for", "in")
    bound |= _between(code, statement, "lambda", ":")
    bound |= _parameters(code, statement)
    return bound


def _binds(code: list[Token], statement: range, i: int) -> bool:
    """`def x`, `as x`, `x = `, `f(x=`, `x := `, `obj.x = `, `global a, x`, `x: int`."""
    before = code[i - 1].text if i > statement.start else ""
    after = code[i + 1].text if i + 1 < statement.stop else ""
    if before in _BINDS_NEXT or after in ("=", ":="):
        return True
    if code[statement.start].text in ("global", "nonlocal"):
        return True
    return i == statement.start and after == ":" and code[i].text not in keyword.kwlist


def _targets(code: list[Token], statement: range) -> set[int]:
    """The names left of a statement's `=` at depth 0 (`a, b = ...`, `*rest`), not the
    object of an attribute or a subscript (`a.b = `, `a[i] = ` use `a`)."""
    depth, targets = 0, list[int]()
    for i in statement:
        text = code[i].text
        if depth == 0 and text == "=":
            return {j for j in targets if _plain(code, j)}
        if depth == 0 and text == ":":
            targets = []  # `if a: b = 1` binds b, not a
        depth += (text in _OPEN) - (text in _CLOSE)
        if code[i].kind is Kind.NAME:
            targets.append(i)
    return set()


def _plain(code: list[Token], i: int) -> bool:
    """A name itself, not an object's attribute nor an object being indexed or called."""
    return not _after_dot(code, i) and not _indexed(code, i)


def _indexed(code: list[Token], i: int) -> bool:
    return i + 1 < len(code) and code[i + 1].text in (".", "[", "(")


def _between(code: list[Token], statement: range, opener: str, closer: str) -> set[int]:
    """The names after each `opener` up to its `closer` at the same depth (for targets,
    lambda parameters)."""
    found: set[int] = set()
    depth, open_at = 0, None
    for i in statement:
        token = code[i]
        if token.kind is Kind.NAME and token.text == opener:
            open_at = depth
        elif open_at is not None and depth == open_at and token.text == closer:
            open_at = None
        elif open_at is not None and token.kind is Kind.NAME and _plain(code, i):
            found.add(i)
        depth += (token.text in _OPEN) - (token.text in _CLOSE)
        if open_at is not None and depth < open_at:
            open_at = None
    return found


def _parameters(code: list[Token], statement: range) -> set[int]:
    """`def f(a, b: int = 1, *args, **kw)`: the names right after `(`, `,`, `*`, `**`
    at the parameter list's own depth (annotations and defaults are uses)."""
    i = statement.start
    while i < statement.stop and code[i].text in ("async", "@"):
        i += 1
    if i + 2 >= statement.stop or code[i].text != "def" or code[i + 2].text != "(":
        return set()
    found, depth = set(), 0
    for j in range(i + 2, statement.stop):
        text = code[j].text
        depth += (text in _OPEN) - (text in _CLOSE)
        if depth == 0:
            break
        before = code[j - 1].text
        if code[j].kind is Kind.NAME and depth == 1 and before in ("(", ",", "*", "**"):
            found.add(j)
    return found
