"""The VS Code extension: it compiles with its own tsc (CI does the same), and its manifest
and its code agree on the commands, the Tab binding and the settings."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from clients_support import VSCODE_DIR, ShadowtabEnv, server_capabilities

REQUIRED_COMMANDS = {"shadowtab.lock.toggle", "shadowtab.lock.take", "shadowtab.nextEdit.accept"}


def manifest() -> dict[str, Any]:
    return json.loads((VSCODE_DIR / "package.json").read_text())


def test_extension_compiles_with_tsc(compiled_extension: Path) -> None:
    for module in (
        "extension.js",
        "lockStatus.js",
        "nextEdit.js",
        "pendingFiles.js",
        "protocol.js",
    ):
        assert (compiled_extension / module).is_file(), f"tsc did not emit {module}"


def test_every_contributed_command_has_one_handler(
    compiled_extension: Path, shadowtab_env: ShadowtabEnv, workspace: Path
) -> None:
    """The server's executeCommand commands are registered by vscode-languageclient itself;
    the extension registers the rest. The same id registered twice would break activation."""
    contributed = {entry["command"] for entry in manifest()["contributes"]["commands"]}
    assert contributed >= REQUIRED_COMMANDS
    code = (compiled_extension / "extension.js").read_text()
    by_extension = set(re.findall(r"registerCommand\('([\w.]+)'", code))
    capabilities = server_capabilities(shadowtab_env, workspace)
    by_client = set(capabilities["executeCommandProvider"]["commands"])
    assert not by_extension & by_client, "registered twice"
    assert contributed <= by_extension | by_client, "contributed without a handler"


def test_tab_accepts_a_shown_next_edit_only() -> None:
    bindings = manifest()["contributes"]["keybindings"]
    tab = [b for b in bindings if b["key"] == "tab"]
    assert [b["command"] for b in tab] == ["shadowtab.nextEdit.accept"]
    assert "shadowtab.nextEditVisible" in tab[0]["when"]
    code = (VSCODE_DIR / "src" / "nextEdit.ts").read_text()
    assert "'shadowtab.nextEditVisible'" in code  # the context key the extension sets


def test_settings_and_dependencies() -> None:
    data = manifest()
    properties = data["contributes"]["configuration"]["properties"]
    assert properties["shadowtab.command"]["default"] == "shadowtab"
    assert data["dependencies"]["vscode-languageclient"].lstrip("^~").startswith("10.")
    lock = json.loads((VSCODE_DIR / "package-lock.json").read_text())
    installed = lock["packages"]["node_modules/vscode-languageclient"]["version"]
    assert installed.startswith("10.")
    # The client library's own engine requirement must fit ours.
    client_engine = lock["packages"]["node_modules/vscode-languageclient"]["engines"]["vscode"]
    assert data["engines"]["vscode"] == client_engine
