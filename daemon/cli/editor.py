"""`shadowtab editor install vscode|nvim`: sets up an editor in one step.

vscode installs the extension that ships in the package with the `code` CLI it finds
(or --code) and records this install's `shadowtab` by its full path in the extension's
`shadowtab.command` setting, so VS Code started from the desktop, without the venv on
PATH, still finds it. nvim prints the init.lua lines (the Lua client ships too).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from contextlib import AbstractContextManager, nullcontext
from importlib.resources import files
from pathlib import Path
from typing import Any

from shadowtab.daemon.cli.exit_codes import EPILOG, EXIT_FAILURE, EXIT_OK
from shadowtab.daemon.cli.vscode.install import (
    COMMAND_SETTING,
    CliDirs,
    Extension,
    InstallError,
    install_extension,
    plan_setting,
    read_extension,
    shadowtab_executable,
    shipped_extension,
    write_setting,
)
from shadowtab.daemon.cli.vscode.locations import (
    INSTALL_HINT,
    CodeCli,
    CodeCliNotFound,
    UnknownSettingsLocation,
    describe_cli,
    find_code_cli,
    user_settings_file,
)


def register(subparsers: Any) -> None:
    editor = subparsers.add_parser(
        "editor", help="set up an editor: VS Code, Neovim", description=__doc__, epilog=EPILOG
    )
    actions = editor.add_subparsers(dest="editor_command", metavar="ACTION", required=True)
    install = actions.add_parser("install", help="set up an editor to use this shadowtab")
    editors = install.add_subparsers(dest="editor", metavar="EDITOR", required=True)
    vscode = editors.add_parser(
        "vscode",
        help="install the VS Code extension and point it at this shadowtab",
        description="Install the packaged VS Code extension with the `code` CLI (or "
        "code-insiders, codium, code-oss, code-server) and set `shadowtab.command` in the "
        "user settings.json to the full path of this install's `shadowtab`.",
    )
    vscode.add_argument("--code", metavar="PATH", help="the CLI to use (default: searched)")
    vscode.add_argument(
        "--user-data-dir", type=Path, metavar="DIR", help="VS Code's user data dir, if not default"
    )
    vscode.add_argument(
        "--extensions-dir", type=Path, metavar="DIR", help="its extensions dir, if not default"
    )
    vscode.add_argument(
        "--vsix", type=Path, metavar="FILE", help="install this .vsix (default: the packaged one)"
    )
    _add_shadowtab_argument(vscode)
    vscode.set_defaults(func=_install_vscode)
    nvim = editors.add_parser("nvim", help="print the init.lua lines for Neovim 0.11+")
    _add_shadowtab_argument(nvim)
    nvim.set_defaults(func=_install_nvim)


def _add_shadowtab_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--shadowtab",
        type=Path,
        metavar="PATH",
        help="the shadowtab executable the editor runs (default: this install's)",
    )


def _install_vscode(args: argparse.Namespace) -> int:
    try:
        settings_file, command = _vscode_steps(args)
    except (CodeCliNotFound, UnknownSettingsLocation, InstallError) as exc:
        print(f"shadowtab editor install vscode: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    print(f'"{COMMAND_SETTING}": {json.dumps(str(command))} in {settings_file}')
    print("Open VS Code (windows already open: run Developer: Reload Window).")
    return EXIT_OK


def _vscode_steps(args: argparse.Namespace) -> tuple[Path, Path]:
    """Finds the CLI, the settings file and this shadowtab; checks that the settings file
    can be edited before anything is installed; installs; records the path."""
    user_data_dir, extensions_dir = (
        None if path is None else path.expanduser().absolute()
        for path in (args.user_data_dir, args.extensions_dir)
    )
    cli = _code_cli(args.code)
    settings_file = user_settings_file(cli, user_data_dir)
    command = _shadowtab_command(args.shadowtab)
    plan_setting(settings_file, str(command))
    print(f"using {cli.describe()}")
    with _extension(args.vsix) as extension:
        install_extension(cli, extension, CliDirs(user_data_dir, extensions_dir))
        print(f"installed {extension.identifier}@{extension.version} from {extension.vsix}")
    write_setting(plan_setting(settings_file, str(command)))  # what the file holds now
    return settings_file, command


def _extension(vsix: Path | None) -> AbstractContextManager[Extension]:
    """--vsix FILE (a development build), else the .vsix in the package."""
    return nullcontext(read_extension(vsix.absolute())) if vsix else shipped_extension()


def _code_cli(named: str | None) -> CodeCli:
    if named is None:
        return find_code_cli()
    found = shutil.which(named) if os.sep not in named else named
    if found is None or not Path(found).is_file():
        raise CodeCliNotFound(f"--code {named}: no such file (or not on PATH); {INSTALL_HINT}")
    if not os.access(found, os.X_OK):
        raise CodeCliNotFound(f"--code {named}: not executable")
    return describe_cli(Path(found).absolute())


def _shadowtab_command(named: Path | None) -> Path:
    if named is None:
        return shadowtab_executable()
    path = named.expanduser().absolute()
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise InstallError(f"--shadowtab {named}: not an executable file")
    return path


def _install_nvim(args: argparse.Namespace) -> int:
    try:
        command = _shadowtab_command(args.shadowtab)
    except InstallError as exc:
        print(f"shadowtab editor install nvim: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    client = Path(str(files("shadowtab.editors").joinpath("nvim")))
    lua = _lua_string
    print(f"-- Neovim 0.11+, in init.lua (lazy.nvim: {{ dir = {lua(client)}, config = ... }})")
    print(f"vim.opt.runtimepath:append({lua(client)})")
    print(f"require('shadowtab').setup({{ cmd = {{ {lua(command)}, 'lsp' }} }})")
    return EXIT_OK


def _lua_string(text: object) -> str:
    """A double-quoted Lua string: JSON's escapes for quotes, backslashes and newlines are
    Lua's too (non-ASCII stays as is: Lua 5.1 has no \\u escapes)."""
    return json.dumps(str(text), ensure_ascii=False)
