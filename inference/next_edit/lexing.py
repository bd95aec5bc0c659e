"""A small, line-local lexer for repeat-edit propagation: token kinds and whether an
offset lies in code, a string or a comment.

Why not `tokenize` (or pygments) on the whole file: propagation answers in milliseconds
next to every keystroke, on files that are half edited (so often not valid Python) and
may be 10 MB. `tokenize` needs a valid file read from its first line and takes seconds on
a big one. This lexer reads only the line around an occurrence; multi-line strings and
block comments are found by counting their delimiters before that line (C-speed
`str.count`, incrementally), which is exact for well-formed code and a fair guess
otherwise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import Literal

Region = Literal["code", "string", "comment"]


class Kind(Enum):
    NAME = "name"
    NUMBER = "number"
    STRING = "string"
    COMMENT = "comment"
    OP = "op"


@dataclass(frozen=True)
class Token:
    kind: Kind
    start: int  # str offsets into the text that was lexed
    end: int
    text: str


@dataclass(frozen=True)
class Language:
    """What the lexer needs to know of a language."""

    name: str
    line_comments: tuple[str, ...]
    # (open, close) of strings and comments that may span lines
    block_strings: tuple[tuple[str, str], ...]
    block_comments: tuple[tuple[str, str], ...]
    string_prefix: str  # letters allowed before a quote (Python's r, b, f, u)


PYTHON = Language("python", ("#",), (('"""', '"""'), ("'''", "'''")), (), "rRbBfFuU")
C_LIKE = Language("c-like", ("//",), (("`", "`"),), (("/*", "*/"),), "")
SHELL_LIKE = Language("shell-like", ("#",), (), (), "")
GENERIC = Language("generic", (), (), (), "")

_BY_EXTENSION = {
    **dict.fromkeys(("py", "pyi", "pyw"), PYTHON),
    **dict.fromkeys(
        ("c", "h", "cc", "cpp", "hpp", "cs", "java", "js", "jsx", "ts", "tsx", "go", "rs"),
        C_LIKE,
    ),
    **dict.fromkeys(("kt", "swift", "scala", "dart", "php", "lua"), C_LIKE),
    **dict.fromkeys(("sh", "bash", "zsh", "rb", "pl", "r", "toml", "yaml", "yml"), SHELL_LIKE),
}


def language_for(path: str) -> Language:
    _, dot, extension = path.rpartition(".")
    return _BY_EXTENSION.get(extension.lower(), GENERIC) if dot else GENERIC


_OPERATORS = sorted(
    [
        "**=",
        "//=",
        ">>=",
        "<<=",
        "...",
        "->",
        ":=",
        "==",
        "!=",
        "<=",
        ">=",
        "**",
        "//",
        "<<",
        ">>",
        "+=",
        "-=",
        "*=",
        "/=",
        "%=",
        "&=",
        "|=",
        "^=",
        "&&",
        "||",
        "::",
        "=>",
        "++",
        "--",
        "?.",
    ],
    key=len,
    reverse=True,
)


def _pattern(language: Language) -> re.Pattern[str]:
    comments = [re.escape(c) + r"[^\n]*" for c in language.line_comments]
    comments += [
        re.escape(o) + r"[\s\S]*?(?:" + re.escape(c) + "|$)" for o, c in language.block_comments
    ]
    strings = [
        re.escape(o) + r"[\s\S]*?(?:" + re.escape(c) + "|$)" for o, c in language.block_strings
    ]
    prefix = f"[{language.string_prefix}]{{0,2}}" if language.string_prefix else ""
    strings = [prefix + s for s in strings] + [
        prefix + r'"(?:\\.|[^"\\\n])*(?:"|$)',
        prefix + r"'(?:\\.|[^'\\\n])*(?:'|$)",
    ]
    parts = [
        rf"(?P<comment>{'|'.join(comments)})" if comments else None,
        rf"(?P<string>{'|'.join(strings)})",
        r"(?P<number>\d[\w.]*)",
        r"(?P<name>[^\W\d]\w*)",
        rf"(?P<op>{'|'.join(re.escape(o) for o in _OPERATORS)}|[^\s\w])",
    ]
    return re.compile("|".join(p for p in parts if p), re.MULTILINE)


_PATTERNS = {lang.name: _pattern(lang) for lang in (PYTHON, C_LIKE, SHELL_LIKE, GENERIC)}


def tokens(text: str, language: Language, start: int = 0, end: int | None = None) -> list[Token]:
    """The tokens of text[start:end] (whitespace skipped), offsets into `text`."""
    stop = len(text) if end is None else end
    found = []
    for match in _PATTERNS[language.name].finditer(text, start, stop):
        kind = Kind(match.lastgroup or "op")
        found.append(Token(kind, match.start(), match.end(), match.group()))
    return found


class RunningCount:
    """text.count(needle, 0, offset) for offsets asked in any order, counted from the
    nearest offset asked before: queries that move outwards from one place (in both
    directions at once) cost O(distance moved), not O(offset) each."""

    MAX_CHECKPOINTS = 4

    def __init__(self, text: str, needle: str) -> None:
        self._text = text
        self._needle = needle
        self._checkpoints: list[tuple[int, int]] = [(0, 0)]  # (offset, count before it)

    def before(self, offset: int) -> int:
        index = min(
            range(len(self._checkpoints)), key=lambda i: abs(self._checkpoints[i][0] - offset)
        )
        at, count = self._checkpoints[index]
        if offset >= at:
            count += self._text.count(self._needle, at, offset)
        else:
            count -= self._text.count(self._needle, offset, at)
        if len(self._checkpoints) < self.MAX_CHECKPOINTS:
            self._checkpoints.append((offset, count))
        else:
            self._checkpoints[index] = (offset, count)
        return count


class BlockState:
    """Whether a line starts inside a multi-line string or block comment, by counting
    their delimiters before it (a delimiter inside a one-line string or a comment fools
    it; that is the price of not lexing the whole file)."""

    def __init__(self, text: str, language: Language) -> None:
        string: Region = "string"
        comment: Region = "comment"
        pairs = [(o, c, string) for o, c in language.block_strings]
        pairs += [(o, c, comment) for o, c in language.block_comments]
        self._pairs = [
            (RunningCount(text, opener), RunningCount(text, closer), opener == closer, region)
            for opener, closer, region in pairs
        ]

    def region_at(self, offset: int) -> Region:
        for opened, closed, same, region in self._pairs:
            count = opened.before(offset)
            inside = count % 2 == 1 if same else count > closed.before(offset)
            if inside:
                return region
        return "code"
