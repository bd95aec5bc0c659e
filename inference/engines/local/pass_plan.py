"""How a prefill is cut into forward passes.

llama.cpp's CPU flash attention computes a pass of 64 query rows or more with its tiled
kernel, and a shorter one row by row, at about twice the cost per row: with the packaged
model, a pass of 63 rows costs more than twice one of 64. So, on a runtime with such a
tile (`Runtime.pass_tile`), a long prefill is cut into passes of a tile or more each,
and a short pass that is most of a tile long is padded to the tile with throwaway rows
(the writer removes their cells after the pass; the rows before them never see them)."""

from __future__ import annotations

import math

# A pass at least this share of a tile long is padded to the tile: shorter, the padding
# rows cost more than the row-by-row kernel they avoid (29 of 64 rows; the break-even
# measured 25-31 rows, by threads and cache occupancy).
PAD_FROM_SHARE = 0.45


def pass_sizes(count: int, chunk: int, tile: int) -> list[int]:
    """The sizes of the passes that evaluate `count` tokens, each at most `chunk` (>= 1):
    as few passes as `chunk` allows, of equal sizes where that gives each at least `tile`
    rows; otherwise (or with tile 0) passes of `chunk` and the remainder last."""
    if count <= 0:
        return []
    passes = math.ceil(count / chunk)
    if tile and count >= tile * passes:
        size, longer = divmod(count, passes)
        return [size + 1] * longer + [size] * (passes - longer)
    return [chunk] * (passes - 1) + [count - chunk * (passes - 1)]


def padded_rows(rows: int, tile: int) -> int:
    """The rows a pass of `rows` tokens computes: the tile where padding pays."""
    if tile and math.ceil(tile * PAD_FROM_SHARE) <= rows < tile:
        return tile
    return rows
