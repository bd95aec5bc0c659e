"""Where VS Code lives: the CLI that installs extensions (`code` or a relative: Insiders,
VSCodium, Code - OSS, code-server, the remote CLI of a Remote-SSH window) and the
settings.json that the editor behind that CLI reads.

The user-data folder is named after the product (`product.json`'s `nameShort`: "Code",
"VSCodium", ...), so the product file next to the CLI is read when it is there and the
CLI's name decides otherwise.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

# CLI name -> the product's user-data folder name; in the order the search prefers them.
CLI_PRODUCTS = {
    "code": "Code",
    "code-insiders": "Code - Insiders",
    "codium": "VSCodium",
    "code-oss": "Code - OSS",
    "code-server": "code-server",
}
CODE_SERVER = "code-server"
INSTALL_HINT = (
    "install VS Code (https://code.visualstudio.com; on macOS also run "
    "\"Shell Command: Install 'code' command in PATH\" from its command palette), "
    "VSCodium or code-server, or name the CLI with --code PATH"
)


class CodeCliNotFound(Exception):
    """No `code`-like CLI on PATH or in the usual places (the message says what to do)."""


class UnknownSettingsLocation(Exception):
    """The CLI's editor and so its settings.json are unknown: --user-data-dir names it."""


@dataclass(frozen=True)
class CodeCli:
    path: Path
    product: str | None  # the user-data folder's name; None when unknown
    remote_data_dir: Path | None = None  # a VS Code Server's data folder (Remote-SSH)

    def describe(self) -> str:
        if self.remote_data_dir is not None:
            return f"{self.path} (VS Code Server, {self.remote_data_dir})"
        return f"{self.path} ({self.product or 'unknown product'})"


def usual_locations() -> list[Path]:
    """Where installers put the CLI when it is not on PATH (macOS apps, Linux packages)."""
    home = Path.home()
    if sys.platform == "darwin":
        apps = [Path("/Applications"), home / "Applications"]
        bundles = {
            "Visual Studio Code.app": ("code",),
            "Visual Studio Code - Insiders.app": ("code-insiders", "code"),
            "VSCodium.app": ("codium",),
        }
        found = [
            folder / bundle / "Contents" / "Resources" / "app" / "bin" / name
            for folder in apps
            for bundle, names in bundles.items()
            for name in names
        ]
        brew = [Path("/opt/homebrew/bin"), Path("/usr/local/bin")]
        return found + [folder / name for folder in brew for name in CLI_PRODUCTS]
    if sys.platform == "win32":
        local = Path(os.environ.get("LOCALAPPDATA", home / "AppData" / "Local")) / "Programs"
        program_files = Path(os.environ.get("PROGRAMFILES", r"C:\Program Files"))
        return [
            local / "Microsoft VS Code" / "bin" / "code.cmd",
            program_files / "Microsoft VS Code" / "bin" / "code.cmd",
            local / "Microsoft VS Code Insiders" / "bin" / "code-insiders.cmd",
            local / "VSCodium" / "bin" / "codium.cmd",
        ]
    return [
        Path("/usr/share/code/bin/code"),
        Path("/snap/bin/code"),
        Path("/opt/visual-studio-code/bin/code"),
        Path("/usr/share/code-insiders/bin/code-insiders"),
        Path("/snap/bin/code-insiders"),
        Path("/usr/share/codium/bin/codium"),
        Path("/snap/bin/codium"),
        home / ".local" / "bin" / "code-server",  # code-server's install.sh (standalone)
        Path("/usr/lib/code-server/bin/code-server"),
    ]


def find_code_cli(search_path: str | None = None, locations: list[Path] | None = None) -> CodeCli:
    """The first of `code`, `code-insiders`, `codium`, `code-oss`, `code-server` on PATH,
    else the first usual location that holds one; CodeCliNotFound if there is none."""
    for name in CLI_PRODUCTS:
        found = shutil.which(name, path=search_path)
        if found:
            return describe_cli(Path(found).absolute())
    for candidate in usual_locations() if locations is None else locations:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return describe_cli(candidate)
    names = ", ".join(CLI_PRODUCTS)
    where = "on PATH or in the usual places"
    raise CodeCliNotFound(f"no VS Code CLI ({names}) {where}: {INSTALL_HINT}")


