"""`--region-lines ABOVE,BELOW`: the `shadowtab` format's rewrite window for one
benchmark run, to measure a window other than the product's side by side with it.

The format reads its module constants REGION_LINES_ABOVE / REGION_LINES_BELOW at every
render (no other module copies them), and these benchmarks run the hub, which renders
every prompt, in their own process (the engine worker only decodes what it is sent).
Setting the constants here therefore changes the window of every prompt the run renders:
the next edit's, warming's, and ghost text's continuation, whose context ends where the
region starts. A measurement aid only: the product's window stays the constants' values,
the window the shipped adapter was trained on.
"""

from __future__ import annotations

import argparse

from shadowtab.inference.next_edit.formats import shadowtab


def parse_region_lines(text: str) -> tuple[int, int]:
    """`ABOVE,BELOW` (two integers >= 0) as a pair; argparse's `type`."""
    parts = text.split(",")
    try:
        above, below = (int(part) for part in parts)
    except ValueError as exc:  # not an integer, or not two of them
        message = f"expected ABOVE,BELOW (two integers), got {text!r}"
        raise argparse.ArgumentTypeError(message) from exc
    if above < 0 or below < 0:
        raise argparse.ArgumentTypeError(f"region lines cannot be negative: {text!r}")
    return above, below


def add_region_lines_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--region-lines",
        type=parse_region_lines,
        metavar="ABOVE,BELOW",
        help="the shadowtab format's rewrite window for this run (default: the product's, "
        f"{shadowtab.REGION_LINES_ABOVE},{shadowtab.REGION_LINES_BELOW})",
    )


def set_region_lines(lines: tuple[int, int] | None) -> None:
    """Renders from now on use a window of `lines` (None: leave the product's)."""
    if lines is not None:
        shadowtab.REGION_LINES_ABOVE, shadowtab.REGION_LINES_BELOW = lines


def region_lines() -> list[int]:
    """The window renders use now, [above, below], for the JSON line."""
    return [shadowtab.REGION_LINES_ABOVE, shadowtab.REGION_LINES_BELOW]
