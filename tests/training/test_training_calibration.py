"""The reliability table: tokens per confidence tenth, how many right, and the gap."""

from __future__ import annotations

from pathlib import Path

import pytest

from training.calibration import softmax_top, table
from training.gpu_bundle import split


def test_the_table_counts_shown_and_right_per_bucket() -> None:
    outcomes = [(0.95, True)] * 9 + [(0.95, False)] + [(0.55, True), (0.55, False), (1.0, True)]
    result = table(outcomes)
    rows = {row["bucket"]: row for row in result["buckets"]}
    assert (rows["0.9-1.0"]["shown"], rows["0.9-1.0"]["right"]) == (11, 10)
    assert (rows["0.5-0.6"]["shown"], rows["0.5-0.6"]["right"]) == (2, 1)
    assert rows["0.0-0.1"]["shown"] == 0 and rows["0.0-0.1"]["accuracy"] is None
    assert result["tokens"] == 13
    # |10/11 - 0.9545| * 11 + |0.5 - 0.55| * 2, over 13 tokens
    assert result["ece"] == pytest.approx((abs(10 / 11 - 10.5 / 11) * 11 + 0.05 * 2) / 13, 1e-3)


def test_the_top_token_and_its_probability() -> None:
    top, prob = softmax_top([0.0, 2.0, 0.0])
    assert top == 1 and prob == pytest.approx(0.7870, abs=1e-4)


def test_the_base_model_goes_over_in_pieces_that_join_back(tmp_path: Path) -> None:
    source = tmp_path / "model.gguf"
    source.write_bytes(bytes(range(256)) * 41)
    pieces = split(source, tmp_path / "out", 1000)
    assert [p.name for p in pieces][:2] == ["base.part00", "base.part01"]
    assert all(p.stat().st_size <= 1000 for p in pieces)
    assert b"".join(p.read_bytes() for p in pieces) == source.read_bytes()
