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
    "shadow.rm",
    "shadow.mv",
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


async def test_rm_and_mv_held_in_the_shadow_and_imports_linted_against_it(
    hub: Hub, tmp_path: Path
) -> None:
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    (project / "pkg").mkdir()
    (project / "pkg" / "__init__.py").write_text("")
    (project / "pkg" / "old.py").write_text("def helper():\n    return 1\n")
    (project / "pkg" / "gone.py").write_text("GONE = 1\n")
    (project / "main.py").write_text("from pkg.old import helper\n\nprint(helper())\n")
    root = str(project)
    read = await hub.control("shadow.read", {"root": root, "path": "pkg/old.py"})
    with pytest.raises(ValueError, match="changed since it was read"):
        await hub.control(
            "shadow.mv",
            {"root": root, "path": "pkg/old.py", "new_path": "pkg/util.py", "take": True}
            | {"expected_sha256": "0" * 64},
        )
    moved = await hub.control(
        "shadow.mv",
        {"root": root, "path": "pkg/old.py", "new_path": "pkg/util.py", "take": True}
        | {"expected_sha256": read["sha256"]},
    )
    assert [(f["operation"], f["path"]) for f in moved["files"]] == [
        ("rename", "pkg/util.py"),
        ("delete", "pkg/old.py"),
    ]
    assert moved["files"][0]["source"] == "pkg/old.py"
    removed = await hub.control("shadow.rm", {"root": root, "path": "pkg/gone.py"})
    assert removed["files"][0]["operation"] == "delete"
    # main.py still imports the old name: the shadow no longer holds it, the disk does
    lint = await hub.control("shadow.lint", {"root": root, "path": "main.py"})
    assert [d["code"] for d in lint["diagnostics"]] == ["unresolved-import"]
    # a new module importing the renamed one is checked against the shadow, not the disk
    files = [
        {"path": "pkg/new.py", "text": "from pkg.util import helper\n\nX = helper()\n"},
        {"path": "main.py", "text": "from pkg.util import helper\n\nprint(helper())\n"},
    ]
    written = await hub.control("shadow.write", {"root": root, "files": files})
    assert [f["diagnostics"] for f in written["files"]] == [0, 0]
    assert [d["code"] for d in written["files"][1]["removed"]] == ["unresolved-import"]
    diff = (await hub.control("shadow.diff", {"root": root}))["diff"]
    assert "rename from pkg/old.py\nrename to pkg/util.py\n" in diff
    assert "deleted file mode 100644" in diff
    assert (project / "pkg" / "old.py").exists() and (project / "pkg" / "gone.py").exists()
    taken = await hub.control("lock.take", {"root": root, "mode": "commit"})
    assert taken["ok"] and not taken["pending"]
    assert not (project / "pkg" / "old.py").exists() and not (project / "pkg" / "gone.py").exists()
    assert (project / "pkg" / "util.py").read_text() == "def helper():\n    return 1\n"
