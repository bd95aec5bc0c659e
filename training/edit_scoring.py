"""Is a suggestion a step toward the commit? Insert/delete (Indel) distance on
characters: a suggestion is correct when the text it produces lies on a shortest
insert/delete path from the current text to the commit's, i.e.
d(current, applied) + d(applied, target) == d(current, target), and it changes
something; the characters it saves are the distance it closes.

That criterion is lenient for short insertions: one counts whenever its characters occur
in order in the text still to write (`old_index` before `index_type, *old_index.args`,
`3` before `(3, 9)`). `strict` also asks that the text up to the end of the change be
the start of one of the mode's exact texts: the suggestion writes what the commit
writes there, contiguously."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rapidfuzz.distance import Indel


@dataclass(frozen=True)
class Verdict:
    correct: bool
    exact: bool
    chars_saved: int  # distance to the commit's text closed (0 unless correct)
    strict: bool = False  # correct, and what it writes is where an exact text writes it


def apply_edit(text: str, start: int, end: int, new_text: str) -> str:
    return text[:start] + new_text + text[end:]


def judge(
    current: str,
    applied: str,
    target: str,
    exact_texts: Sequence[str],
    changed_until: int | None = None,
) -> Verdict:
    """`exact_texts`: the texts that count as reaching the commit's text in this mode
    (the hunk finished; one more hunk done). `changed_until`: where the suggestion's
    change ends in `applied` (start + len(new text)), for `strict`."""
    a, b, c = _trim_common(current, applied, target)
    step = Indel.distance(a, b)
    remaining = Indel.distance(b, c)
    before = Indel.distance(a, c)
    correct = step > 0 and step + remaining == before
    written = applied[:changed_until] if changed_until is not None else None
    strict = correct and written is not None and any(t.startswith(written) for t in exact_texts)
    return Verdict(
        correct, correct and applied in exact_texts, before - remaining if correct else 0, strict
    )


def judge_line(rest: str, cursor: int, start: int, end: int, new_text: str) -> Verdict:
    """Line completion: correct when the suggestion inserts, at the cursor, a non-empty
    prefix of the line's rest (nothing else changed); it saves what it writes."""
    correct = start == end == cursor and bool(new_text) and rest.startswith(new_text)
    saved = len(new_text) if correct else 0
    return Verdict(correct, correct and new_text == rest, saved, correct)


def _trim_common(*texts: str) -> tuple[str, ...]:
    """The texts without the prefix and suffix they all share: distances unchanged,
    the work proportional to what differs, not to the file."""
    shortest = min(len(t) for t in texts)
    prefix = 0
    while prefix < shortest and len({t[prefix] for t in texts}) == 1:
        prefix += 1
    suffix = 0
    while suffix < shortest - prefix and len({t[len(t) - 1 - suffix] for t in texts}) == 1:
        suffix += 1
    return tuple(t[prefix : len(t) - suffix] for t in texts)
