"""Fixtures of the shadow workspace tests: a fresh root and state dir per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from shadowtab.shadow_workspace import ShadowWorkspace


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


@pytest.fixture
def journal_dir(tmp_path: Path) -> Path:
    return tmp_path / "state" / "journal"


@pytest.fixture
def workspace(root: Path, journal_dir: Path) -> Iterator[ShadowWorkspace]:
    ws = ShadowWorkspace(root, journal_dir, watch=False)
    yield ws
    ws.close()
