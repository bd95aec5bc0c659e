"""Never undo the user: a candidate that removes what the user just typed, or puts back
what they just deleted, is dropped (the most reported annoyance of next-edit
predictors: Copilot NES and Zed both filter it)."""

from __future__ import annotations

from .edits import TextEdit, apply_all
from .situation import EditInProgress, Situation
from .text_spans import common_prefix, common_suffix, line_end_after, line_start_before

# Deleted text shorter than this (stripped) is too common to call a re-insertion of it
# a restoration (a `)` or a space comes back all the time for other reasons).
MIN_RESTORED_CHARS = 2
NEAR_LINES = 1  # a restoration counts within this many lines of where the text went


def last_change(situation: Situation) -> EditInProgress | None:
    """The user's latest change in this file as an edit of the text now: the edit in
    progress, or the last past edit when it left the file as it is now."""
    text = situation.text
    edit = situation.in_progress
    if edit is not None:
        end = edit.start + len(edit.new_text)
        ok = edit.start >= 0 and end <= len(text) and text[edit.start : end] == edit.new_text
        return edit if ok else None
    if not situation.past_edits:
        return None
    last = situation.past_edits[-1]
    if last.path != situation.path or last.after != text:
        return None
    prefix = common_prefix(last.before, last.after)
    suffix = common_suffix(last.before, last.after, prefix)
    return EditInProgress(
        prefix, last.before[prefix : len(last.before) - suffix], text[prefix : len(text) - suffix]
    )


def undoes_user(edits: tuple[TextEdit, ...], situation: Situation) -> bool:
    change = last_change(situation)
    if change is None:
        return False
    return removes_typed(edits, change) or restores_deleted(edits, change, situation.text)


def removes_typed(edits: tuple[TextEdit, ...], change: EditInProgress) -> bool:
    """An edit deletes or replaces a non-blank character the user just typed."""
    typed_start, typed_end = change.start, change.start + len(change.new_text)
    for edit in edits:
        low, high = max(edit.start, typed_start), min(edit.end, typed_end)
        if low < high and change.new_text[low - typed_start : high - typed_start].strip():
            return True
    return False


def restores_deleted(edits: tuple[TextEdit, ...], change: EditInProgress, text: str) -> bool:
    """The candidate undoes the change, or inserts the text it deleted back near where
    it was."""
    if not change.old_text:
        return False
    before = text[: change.start] + change.old_text + text[change.start + len(change.new_text) :]
    if apply_all(text, edits) == before:
        return True
    deleted = change.old_text.strip()
    if len(deleted) < MIN_RESTORED_CHARS:
        return False
    low = line_start_before(text, change.start, NEAR_LINES)
    high = line_end_after(text, change.start + len(change.new_text), NEAR_LINES)
    return any(low <= e.start <= high and deleted in e.new_text for e in edits)
