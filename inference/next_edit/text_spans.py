"""Small text helpers the next-edit modules share: common prefixes and suffixes (in C,
by slice comparison: big files stay cheap) and line boundaries around an offset."""

from __future__ import annotations

import bisect
from collections.abc import Sequence


def common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix: a binary search on slice equality."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def common_suffix(a: str, b: str, prefix: int = 0) -> int:
    """Length of the longest common suffix of a[prefix:] and b[prefix:]."""
    return common_prefix(a[prefix:][::-1], b[prefix:][::-1])


def line_start_before(text: str, offset: int, lines: int = 0) -> int:
    """Start of the line `lines` lines above the one holding `offset`."""
    for _ in range(lines + 1):
        offset = text.rfind("\n", 0, max(0, offset))
        if offset == -1:
            return 0
    return offset + 1


def line_end_after(text: str, offset: int, lines: int = 0) -> int:
    """End (after the newline) of the line `lines` lines below the one holding `offset`."""
    for _ in range(lines + 1):
        found = text.find("\n", offset)
        if found == -1:
            return len(text)
        offset = found + 1
    return offset


def line_starts(text: str) -> list[int]:
    """Offset of the first character of each line."""
    starts = [0]
    index = text.find("\n")
    while index != -1:
        starts.append(index + 1)
        index = text.find("\n", index + 1)
    return starts


def line_of(starts: Sequence[int], offset: int) -> int:
    """The 0-based line holding `offset`, given `line_starts` of the text."""
    return bisect.bisect_right(starts, offset) - 1