def describe_cli(path: Path) -> CodeCli:
    """What `path` is: its product (from product.json beside it, else from its name or the
    name it links to) and, for the remote CLI of a VS Code Server, the server's data folder."""
    real = path.resolve()
    if "remote-cli" in real.parts:
        return CodeCli(path, None, _remote_data_dir(real.parents[2]))  # <server>/bin/remote-cli/
    product = _product_json(real.parent.parent)
    name = product.get("nameShort") if product else None
    if isinstance(name, str):
        return CodeCli(path, name)
    # /snap/bin/code links to /usr/bin/snap: the name typed counts first
    return CodeCli(path, _product_of_name(path.name) or _product_of_name(real.name))


def _product_of_name(name: str) -> str | None:
    return CLI_PRODUCTS.get(re.sub(r"\.(cmd|exe)$", "", name.lower()))


def _product_json(app: Path) -> dict[str, object] | None:
    """product.json of the app whose bin/ holds the CLI: bin/ sits in resources/app on
    macOS and beside resources/ on Linux and Windows."""
    for candidate in (app / "product.json", app / "resources" / "app" / "product.json"):
        try:
            found = json.loads(candidate.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(found, dict):
            return found
    return None


def _remote_data_dir(server_root: Path) -> Path:
    """A VS Code Server keeps its settings in <agent folder>/data (~/.vscode-server unless
    VSCODE_AGENT_FOLDER says otherwise); the folder's name is product.json's
    serverDataFolderName (VSCodium's server uses its own)."""
    agent = os.environ.get("VSCODE_AGENT_FOLDER")
    if agent:
        return Path(agent).expanduser() / "data"
    product = _product_json(server_root) or {}
    folder = product.get("serverDataFolderName", ".vscode-server")
    return Path.home() / str(folder) / "data"


def user_settings_file(cli: CodeCli, user_data_dir: Path | None = None) -> Path:
    """The settings.json the CLI's editor reads for this user (or for --user-data-dir)."""
    if user_data_dir is not None:
        return user_data_dir.expanduser().absolute() / "User" / "settings.json"
    if cli.remote_data_dir is not None:
        # Machine settings: what a remote window reads for settings of its own host.
        return cli.remote_data_dir / "Machine" / "settings.json"
    if cli.product == CODE_SERVER:
        return _code_server_data_dir() / "User" / "settings.json"
    portable = cli.path.resolve().parent.parent / "data"  # a portable install's own data
    if portable.is_dir() and cli.product:
        return portable / "user-data" / "User" / "settings.json"
    if cli.product is None:
        raise UnknownSettingsLocation(
            f"{cli.path} is not a VS Code CLI that shadowtab knows, so where its settings "
            "live is unknown: pass --user-data-dir DIR (its settings are DIR/User/settings.json)"
        )
    return _app_data_dir() / cli.product / "User" / "settings.json"


def _app_data_dir() -> Path:
    """Where VS Code keeps user data per platform (VSCODE_APPDATA overrides, as in VS Code)."""
    if os.environ.get("VSCODE_APPDATA"):
        return Path(os.environ["VSCODE_APPDATA"])
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA", Path.home() / "AppData" / "Roaming"))
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support"
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")


def _code_server_data_dir() -> Path:
    """code-server's user-data-dir: its config.yaml's `user-data-dir`, else the XDG data
    folder (env-paths' data path, which code-server uses)."""
    config_home = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    default_config = config_home / "code-server" / "config.yaml"
    config = Path(os.environ.get("CODE_SERVER_CONFIG") or default_config)
    try:
        match = re.search(r"^user-data-dir:\s*(.+?)\s*$", config.read_text(), re.MULTILINE)
    except OSError:
        match = None
    if match:
        return Path(match.group(1).strip("'\"")).expanduser()
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / CODE_SERVER
    data_home = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(data_home) / CODE_SERVER
