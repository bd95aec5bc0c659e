"""Text stored as blocks of lines with Fenwick trees over the blocks' line and char
counts, so an edit costs O(edit size + the touched lines + log(blocks)), not O(file).

Line endings are those of LSP: "\\n", "\\r\\n" and "\\r". Every line but the last keeps
its ending; the last line has none (it is "" when the text ends with a line ending)."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable
from itertools import accumulate

BLOCK_LINES = 64  # a block splits past 2x this many lines
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")
_EOL = re.compile(r"\r\n|\r|\n")
_EOL_CHARS = "\r\n"


def split_lines(text: str) -> list[str]:
    """Lines with their endings; a text ending with a line ending gets a final ""."""
    lines = _LINE.findall(text)
    if not lines or lines[-1][-1:] in ("\n", "\r"):
        lines.append("")
    return lines


def line_content(line: str) -> str:
    """The line without its ending."""
    return line.rstrip(_EOL_CHARS) if line[-1:] in ("\n", "\r") else line


def utf16_len(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-16-le")) // 2


def position_in(text: str, offset: int) -> tuple[int, int]:
    """(line, UTF-16 character) of str offset `offset` in a plain string, at C speed
    (lines end at "\n"): for texts that have no LineText, such as scratch copies."""
    line = text.count("\n", 0, offset)
    line_start = text.rfind("\n", 0, offset) + 1
    return line, utf16_len(text[line_start:offset])


def utf16_to_index(text: str, units: int) -> int:
    """str index of `units` UTF-16 units into `text`, clamped; mid-surrogate rounds down."""
    if units <= 0:
        return 0
    if text.isascii():
        return min(units, len(text))
    count = 0
    for index, char in enumerate(text):
        count += 2 if ord(char) > 0xFFFF else 1
        if count > units:
            return index
    return len(text)


class LineIndex:
    """The lines of a plain string (LSP line endings), found only as far as asked, one
    line ending per step: run in a thread, it leaves the event loop its turns (splitting
    10 MB at once is one long call that holds the GIL), and a row near the top is cheap."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._starts = [0]  # start offset of each line found so far
        self._ends: list[int] = []  # where each line's content ends (before its ending)
        self._endings = _EOL.finditer(text)
        self._complete = False

    def line(self, row: int) -> tuple[int, str]:
        """(row clamped to the text's lines, that line without its ending); 0-based."""
        while len(self._ends) <= row and not self._complete:
            found = next(self._endings, None)
            if found is None:
                self._ends.append(len(self.text))  # the last line has no ending
                self._complete = True
            else:
                self._ends.append(found.start())
                self._starts.append(found.end())
        row = max(0, min(row, len(self._ends) - 1))
        return row, self.text[self._starts[row] : self._ends[row]]


class FenwickTree:
    """A Fenwick (binary indexed) tree of non-negative counts: prefix sums and the
    "which slot holds element k" search in O(log n), point updates in O(log n)."""

    def __init__(self, values: Iterable[int] = ()) -> None:
        self._values = list(values)
        self._tree = [0] * (len(self._values) + 1)
        self._total = sum(self._values)
        for index, value in enumerate(self._values, start=1):
            self._tree[index] += value
            parent = index + (index & -index)
            if parent <= len(self._values):
                self._tree[parent] += self._tree[index]

    def __len__(self) -> int:
        return len(self._values)

    def value(self, index: int) -> int:
        return self._values[index]

    def add(self, index: int, delta: int) -> None:
        self._values[index] += delta
        self._total += delta
        position = index + 1
        while position < len(self._tree):
            self._tree[position] += delta
            position += position & -position

    def prefix(self, count: int) -> int:
        """Sum of the first `count` values."""
        total = 0
        while count > 0:
            total += self._tree[count]
            count -= count & -count
        return total

    def total(self) -> int:
        return self._total

    def find(self, target: int) -> tuple[int, int]:
        """(slot, sum before slot) of the slot holding element number `target` (0-based).

        A target at or past the total returns the last slot."""
        position = 0
        remaining = target
        step = 1 << len(self._tree).bit_length()
        while step:
            nxt = position + step
            if nxt < len(self._tree) and self._tree[nxt] <= remaining:
                position = nxt
                remaining -= self._tree[nxt]
            step >>= 1
        slot = min(position, len(self._values) - 1)
        return slot, target - remaining if slot == position else self.prefix(slot)


