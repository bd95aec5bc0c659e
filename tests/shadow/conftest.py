"""Fixtures of the shadow workspace tests: a fresh root and state dir per test; for the
CLI tests, a project with the daemon's dirs of its own (and the daemon stopped after)."""

from __future__ import annotations

import os
import shutil
import tempfile
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
def daemon_dirs(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    base = Path(tempfile.mkdtemp(prefix="stsh-", dir="/tmp"))  # short: socket paths
    for name in list(os.environ):
        if name.startswith("SHADOWTAB_"):
            monkeypatch.delenv(name)
    for name, sub in (("RUNTIME", "run"), ("STATE", "state"), ("CONFIG", "cfg"), ("DATA", "data")):
        monkeypatch.setenv(f"SHADOWTAB_{name}_DIR", str(base / sub))
    monkeypatch.setenv("SHADOWTAB_ENGINE_KIND", "off")
    project = base / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    try:
        yield project
    finally:
        stop_daemon()
        shutil.rmtree(base, ignore_errors=True)
