"""Evaluation cases cut from real commits.

- typing: the user deleted the old text of one hunk's changed stretch and typed the
  first part of the new text, stopping where people pause (training/pauses.py: most
  likely after `,;:([{`, least inside a word); the rest is to be predicted.
- next hunk: the first hunk is done; the others are to be predicted.
- line: a line the commit wrote, as a person writes it: the file (the commit's text)
  opened with that line's content gone (its indentation kept), the first part of the
  line typed key by key, cut at a pause; the rest of the line is to be predicted, and
  only ghost text is asked (line completion: item 5 of issue 26).

Hunks are `git diff -U0` ranges, `[old_start, old_len, new_start, new_len]`, 1-based;
a length of 0 means the hunk sits after line `start` (a pure insertion or deletion).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from training.pauses import cut_weight

Mode = Literal["typing", "next_hunk", "line"]
MODES: tuple[Mode, ...] = ("typing", "next_hunk", "line")
MIN_TYPED_STRETCH = 6  # non-space characters of new text: less is not worth predicting
MIN_LINE_CONTENT = 12  # a line mode case's line has at least this many non-space characters
TYPED_SHARE = (0.2, 0.6)  # the cut falls in this share of the new stretch


@dataclass(frozen=True)
class Step:
    """One didChange: text[start:end] (str offsets of the text before it) becomes new."""

    start: int
    end: int
    new_text: str


@dataclass(frozen=True)
class Case:
    mode: Mode
    commit: str
    repo: str
    path: str
    opened: str  # the text the editor opens
    steps: tuple[Step, ...]  # the user's edit, as the editor would send it
    current: str  # the text once the steps are applied
    cursor: int  # where the user's cursor is then (str offset)
    target: str  # the commit's text
    exact_texts: tuple[str, ...]  # what counts as the whole edit in this mode
    done: tuple[tuple[int, int], ...] = ()  # (before, after) of the completed edit's change


@dataclass(frozen=True)
class Hunk:
    old_start: int  # str offsets into before
    old_end: int
    new_text: str


def hunks_of(record: dict[str, Any]) -> list[Hunk]:
    old_lines = record["before"].splitlines(keepends=True)
    new_lines = record["after"].splitlines(keepends=True)
    offsets = [0]
    for line in old_lines:
        offsets.append(offsets[-1] + len(line))
    found = []
    for old_start, old_len, new_start, new_len in record["hunks"]:
        first = old_start - 1 if old_len else old_start
        new_first = new_start - 1 if new_len else new_start
        new_text = "".join(new_lines[new_first : new_first + new_len])
        found.append(Hunk(offsets[first], offsets[first + old_len], new_text))
    return found


def apply_hunks(before: str, hunks: Sequence[Hunk]) -> str:
    text = before
    for hunk in sorted(hunks, key=lambda h: h.old_start, reverse=True):
        text = text[: hunk.old_start] + hunk.new_text + text[hunk.old_end :]
    return text


def typing_case(record: dict[str, Any]) -> Case | None:
    """The first hunk with enough new text to type, cut at a pause."""
    before, hunks = record["before"], hunks_of(record)
    for hunk in hunks:
        old = before[hunk.old_start : hunk.old_end]
        keep = _common_prefix(old, hunk.new_text)
        tail = _common_prefix(old[keep:][::-1], hunk.new_text[keep:][::-1])
        stretch = hunk.new_text[keep : len(hunk.new_text) - tail]
        if len("".join(stretch.split())) < MIN_TYPED_STRETCH:
            continue
        cut = _pause_point(stretch, record["commit"])
        start, end = hunk.old_start + keep, hunk.old_end - tail
        steps = [Step(start, end, "")] if end > start else []
        steps += [Step(start + i, start + i, ch) for i, ch in enumerate(stretch[:cut])]
        current = before[:start] + stretch[:cut] + before[end:]
        done = apply_hunks(before, [hunk])
        return _case(record, "typing", steps, current, start + cut, (done,))
    return None


def next_hunk_case(record: dict[str, Any]) -> Case | None:
    """The first hunk applied as one change (as a paste or a quick edit arrives)."""
    before, hunks = record["before"], hunks_of(record)
    if len(hunks) < 2:
        return None
    first = hunks[0]
    current = apply_hunks(before, [first])
    exact = tuple(apply_hunks(before, [first, other]) for other in hunks[1:])
    steps = [Step(first.old_start, first.old_end, first.new_text)]
    cursor = first.old_start + len(first.new_text.rstrip("\n"))
    done = (
        (first.old_start, first.old_end),
        (first.old_start, first.old_start + len(first.new_text)),
    )
    return _case(record, "next_hunk", steps, current, cursor, exact, done)


def _case(
    record: dict[str, Any],
    mode: Mode,
    steps: Sequence[Step],
    current: str,
    cursor: int,
    exact: tuple[str, ...],
    done: tuple[tuple[int, int], ...] = (),
) -> Case:
    return Case(
        mode=mode,
        commit=record["commit"],
        repo=record["repo"],
        path=record["path"],
        opened=record["before"],
        steps=tuple(steps),
        current=current,
        cursor=cursor,
        target=record["after"],
        exact_texts=exact,
        done=done,
    )


def line_case(record: dict[str, Any]) -> Case | None:
    """The first line the commit wrote with enough content, typed up to a pause."""
    after = record["after"]
    lines = after.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    for _, _, new_start, new_len in record["hunks"]:
        for index in range(new_start - 1, new_start - 1 + new_len):
            if not 0 <= index < len(lines):
                continue
            line = lines[index].rstrip("\r\n")
            content = line.lstrip()
            if len("".join(content.split())) < MIN_LINE_CONTENT:
                continue
            begin = starts[index] + len(line) - len(content)
            opened = after[:begin] + after[begin + len(content) :]
            cut = _pause_point(content, record["commit"])
            steps = [Step(begin + i, begin + i, ch) for i, ch in enumerate(content[:cut])]
            current = after[:begin] + content[:cut] + after[begin + len(content) :]
            case = _case(record, "line", steps, current, begin + cut, (after,))
            return replace(case, opened=opened)
    return None


def line_rest(case: Case) -> str:
    """What is left of the line to write at the case's cursor (line mode)."""
    end = case.target.find("\n", case.cursor)
    rest = case.target[case.cursor : len(case.target) if end < 0 else end]
    return rest.rstrip("\r")


