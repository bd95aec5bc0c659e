"""A Fenwick (binary indexed) tree of non-negative counts: prefix sums and the
"which slot holds element k" search in O(log n), point updates in O(log n)."""

from __future__ import annotations

from collections.abc import Iterable


class FenwickTree:
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
