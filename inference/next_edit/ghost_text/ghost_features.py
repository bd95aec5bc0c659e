"""What the ghost-text gate knows of one cut of a plain continuation: the model's token
probabilities up to the cut (and just after it), whether the open file's own repetition
agrees, whether the names it writes exist, whether the cursor is in a comment or string.

Every cut point is a token boundary of the continuation: the shown text is what the
completion source would show had decoding stopped there (re-joined with the rest of the
line, rejoin.py). Work is bounded whatever the file's size: names are looked up in a
window of text around the cursor."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .. import lexing
from ..formats.base import unescape
from ..token_confidence import TokenTrace
from . import repetition
from .rejoin import rejoined, rest_of_line

# The order of the gate file's weights (a gate fitted on another list does not load).
FEATURES = (
    "min_logp",  # the least likely token up to the cut
    "mean_logp",
    "first_logp",
    "last_logp",
    "next_logp",  # the token after the cut (0: the model ended the line there)
    "model_ended",  # the cut is where the model itself ended the line
    "min_margin",  # the smallest top-1/top-2 probability margin up to the cut
    "log_chars",
    "log_tokens",
    "repetition_agrees",  # the file's own continuation and this cut agree
    "repetition_disagrees",
    "log_match",  # how long the repetition's match is (0: none)
    "unknown_names",  # whole names it writes that occur nowhere near the cursor
    "unknown_partial",  # it ends inside a name that no nearby name starts with
    "in_comment",
    "in_string",
    "mid_word",  # the cursor is inside a word being typed
    "space_after_space",  # it starts with a space the user has just typed
    "rest_of_line",  # text follows the cursor on its line
    "log_typed",  # how much of the line is typed
)
NAME_WINDOW_CHARS = 50_000  # each side of the cursor: names are looked up here only
REPETITION_MIN_MATCH = 8  # shorter than repetition.py's own: here it is evidence, not an answer
_NAME = re.compile(r"[A-Za-z_]\w*")


@dataclass(frozen=True)
class Cut:
    """The continuation cut after `tokens` tokens: `text` is what ghost text shows."""

    tokens: int
    text: str


@dataclass(frozen=True)
class Surroundings:
    """What the features need of the file, computed once per request. `window`: the
    text around the cursor where names are looked up, without the word being typed (so
    that it cannot vouch for itself), and the project's code the prompt holds (a name
    the model read there is known); `looked_up`: names already looked up there."""

    text: str
    cursor: int
    path: str
    repetition: repetition.Repetition | None
    region: lexing.Region
    typed_word: str
    window: str
    looked_up: dict[str, bool] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        text: str,
        cursor: int,
        path: str,
        others: Mapping[str, str],
        context: Sequence[str] = (),
    ) -> Surroundings:
        """`others`: the other open files' texts; `context`: the prompt's snippets of the
        project (both are where the file's repetition is looked for)."""
        cursor = min(max(cursor, 0), len(text))
        sources = repetition.searched(others, context)
        found = repetition.continuation(text, cursor, sources, REPETITION_MIN_MATCH)
        start = cursor
        while start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
            start -= 1
        low = max(0, cursor - NAME_WINDOW_CHARS)
        window = " ".join((text[low:start], text[cursor : cursor + NAME_WINDOW_CHARS], *context))
        region = region_at(text, cursor, path)
        return cls(text, cursor, path, found, region, text[start:cursor], window)

    def occurs(self, name: str, whole: bool) -> bool:
        """Whether `name` occurs in the window as a whole name (or, not `whole`, as the
        start of one)."""
        key = name + ("" if whole else "*")
        if key not in self.looked_up:
            pattern = r"(?<!\w)" + re.escape(name) + (r"(?!\w)" if whole else "")
            self.looked_up[key] = re.search(pattern, self.window) is not None
        return self.looked_up[key]


def cuts(generated: str, trace: TokenTrace, rest: str, finished: bool) -> list[Cut]:
    """Every token boundary with something to show, shortest first. Before the last
    token a cut is a finished prefix (decoding stopped there); at the last it is as
    finished as the model left it."""
    found = []
    for count, end in enumerate(trace.offsets, start=1):
        at_end = count == len(trace.offsets)
        cut = not at_end or not finished  # decoding stopped it before its end of line
        text = rejoined(unescape(generated[:end]), rest, finished or not at_end, cut)
        if text is not None and text.strip():
            found.append(Cut(count, text))
    return found


def features(cut: Cut, trace: TokenTrace, finished: bool, around: Surroundings) -> list[float]:
    """FEATURES' values for one cut, in order."""
    probs = trace.probs[: cut.tokens]
    logs = [math.log(max(p, 1e-9)) for p in probs]
    ended = finished and cut.tokens == len(trace.probs)
    after = 0.0 if ended or cut.tokens >= len(trace.probs) else _log(trace.probs[cut.tokens])
    margins = trace.margins[: cut.tokens] if trace.margins is not None else probs
    agrees, disagrees = _agreement(cut.text, around.repetition)
    unknown, partial = _unknown_names(cut.text, around)
    line_start = around.text.rfind("\n", 0, around.cursor) + 1
    typed = around.text[line_start : around.cursor].strip()
    before = around.text[around.cursor - 1 : around.cursor]
    return [
        min(logs),
        sum(logs) / len(logs),
        logs[0],
        logs[-1],
        after,
        float(ended),
        min(margins),
        math.log1p(len(cut.text)),
        math.log1p(cut.tokens),
        agrees,
        disagrees,
        math.log1p(around.repetition.match) if around.repetition is not None else 0.0,
        float(unknown),
        float(partial),
        float(around.region == "comment"),
        float(around.region == "string"),
        float(bool(before) and (before.isalnum() or before == "_")),
        float(before in (" ", "\t") and cut.text[:1] in (" ", "\t")),
        float(bool(rest_of_line(around.text, around.cursor).strip())),
        math.log1p(len(typed)),
    ]


def region_at(text: str, cursor: int, path: str) -> lexing.Region:
    """Whether the cursor is in code, a string or a comment (its line lexed up to it)."""
    language = lexing.language_for(path)
    line_start = text.rfind("\n", 0, cursor) + 1
    block = lexing.BlockState(text, language).region_at(line_start)
    if block != "code":
        return block
    found = lexing.tokens(text, language, line_start, cursor)
    if any(t.kind is lexing.Kind.COMMENT for t in found):
        return "comment"
    last = found[-1] if found else None
    if last is not None and last.kind is lexing.Kind.STRING and last.end == cursor:
        return "string" if _unterminated(last.text.lstrip(language.string_prefix)) else "code"
    return "code"


def _unterminated(string: str) -> bool:
    """A string token the lexer ran to the end of the text: no closing quote yet."""
    quote = string[:3] if string[:3] in ('"""', "'''") else string[:1]
    return (
        len(string) < 2 * len(quote) or not string.endswith(quote) or string.endswith("\\" + quote)
    )


def _log(p: float) -> float:
    return math.log(max(p, 1e-9))


def _agreement(text: str, found: repetition.Repetition | None) -> tuple[float, float]:
    if found is None or not found.text.strip():
        return 0.0, 0.0
    same = text.startswith(found.text) or found.text.startswith(text)
    return (1.0, 0.0) if same else (0.0, 1.0)


def _unknown_names(text: str, around: Surroundings) -> tuple[int, bool]:
    """Whole names the cut writes (the word being typed included) that occur nowhere in
    the window around the cursor, and whether it ends inside a name no nearby name
    starts with."""
    written = around.typed_word + text
    unknown = 0
    partial = False
    for match in _NAME.finditer(written):
        if match.end() <= len(around.typed_word):
            continue  # typed by the user, not written by the model
        if match.end() == len(written):
            partial = not around.occurs(match.group(), whole=False)
        elif not around.occurs(match.group(), whole=True):
            unknown += 1
    return unknown, partial
