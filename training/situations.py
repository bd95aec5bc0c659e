"""Editing situations cut out of one commit, each with the region the model should write.

Kinds (see `mine.py` for the mix):
- `typing`: hunks before k done (past edits), hunk k's old text deleted and the start of
  its new text typed (`EditInProgress`); the answer finishes it.
- `next`: hunks before k done, nothing in progress, the cursor where the last edit
  ended; the answer is hunk k, which lies in the region.
- `done`: the whole commit done; the answer is the region as it is.
- `untouched`: nothing done yet and nothing in progress; the answer is the region as is.
- `keep`: hunk k typed in full (still the edit in progress); the answer keeps it, so
  the model learns not to undo what the user just typed.

In every kind the answer also applies the later hunks of the commit that lie wholly
inside the region (what the commit did there); a later hunk that straddles the region's
edge makes the answer ambiguous, and that situation is dropped.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from shadowtab.inference.next_edit.formats.shadowtab import (
    EditInProgress,
    PastEdit,
    RenderedPrompt,
    Situation,
    escape,
    render,
)

from training.commits import Commit
from training.pauses import pick_cut


@dataclass(frozen=True)
class Example:
    kind: str
    prompt: str
    answer: str  # escaped, as the model writes it (without the EOS token)
    draft: str
    eos: bool = True  # the answer ends on EOS (line completions end on their newline)


def _changed_span(old: str, new: str) -> tuple[int, int, int]:
    """(start, old_end, new_end) of the stretch where `new` differs from `old`."""
    start = 0
    limit = min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    tail = 0
    limit = min(len(old), len(new)) - start
    while tail < limit and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    return start, len(old) - tail, len(new) - tail


def _past_edits(commit: Commit, done: int) -> list[PastEdit]:
    texts = [commit.text_with(range(step)) for step in range(done + 1)]
    return [PastEdit(commit.path, texts[i], texts[i + 1]) for i in range(done)]


def _answer(
    commit: Commit, applied: set[int], later: range, now: str, rendered: RenderedPrompt
) -> str | None:
    """The region of text `now` once `applied` and the later hunks inside it are done,
    or None when a later hunk straddles the region's edge."""
    base = commit.text_with(applied)
    head = now[: rendered.region_start]
    tail_len = len(now) - rendered.region_end
    if not base.startswith(head) or not base.endswith(now[rendered.region_end :]):
        return None
    region_end = len(base) - tail_len
    for index in later:
        with_it = commit.text_with(applied | {index})
        start, old_end, _ = _changed_span(base, with_it)
        if old_end <= rendered.region_start or start >= region_end:
            continue  # wholly outside (an insertion on the region's edge too)
        if start < rendered.region_start or old_end > region_end:
            return None
        region_end += len(with_it) - len(base)
        base, applied = with_it, applied | {index}
    return base[rendered.region_start : region_end]


def _example(
    kind: str, commit: Commit, situation: Situation, applied: set[int], later: range
) -> Example | None:
    rendered = render(situation)
    if rendered is None:
        return None
    answer = _answer(commit, applied, later, situation.text, rendered)
    if answer is None:
        return None
    return Example(kind, rendered.prompt, escape(answer), rendered.draft)


@dataclass(frozen=True)
class HalfTyped:
    """Hunk k part typed: the situation and the text once hunk k is finished."""

    situation: Situation
    finished: str


def half_typed(commit: Commit, k: int, cut: int | None, rng: random.Random) -> HalfTyped | None:
    """Hunks before k done, hunk k's old stretch deleted and `cut` characters of its new
    text typed (None: a pause picked by pauses.pick_cut; -1: all of it)."""
    done = commit.text_with(range(k))
    finished = commit.text_with(range(k + 1))
    start, old_end, new_end = _changed_span(done, finished)
    new_text = finished[start:new_end]
    if not new_text.strip():
        return None  # a deletion (or whitespace) is done in one keystroke, not typed
    if cut is None:
        cut = pick_cut(new_text, rng)
    typed = new_text if cut < 0 else new_text[:cut]
    now = done[:start] + typed + done[old_end:]
    edit = EditInProgress(start, done[start:old_end], typed)
    situation = Situation(commit.path, now, start + len(typed), edit, _past_edits(commit, k))
    return HalfTyped(situation, finished)


def typing(commit: Commit, k: int, rng: random.Random) -> Example | None:
    state = half_typed(commit, k, None, rng)
    if state is None:
        return None
    later = range(k + 1, len(commit.hunks))
    return _example("typing", commit, state.situation, set(range(k + 1)), later)


def kept(commit: Commit, k: int, rng: random.Random) -> Example | None:
    """Hunk k just typed in full: the answer keeps it (and makes the later hunks inside
    the region), never the old text back."""
    state = half_typed(commit, k, -1, rng)
    if state is None:
        return None
    later = range(k + 1, len(commit.hunks))
    return _example("keep", commit, state.situation, set(range(k + 1)), later)


def next_hunk(commit: Commit, k: int) -> Example | None:
    """After hunk k-1 is done, with the cursor at its end, the answer holds hunk k."""
    if k < 1:
        return None
    done = commit.text_with(range(k))
    _, _, new_end = _changed_span(commit.text_with(range(k - 1)), done)
    situation = Situation(commit.path, done, new_end, None, _past_edits(commit, k))
    example = _example("next", commit, situation, set(range(k)), range(k, len(commit.hunks)))
    if example is None or example.answer == example.draft:
        return None  # hunk k is outside the region: that is a `done`-like case
    return example


def finished(commit: Commit) -> Example | None:
    count = len(commit.hunks)
    done = commit.text_with(range(count))
    _, _, new_end = _changed_span(commit.text_with(range(count - 1)), done)
    situation = Situation(commit.path, done, new_end, None, _past_edits(commit, count))
    return _example("done", commit, situation, set(range(count)), range(0))


def untouched(commit: Commit, rng: random.Random) -> Example | None:
    """No edit yet, the cursor on a random line away from every hunk."""
    text = commit.text_with(())
    lines = text.splitlines(keepends=True)
    busy: set[int] = set()
    for hunk in commit.hunks:
        busy.update(range(hunk.old - 8, hunk.old + len(hunk.old_lines) + 8))
    free = [line for line in range(len(lines)) if line not in busy]
    if not free:
        return None
    line = rng.choice(free)
    cursor = sum(map(len, lines[:line])) + rng.randint(0, max(0, len(lines[line]) - 1))
    situation = Situation(commit.path, text, cursor)
    return _example("untouched", commit, situation, set(), range(0))
