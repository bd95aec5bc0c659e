"""The benchmarks' `--region-lines ABOVE,BELOW`: parsed strictly, and once set, the
window the shadowtab format renders (the product's constants restored after each test)."""

from __future__ import annotations

import argparse

import pytest
from shadowtab.inference.next_edit.formats import shadowtab
from shadowtab.inference.next_edit.situation import Situation

from benchmarks.common.region_lines import (
    add_region_lines_option,
    parse_region_lines,
    region_lines,
    set_region_lines,
)

TEXT = "".join(f"line{i} = {i}\n" for i in range(40))


@pytest.fixture(autouse=True)
def _product_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever a test sets, the module's constants are the product's again after it."""
    monkeypatch.setattr(shadowtab, "REGION_LINES_ABOVE", shadowtab.REGION_LINES_ABOVE)
    monkeypatch.setattr(shadowtab, "REGION_LINES_BELOW", shadowtab.REGION_LINES_BELOW)


def test_two_integers_parse_anything_else_is_refused() -> None:
    assert parse_region_lines("10,10") == (10, 10)
    assert parse_region_lines("0,6") == (0, 6)
    for bad in ("10", "10,10,1", "a,b", "3,-1", ""):
        with pytest.raises(argparse.ArgumentTypeError):
            parse_region_lines(bad)


def test_the_option_defaults_to_leaving_the_product_window() -> None:
    parser = argparse.ArgumentParser()
    add_region_lines_option(parser)
    before = region_lines()
    set_region_lines(parser.parse_args([]).region_lines)
    assert region_lines() == before
    set_region_lines(parser.parse_args(["--region-lines", "10,10"]).region_lines)
    assert region_lines() == [10, 10]


def _region(cursor_line: int) -> str:
    cursor = TEXT.index(f"line{cursor_line} ")
    rendered = shadowtab.render(Situation("m.py", TEXT, cursor))
    assert rendered is not None
    return TEXT[rendered.region_start : rendered.region_end]


def test_the_set_window_is_what_renders_rewrite() -> None:
    set_region_lines((3, 6))
    assert _region(20).splitlines() == [f"line{i} = {i}" for i in range(17, 27)]
    set_region_lines((10, 10))
    assert _region(20).splitlines() == [f"line{i} = {i}" for i in range(10, 31)]  # 21 lines
