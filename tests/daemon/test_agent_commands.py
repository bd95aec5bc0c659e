"""The agents' control verbs (daemon/agent_commands.py): the daemon adds them to the
hub's control commands; editors never get them (they have shadowtab.shadow.applyEdit),
and they reach the same workspaces as the lock commands."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from shadowtab.daemon.agent_commands import add_agent_commands
from shadowtab.inference import EngineOptions
from shadowtab.lsp.hub import Hub, HubOptions

AGENT_VERBS = {
    "shadow.read",
    "shadow.write",
    "shadow.apply",
    "shadow.lint",
    "shadow.request_commit",
}


@pytest.fixture
async def hub(tmp_path: Path) -> AsyncIterator[Hub]:
    hub = Hub(HubOptions(state_dir=tmp_path / "state", engine=EngineOptions(kind="off")))
    add_agent_commands(hub)
    await hub.start()
    try:
        yield hub
    finally:
        await hub.close()


async def test_the_agents_verbs_are_control_commands_only(hub: Hub) -> None:
    assert hub.control_commands() >= AGENT_VERBS
    assert not AGENT_VERBS & set(hub.commands.editor_names())
    assert hub.control_commands() - AGENT_VERBS == set(hub.commands.editor_names())


async def test_a_write_lands_in_the_shadow_and_not_on_disk(hub: Hub, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    (project / "app.py").write_text("x = 1\n")
    root = str(project)
    await hub.control("lock.release", {"root": root})  # the model holds the lock
    files = [{"path": "app.py", "text": "x = 2\n"}]
    written = await hub.control("shadow.write", {"root": root, "files": files})
    assert [f["path"] for f in written["files"]] == ["app.py"]
    read = await hub.control("shadow.read", {"root": root, "path": "app.py"})
    assert read["text"] == "x = 2\n" and read["pending"]
    assert (project / "app.py").read_text() == "x = 1\n"
    with pytest.raises(ValueError):
        await hub.control("shadow.read", {"root": root, "path": 5})
