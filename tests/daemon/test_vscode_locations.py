"""Finding the `code`-like CLI and the settings.json its editor reads, on install layouts
built in a temp dir the way VS Code's installers lay them out (the CLI in bin/, the
product file that names the user-data folder beside it)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from shadowtab.daemon.cli.vscode.locations import (
    CodeCli,
    CodeCliNotFound,
    UnknownSettingsLocation,
    describe_cli,
    find_code_cli,
    user_settings_file,
)


def executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "VSCODE_APPDATA", "VSCODE_AGENT_FOLDER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CODE_SERVER_CONFIG", str(tmp_path / "no-code-server-config.yaml"))
    monkeypatch.setattr(sys, "platform", "linux")
    return home


def test_path_order_prefers_vs_code_and_names_the_product(tmp_path: Path, home: Path) -> None:
    bin_dir = tmp_path / "bin"
    executable(bin_dir / "code-server")
    executable(bin_dir / "codium")
    found = find_code_cli(search_path=str(bin_dir), locations=[])
    assert found == CodeCli(bin_dir / "codium", "VSCodium")
    executable(bin_dir / "code")
    assert find_code_cli(search_path=str(bin_dir), locations=[]).product == "Code"


def test_usual_locations_are_searched_when_path_has_none(tmp_path: Path, home: Path) -> None:
    not_executable = tmp_path / "a" / "code"
    not_executable.parent.mkdir()
    not_executable.write_text("")
    installed = executable(tmp_path / "usr" / "share" / "code" / "bin" / "code")
    locations = [tmp_path / "missing" / "code", not_executable, installed]
    assert find_code_cli(search_path="", locations=locations).path == installed


def test_no_cli_anywhere_says_what_to_install(home: Path) -> None:
    with pytest.raises(CodeCliNotFound, match=r"install VS Code .*code-server.*--code PATH"):
        find_code_cli(search_path="", locations=[])


def test_product_json_beside_the_cli_names_the_data_folder(tmp_path: Path, home: Path) -> None:
    linux_app = tmp_path / "VSCode-linux-x64"
    cli = executable(linux_app / "bin" / "code")
    (linux_app / "resources" / "app").mkdir(parents=True)
    (linux_app / "resources" / "app" / "product.json").write_text('{"nameShort": "Code - OSS"}')
    assert describe_cli(cli).product == "Code - OSS"
    assert user_settings_file(describe_cli(cli)) == (
        home / ".config" / "Code - OSS" / "User" / "settings.json"
    )
    mac_app = tmp_path / "Visual Studio Code.app" / "Contents" / "Resources" / "app"
    mac_cli = executable(mac_app / "bin" / "code")
    (mac_app / "product.json").write_text(json.dumps({"nameShort": "Code"}))
    assert describe_cli(mac_cli).product == "Code"


def test_a_link_counts_by_the_name_typed(tmp_path: Path, home: Path) -> None:
    target = executable(tmp_path / "usr" / "bin" / "snap")  # /snap/bin/code -> /usr/bin/snap
    link = tmp_path / "snap" / "bin" / "code"
    link.parent.mkdir(parents=True)
    link.symlink_to(target)
    assert describe_cli(link).product == "Code"


def test_settings_per_platform(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code = CodeCli(tmp_path / "code", "Code")
    assert user_settings_file(code) == home / ".config" / "Code" / "User" / "settings.json"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert user_settings_file(code) == tmp_path / "xdg" / "Code" / "User" / "settings.json"
    monkeypatch.setattr(sys, "platform", "darwin")
    mac = home / "Library" / "Application Support" / "VSCodium" / "User" / "settings.json"
    assert user_settings_file(CodeCli(tmp_path / "codium", "VSCodium")) == mac
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setenv("APPDATA", str(tmp_path / "Roaming"))
    assert user_settings_file(code) == tmp_path / "Roaming" / "Code" / "User" / "settings.json"
    given = tmp_path / "profile"
    assert user_settings_file(code, given) == given / "User" / "settings.json"


def test_a_portable_install_keeps_its_settings_beside_it(tmp_path: Path, home: Path) -> None:
    app = tmp_path / "VSCode-linux-x64"
    cli = executable(app / "bin" / "code")
    (app / "data").mkdir()
    expected = app / "data" / "user-data" / "User" / "settings.json"
    assert user_settings_file(describe_cli(cli)) == expected


def test_code_server_settings(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cli = describe_cli(executable(tmp_path / "bin" / "code-server"))
    default = home / ".local" / "share" / "code-server" / "User" / "settings.json"
    assert user_settings_file(cli) == default
    config = tmp_path / "config.yaml"
    config.write_text("bind-addr: 127.0.0.1:8080\nuser-data-dir: '~/cs-data'\nauth: none\n")
    monkeypatch.setenv("CODE_SERVER_CONFIG", str(config))
    assert user_settings_file(cli) == home / "cs-data" / "User" / "settings.json"


def test_the_remote_cli_writes_the_servers_machine_settings(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = home / ".vscode-server" / "cli" / "servers" / "Stable-abc" / "server"
    cli = executable(server / "bin" / "remote-cli" / "code")
    (server / "product.json").write_text('{"serverDataFolderName": ".vscode-server"}')
    described = describe_cli(cli)
    expected = home / ".vscode-server" / "data" / "Machine" / "settings.json"
    assert user_settings_file(described) == expected
    monkeypatch.setenv("VSCODE_AGENT_FOLDER", str(tmp_path / "agent"))
    agent = tmp_path / "agent" / "data" / "Machine" / "settings.json"
    assert user_settings_file(describe_cli(cli)) == agent


def test_an_unknown_cli_needs_the_user_data_dir(tmp_path: Path, home: Path) -> None:
    cli = describe_cli(executable(tmp_path / "bin" / "my-editor"))
    with pytest.raises(UnknownSettingsLocation, match="--user-data-dir"):
        user_settings_file(cli)
    assert user_settings_file(cli, tmp_path / "d") == tmp_path / "d" / "User" / "settings.json"
