"""Installs the VS Code extension that ships in the package (a built .vsix, so no npm on
the user's machine) with a `code`-like CLI, and records in the user's settings.json the
full path of the `shadowtab` executable it belongs to: VS Code started from the desktop
does not have the user's venv on PATH, and the extension runs `shadowtab.command`."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.resources import as_file, files
from pathlib import Path

from shadowtab.daemon.cli.vscode.jsonc_edit import JsoncError, set_top_level_key
from shadowtab.daemon.cli.vscode.locations import CodeCli
from shadowtab.shadow_workspace.disk import (
    MISSING,
    CommitConflict,
    DiskBase,
    DiskWriteError,
    atomic_write,
    read_bytes,
)
from shadowtab.shadow_workspace.model import ShadowError

COMMAND_SETTING = "shadowtab.command"
CLI_TIMEOUT_S = 300.0  # the first run of a CLI may unpack or update itself
UTF8_BOM = b"\xef\xbb\xbf"


class InstallError(Exception):
    """The extension or its setting could not be installed (the message says why)."""


@dataclass(frozen=True)
class Extension:
    vsix: Path
    identifier: str  # publisher.name, as `code --list-extensions` prints it
    version: str


@dataclass(frozen=True)
class CliDirs:
    """--user-data-dir and --extensions-dir, passed on to the CLI when given."""

    user_data_dir: Path | None = None
    extensions_dir: Path | None = None

    def args(self) -> list[str]:
        found = [("--user-data-dir", self.user_data_dir), ("--extensions-dir", self.extensions_dir)]
        return [part for flag, path in found if path is not None for part in (flag, str(path))]


@contextlib.contextmanager
def shipped_extension() -> Iterator[Extension]:
    """The .vsix in the package."""
    resource = files("shadowtab.editors").joinpath("vscode", "shadowtab.vsix")
    with as_file(resource) as vsix:
        if not vsix.is_file():
            raise InstallError(f"the packaged extension is missing ({vsix}): reinstall shadowtab")
        yield read_extension(vsix)


def read_extension(vsix: Path) -> Extension:
    """A .vsix with the id and version from its own manifest."""
    try:
        with zipfile.ZipFile(vsix) as archive:
            manifest = json.loads(archive.read("extension/package.json"))
        return Extension(vsix, f"{manifest['publisher']}.{manifest['name']}", manifest["version"])
    except (OSError, zipfile.BadZipFile, KeyError, ValueError, TypeError) as exc:
        raise InstallError(f"{vsix} is not a VS Code extension package: {exc}") from None


def shadowtab_executable() -> Path:
    """The `shadowtab` console script of this Python: beside the interpreter (a venv,
    pipx), in its scripts folder, or in the user scheme's (pip install --user)."""
    name = "shadowtab.exe" if os.name == "nt" else "shadowtab"
    folders = [
        Path(os.path.abspath(sys.executable)).parent,  # not resolved: a venv links its python
        Path(sysconfig.get_path("scripts")),
        Path(sysconfig.get_path("scripts", sysconfig.get_preferred_scheme("user"))),
    ]
    for folder in folders:
        candidate = folder / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    searched = ", ".join(str(folder) for folder in folders)
    raise InstallError(
        f"the `shadowtab` executable of this Python was not found (searched {searched}): "
        "pass its full path with --shadowtab PATH"
    )


def install_extension(cli: CodeCli, extension: Extension, dirs: CliDirs) -> None:
    """`<cli> --install-extension <vsix> --force`, then checks that the CLI lists it."""
    _run_cli(cli, [*dirs.args(), "--install-extension", str(extension.vsix), "--force"])
    listed = _run_cli(cli, [*dirs.args(), "--list-extensions", "--show-versions"])
    wanted = f"{extension.identifier}@{extension.version}".lower()
    if wanted not in (line.strip().lower() for line in listed.splitlines()):
        raise InstallError(
            f"{cli.path} reported success but does not list {wanted} among its extensions:\n"
            + listed.strip()
        )


def _run_cli(cli: CodeCli, args: list[str]) -> str:
    command = [str(cli.path), *args]
    try:
        result = subprocess.run(
            command, capture_output=True, text=True, timeout=CLI_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        raise InstallError(f"{' '.join(command)} did not finish in {CLI_TIMEOUT_S:.0f} s") from None
    except OSError as exc:
        raise InstallError(f"{cli.path} could not be run: {exc}") from None
    if result.returncode != 0:
        output = (result.stdout + result.stderr).strip()[-2000:]
        raise InstallError(f"{' '.join(command)} failed (exit {result.returncode}):\n{output}")
    return result.stdout


@dataclass(frozen=True)
class SettingsEdit:
    path: Path  # the file written (a symlinked settings.json: its target)
    base: DiskBase  # what the edit was computed from
    data: bytes | None  # None: the setting already has the value


def plan_setting(settings_file: Path, value: str) -> SettingsEdit:
    """The settings file with `shadowtab.command` set to `value`, computed, not written:
    comments and the user's other settings are kept; a file that is not JSON with
    comments raises InstallError (nothing is written)."""
    path = settings_file.resolve()  # a dotfiles symlink stays a symlink
    try:
        found = read_bytes(path)
    except (ShadowError, OSError) as exc:  # a folder, a huge file, no permission
        raise InstallError(f"{settings_file} could not be read: {exc}") from None
    raw, base = (b"", MISSING) if found is None else found
    bom = raw.startswith(UTF8_BOM)
    try:
        text = raw.removeprefix(UTF8_BOM).decode("utf-8")
        edited = set_top_level_key(text, COMMAND_SETTING, value)
    except (UnicodeDecodeError, JsoncError) as exc:
        raise InstallError(
            f"{settings_file} could not be edited ({exc}); fix it, or add "
            f'"{COMMAND_SETTING}": {json.dumps(value)} to it by hand'
        ) from None
    if edited == text:
        return SettingsEdit(path, base, None)
    return SettingsEdit(path, base, (UTF8_BOM if bom else b"") + edited.encode("utf-8"))


def write_setting(edit: SettingsEdit) -> None:
    """Atomically, and only if the file is still what the edit was computed from."""
    if edit.data is None:
        return
    try:
        edit.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(edit.path, edit.data, edit.base)
    except CommitConflict:
        raise InstallError(f"{edit.path} changed while it was being edited: run again") from None
    except (DiskWriteError, OSError) as exc:
        raise InstallError(f"{edit.path} could not be written: {exc}") from None
