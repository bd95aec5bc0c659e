"""ShadowDocument: the shadow text of one file (the editor's unsaved buffer plus pending
model edits), the disk state it was based on, and where the model's edits are (so a
discard drops them and keeps the user's)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from .disk import DiskBase
from .line_text import LineText, split_lines, utf16_len
from .model import Author, EditEvent, Position, Range, StaleVersion, TextChange
from .model_spans import ModelSpans, Splice, narrowed


def advance(start: Position, text: str) -> Position:
    """The position reached after `text` written from `start`."""
    if "\n" not in text and "\r" not in text:  # the common case: within one line
        return Position(start.line, start.character + utf16_len(text))
    lines = split_lines(text)
    return Position(start.line + len(lines) - 1, utf16_len(lines[-1]))


def dominant_eol(text: str) -> str:
    crlf = text.count("\r\n")
    return "\r\n" if crlf and crlf * 2 >= text.count("\n") else "\n"


class ShadowDocument:
    def __init__(
        self,
        uri: str,
        path: Path,
        text: str,
        version: int,
        base: DiskBase,
        base_text: str,
        *,
        language_id: str = "",
        bom: bool = False,
    ) -> None:
        self.uri = uri
        self.path = path
        self.version = version
        self.language_id = language_id
        self.base = base
        self.base_text = base_text
        self.bom = bom
        # The editors showing it (didOpen without didClose): editor id -> the version
        # of that editor's buffer. The shadow's own version runs on from all of them.
        self.editors: dict[int, int] = {}
        self.model_edits = 0  # model edits since the base
        self.model_spans = ModelSpans()  # where the pending model edits are, in self.text
        self._text = LineText(text)
        self._revision = 0  # bumped by every change of text or base
        self._pending_at = -1
        self._pending = False
        self._reload_at = -1  # the revision at which the disk changed under the editor
        # The text is the editor's buffer from before a disk change it has not reloaded
        # yet: until the user's editor sends a change, writing it would undo the change.
        self.stale_buffer = False
        # File operations held in the shadow: the model deleted the file (its text stays,
        # so a discard or an edit brings it back), or created it by renaming this file.
        self.deleted = False
        self.renamed_from: Path | None = None

    def __repr__(self) -> str:
        return f"ShadowDocument({self.uri!r}, version={self.version}, pending={self.pending})"

    @property
    def open(self) -> bool:
        """An editor has it open."""
        return bool(self.editors)

    @property
    def text(self) -> str:
        return self._text.text

    def snapshot(self) -> Callable[[], str]:
        """The text as it is now, joined when called (in any thread): see LineText."""
        return self._text.snapshot()

    @property
    def length(self) -> int:
        """The text's length in code points, without joining it."""
        return len(self._text)

    @property
    def line_count(self) -> int:
        return self._text.line_count

    @property
    def pending(self) -> bool:
        """The shadow text differs from the disk text it was based on (cached per
        revision: comparing a 10 MB text on every query would cost O(file)). A deletion
        is pending while the file exists; a rename's new file, until it is written."""
        if self.deleted:
            return self.base.exists
        if self.renamed_from is not None:
            return True
        if self._pending_at != self._revision:
            self._pending = len(self._text) != len(self.base_text) or self.text != self.base_text
            self._pending_at = self._revision
        return self._pending

    @property
    def awaiting_reload(self) -> bool:
        """The file changed on disk under the editor's buffer (a "changed" event) and
        neither text nor base changed since: the text differs from the base only because
        the editor has not reloaded yet, not by edits. A further disk change (the full
        file after a truncated one, a second formatter pass) is followed, not a conflict."""
        return self._reload_at == self._revision

    @property
    def eol(self) -> str:
        return dominant_eol(self.base_text or self.text)

    def line(self, index: int) -> str:
        return self._text.line(index)

    def offset_at(self, position: Position) -> int:
        return self._text.offset_at(position.line, position.character)

    def position_at(self, offset: int) -> Position:
        return Position(*self._text.position_at(offset))

    def apply(
        self, changes: list[TextChange], version: int | None, author: Author
    ) -> list[EditEvent]:
        """Apply LSP content changes in order; returns one event per change."""
        if version is not None and version < self.version:
            raise StaleVersion(f"{self.uri}: version {version} is older than {self.version}")
        events = []
        for change in changes:
            events.append(self._apply_one(change, author))
            self._track(change, events[-1])
        self._revision += 1
        self.version = self.version + 1 if version is None else version
        if author == "user":  # the editor's reload, or the user's own edit of its buffer
            self.stale_buffer = False
        self.deleted = False  # an edit of a deleted file brings it back (a replay too)
        if author == "model" and events:
            self.model_edits += 1
        return events

    def replace_text(self, text: str, version: int | None = None) -> None:
        """Set the whole text without recording an event (disk reload, discard)."""
        self.model_spans.clear()
        self._text = LineText(text)
        self._revision += 1
        self.version = self.version + 1 if version is None else version
        self.stale_buffer = False

    def rebase(self, base: DiskBase, base_text: str) -> None:
        self.renamed_from = None  # the disk holds this file now: no longer a rename's
        self.base = base
        self.base_text = base_text
        self.stale_buffer = False
        self._revision += 1
        if not self.pending:  # nothing left to commit or discard
            self.model_edits = 0
            self.model_spans.clear()

    def rebase_under_editor(self, base: DiskBase, base_text: str) -> None:
        """The disk changed under the open, unedited buffer: `base` is the new base, and
        the document awaits the editor's reload (its didChange) until its next change."""
        self.rebase(base, base_text)
        self._reload_at = self._revision
        self.stale_buffer = True

    def revert_model_edits(self) -> int:
        """Put back what the model's pending edits replaced, keeping every user edit;
        returns how many spans were reverted. Recorded as no edit event."""
        spans = self.model_spans.last_first()
        for span in spans:
            self._text.replace(span.start, span.end, span.original)
        self.model_spans.clear()
        self.model_edits = 0
        if spans:
            self._revision += 1
            self.version += 1
        return len(spans)

    def _apply_one(self, change: TextChange, author: Author) -> EditEvent:
        if change.range is None:
            start, end = 0, len(self._text)
            start_pos = Position(0, 0)
        else:  # typing (an empty range) costs one line lookup, not three
            first = change.range.start
            start, (line, character) = self._text.locate(first.line, first.character)
            start_pos = Position(line, character)
            if change.range.end != first:
                end = max(start, self.offset_at(change.range.end))
            else:
                end = start
        old = self._text.replace(start, end, change.text)
        old_range = Range(start_pos, advance(start_pos, old))
        return EditEvent(self.uri, time.time(), old_range, old, change.text, author, start)

    def _track(self, change: TextChange, event: EditEvent) -> None:
        """Keep the model spans in step with one applied change (O(spans) unless the change
        is a full-text one, which is cut to what it really changed)."""
        if event.author == "user" and not self.model_spans:
            return
        splice = Splice(event.offset, event.old_text, event.new_text)
        if change.range is None:
            splice = narrowed(splice)
        self.model_spans.record(splice, event.author)