class LineText:
    def __init__(self, text: str = "") -> None:
        self._set_lines(split_lines(text))
        self._joined: str | None = text

    # -- whole-text views ------------------------------------------------------------
    @property
    def text(self) -> str:
        """The whole text; joined once after a change, then cached."""
        if self._joined is None:
            self._joined = "".join("".join(block) for block in self._blocks)
        return self._joined

    def snapshot(self) -> Callable[[], str]:
        """The text as it is now, to join later and in another thread: a copy of the
        blocks' line lists (pointers, no characters), not the join the whole text costs."""
        if self._joined is not None:
            joined = self._joined
            return lambda: joined
        blocks = [tuple(block) for block in self._blocks]
        return lambda: "".join("".join(block) for block in blocks)

    def __len__(self) -> int:
        return self._chars.total()

    @property
    def line_count(self) -> int:
        return self._lines.total()

    def line(self, index: int) -> str:
        """Line `index` with its ending."""
        block, within = self._locate_line(index)
        return self._blocks[block][within]

    # -- positions -------------------------------------------------------------------
    def line_start(self, index: int) -> int:
        block, within = self._locate_line(index)
        return self._chars.prefix(block) + sum(map(len, self._blocks[block][:within]))

    def offset_at(self, line: int, character: int) -> int:
        """str offset of an LSP position, clamped like VS Code does."""
        return self.locate(line, character)[0]

    def locate(self, line: int, character: int) -> tuple[int, tuple[int, int]]:
        """(str offset, the position clamped like VS Code does) of an LSP position: what
        offset_at and then position_at give, with one line lookup (every keystroke)."""
        if line < 0:
            return 0, (0, 0)
        if line >= self.line_count:
            return len(self), self.position_at(len(self))
        block, within = self._locate_line(line)
        lines = self._blocks[block]
        start = self._chars.prefix(block) + sum(map(len, lines[:within]))
        content = line_content(lines[within])
        index = utf16_to_index(content, character)
        units = index if content.isascii() else utf16_len(content[:index])
        return start + index, (line, units)

    def position_at(self, offset: int) -> tuple[int, int]:
        """(line, UTF-16 character) of a str offset, clamped to the text."""
        offset = max(0, min(offset, len(self)))
        line, start = self._line_of_offset(offset)
        content = line_content(self.line(line))
        return line, utf16_len(content[: offset - start])

    # -- editing ---------------------------------------------------------------------
    def replace(self, start: int, end: int, new_text: str) -> str:
        """Replace text[start:end] by `new_text`; returns the replaced text."""
        total = len(self)
        start = max(0, min(start, total))
        end = max(start, min(end, total))
        first, first_start = self._line_of_offset(start)
        last = first if end == start else self._line_of_offset(end)[0]
        if first > 0 and self.line(first - 1).endswith("\r"):
            first -= 1  # a bare "\r" may join a "\n" that the edit brings next to it
            first_start -= len(self.line(first))
        segment = "".join(self.line(index) for index in range(first, last + 1))
        old = segment[start - first_start : end - first_start]
        merged = segment[: start - first_start] + new_text + segment[end - first_start :]
        lines = split_lines(merged)
        if last < self.line_count - 1 and lines[-1] == "":
            lines.pop()  # the segment ends with a line ending: the next line follows
        self._replace_lines(first, last + 1, lines)
        self._joined = None
        return old

    # -- internals -------------------------------------------------------------------
    def _set_lines(self, lines: list[str]) -> None:
        self._blocks = [lines[i : i + BLOCK_LINES] for i in range(0, len(lines), BLOCK_LINES)]
        self._rebuild_trees()

    def _rebuild_trees(self) -> None:
        if not self._blocks:
            self._blocks = [[""]]
        self._lines = FenwickTree(len(block) for block in self._blocks)
        self._chars = FenwickTree(sum(map(len, block)) for block in self._blocks)

    def _locate_line(self, index: int) -> tuple[int, int]:
        index = max(0, min(index, self.line_count - 1))
        block, before = self._lines.find(index)
        return block, index - before

    def _line_of_offset(self, offset: int) -> tuple[int, int]:
        """(line index, line start offset) of the line holding `offset`."""
        block, before = self._chars.find(offset)
        lines = self._blocks[block]
        ends = list(accumulate(map(len, lines), initial=before))  # ends[k] = start of line k
        within = min(bisect_right(ends, offset) - 1, len(lines) - 1)
        return self._lines.prefix(block) + within, ends[within]

    def _replace_lines(self, first: int, stop: int, lines: list[str]) -> None:
        block, within = self._locate_line(first)
        if stop - 1 == first:  # one line (typing): one lookup
            end_block, end_within = block, within
        else:
            end_block, end_within = self._locate_line(stop - 1)
        if block == end_block:
            target = self._blocks[block]
            old_chars = sum(map(len, target[within : end_within + 1]))
            target[within : end_within + 1] = lines
            if 0 < len(target) <= 2 * BLOCK_LINES:
                self._lines.add(block, len(lines) - (end_within + 1 - within))
                self._chars.add(block, sum(map(len, lines)) - old_chars)
                return
        else:
            merged = (
                self._blocks[block][:within] + lines + self._blocks[end_block][end_within + 1 :]
            )
            self._blocks[block : end_block + 1] = [merged]
        self._rechunk(block)

    def _rechunk(self, block: int) -> None:
        """Split an oversized block or drop an empty one, then rebuild the trees."""
        lines = self._blocks[block]
        chunks = [lines[i : i + BLOCK_LINES] for i in range(0, len(lines), BLOCK_LINES)]
        self._blocks[block : block + 1] = chunks
        self._rebuild_trees()
