"""Hub.control, what the daemon's control socket calls: the same code as the editors'
executeCommand, with KeyError/ValueError for unknown commands and bad arguments."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from shadowtab.inference import EngineOptions
from shadowtab.lsp.hub import Hub, HubOptions


@pytest.fixture
async def hub(tmp_path: Path) -> AsyncIterator[Hub]:
    options = HubOptions(state_dir=tmp_path / "state", engine=EngineOptions(kind="off"))
    hub = Hub(options)
    await hub.start()
    try:
        yield hub
    finally:
        await hub.close()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    (project / "sub").mkdir()
    return project


async def test_control_commands_and_status(hub: Hub, root: Path) -> None:
    # the agents' verbs are the daemon's to add (tests/daemon/test_agent_commands.py)
    assert hub.control_commands() == {
        "lock.status",
        "lock.take",
        "lock.release",
        "lock.toggle",
        "shadow.diff",
        "shadow.pending",
        "shadow.commit",
        "shadow.discard",
    }
    assert set(hub.commands.editor_names()) == hub.control_commands()
    status = await hub.control("lock.status", {"root": str(root)})
    assert status["root"] == str(root.resolve())
    assert status["holder"] == "user" and status["pending"] == [] and status["conflicts"] == []
    # a directory inside the project names the project's workspace
    inner = await hub.control("lock.status", {"root": str(root / "sub")})
    assert inner["root"] == str(root.resolve())
    assert (await hub.control("lock.release", {"root": str(root)}))["holder"] == "model"
    assert (await hub.control("lock.toggle", {"root": str(root)}))["holder"] == "user"
    assert (await hub.control("shadow.diff", {"root": str(root)}))["diff"] == ""
    assert (await hub.control("shadow.pending", {"root": str(root)}))["files"] == []
    taken = await hub.control("lock.take", {"root": str(root), "mode": "commit"})
    assert taken["holder"] == "user" and taken["ok"] is True
    described = hub.status()
    assert described["sessions"] == 0
    assert described["engine"]["state"] == "off"
    assert described["workspaces"][0]["root"] == str(root.resolve())
    assert "engine" in hub.stats()


async def test_control_errors(hub: Hub, root: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        await hub.control("lock.status", {})  # no workspace yet: the root is required
    with pytest.raises(KeyError):
        await hub.control("lock.explode", {})
    with pytest.raises(ValueError):
        await hub.control("lock.take", {"root": str(root), "mode": "sideways"})
    with pytest.raises(ValueError):
        await hub.control("lock.status", {"root": str(tmp_path / "missing")})
    with pytest.raises(ValueError):
        await hub.control("lock.status", {"root": 5})


async def test_workspaces_the_control_socket_opened_are_bounded(hub: Hub, tmp_path: Path) -> None:
    """Issue 44: a client naming one new folder after another opened a workspace (a
    watcher, an index thread, a journal) for each, never closed. Past
    MAX_CONTROL_WORKSPACES the least recently named that hold nothing are closed; one
    with pending edits (the model holds its lock) or named again recently stays."""
    from shadowtab.lsp.workspace_registry import MAX_CONTROL_WORKSPACES

    folders = []
    for number in range(MAX_CONTROL_WORKSPACES + 6):
        folder = tmp_path / f"p{number}"
        (folder / ".git").mkdir(parents=True)
        folders.append(folder.resolve())
    await hub.control("lock.release", {"root": str(folders[0])})  # the model's: kept
    for folder in folders[1:]:
        await hub.control("lock.status", {"root": str(folders[1])})  # named again and again
        await hub.control("lock.status", {"root": str(folder)})
    open_roots = {ws.root for ws in hub.workspaces.all()}
    assert len(open_roots) == MAX_CONTROL_WORKSPACES
    assert {folders[0], folders[1], folders[-1]} <= open_roots
    assert folders[2] not in open_roots
    # a closed one opens again when named: nothing was lost with it
    assert (await hub.control("lock.status", {"root": str(folders[2])}))["holder"] == "user"
