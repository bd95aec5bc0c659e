"""Fixtures of the shadow workspace tests: a fresh root and state dir per test; for the
CLI tests, a project with the daemon's dirs of its own (and the daemon stopped after)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from shadow_helpers import stop_daemon
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


@pytest.fixture
def daemon_dirs(isolated_dirs: Path) -> Iterator[Path]:
    project = isolated_dirs / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    try:
        yield project
    finally:
        stop_daemon()