def shortened(case: Case, keystrokes: int) -> Case:
    """At most `keystrokes` typed characters: the first words of the edit."""
    steps = list(case.steps)
    deleting = 1 if steps and steps[0].new_text == "" else 0
    steps = steps[: deleting + keystrokes]
    text = case.opened
    for step in steps:
        text = text[: step.start] + step.new_text + text[step.end :]
    cursor = steps[-1].start + len(steps[-1].new_text)
    return Case(
        case.mode, case.commit, case.repo, case.path, case.opened, tuple(steps), text,
        cursor, case.target, case.exact_texts,
    )  # fmt: skip


def cases(records: Sequence[dict[str, Any]], mode: Mode, count: int) -> list[Case]:
    chosen: list[Case] = []
    make = {"typing": typing_case, "next_hunk": next_hunk_case, "line": line_case}[mode]
    for record in records:
        if len(chosen) >= count:
            break
        case = make(record)
        if case is not None:
            chosen.append(case)
    return chosen


def _pause_point(stretch: str, seed: str) -> int:
    """Where the user stopped typing: a cut in the TYPED_SHARE band of the stretch,
    weighted as training's situations weight it (training/pauses.py)."""
    low = max(1, int(len(stretch) * TYPED_SHARE[0]))
    high = max(low + 1, int(len(stretch) * TYPED_SHARE[1]))
    band = range(low, min(high, len(stretch) - 1) + 1)
    weights = [cut_weight(stretch, cut) for cut in band]
    return random.Random(seed).choices(band, weights=weights)[0]


def _common_prefix(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n
