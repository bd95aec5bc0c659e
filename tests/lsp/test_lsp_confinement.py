"""shadowtab.shadow.applyEdit writes only inside the editor's workspace folders (or the
root of a document it has open): hosts, relative names, `..`, symlinks, other schemes and
directories are InvalidParams, nothing is written and no workspace is opened."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from hub_socket import HubOnSocket, hub_on_socket, insert_edit

INVALID_PARAMS = -32602
APPLY = "shadowtab.shadow.applyEdit"


def snapshot(folder: Path) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for dirpath, _, names in os.walk(folder):
        for name in names:
            path = Path(dirpath, name)
            if path.is_file() and not path.is_symlink():
                files[str(path)] = path.read_bytes()
    return files


def hostile_uris(setup: HubOnSocket, outside: Path) -> list[str]:
    root = setup.root
    return [
        f"file://somehost{outside}/host.py",
        "file://relative/x.py",
        "relative_name.py",
        "::::",
        "x.py",
        f"{root.as_uri()}/../outside/dots.py",
        f"{root.as_uri()}/%2E%2E/outside/encoded.py",
        f"{root.as_uri()}/a.py?query=1",
        f"{root.as_uri()}/nul%00.py",
        f"{outside.as_uri()}/absolute.py",
        f"{(root / 'link_out').as_uri()}/through.py",
        (root / "file_link.py").as_uri(),
        f"{(root / 'link_in').as_uri()}/inside.py",
        "http://example.com/x.py",
        "untitled:Untitled-1",
        root.as_uri(),
        (root / "sub").as_uri(),
    ]


@pytest.fixture
async def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[HubOnSocket]:
    monkeypatch.chdir(tmp_path)  # where relative names would land
    async with hub_on_socket() as setup:
        yield setup


async def test_hostile_targets_are_refused_and_nothing_is_written(
    setup: HubOnSocket, tmp_path: Path
) -> None:
    root = setup.root
    outside = setup.base / "outside"
    outside.mkdir()
    (outside / "target.py").write_text("secret\n")
    (root / "sub").mkdir()
    (root / "link_out").symlink_to(outside)
    (root / "link_in").symlink_to(root / "sub")
    (root / "file_link.py").symlink_to(outside / "target.py")
    client = await setup.client()
    await client.command("shadowtab.lock.status")
    workspaces = {str(ws.root) for ws in setup.hub.workspaces.all()}
    before = snapshot(setup.base), snapshot(tmp_path)
    for uri in hostile_uris(setup, outside):
        reply = await client.command(APPLY, insert_edit(uri, "evil\n"))
        assert reply.get("error", {}).get("code") == INVALID_PARAMS, (uri, reply)
    assert not Path("/x.py").exists()
    assert (snapshot(setup.base), snapshot(tmp_path)) == before
    assert {str(ws.root) for ws in setup.hub.workspaces.all()} == workspaces
    ok = await client.command(APPLY, insert_edit((root / "ok.py").as_uri(), "fine\n"))
    assert ok["result"]["applied"], ok
    assert (root / "ok.py").read_text() == "fine\n"


async def test_one_bad_target_writes_none_of_the_edit(setup: HubOnSocket) -> None:
    client = await setup.client()
    good = (setup.root / "good.py").as_uri()
    edit = insert_edit(good, "x\n")
    edit["changes"]["file://host/tmp/bad.py"] = edit["changes"][good]
    reply = await client.command(APPLY, edit)
    assert reply["error"]["code"] == INVALID_PARAMS
    assert not (setup.root / "good.py").exists()


async def test_the_root_of_an_open_document_is_editable(setup: HubOnSocket) -> None:
    other = setup.base / "other"
    (other / ".git").mkdir(parents=True)
    (other / "a.py").write_text("a = 1\n")
    client = await setup.client()
    reply = await client.command(APPLY, insert_edit((other / "b.py").as_uri(), "b\n"))
    assert reply["error"]["code"] == INVALID_PARAMS  # not a folder of this editor
    client.open((other / "a.py").as_uri(), "a = 1\n")
    reply = await client.command(APPLY, insert_edit((other / "b.py").as_uri(), "b\n"))
    assert reply["result"]["applied"], reply
    assert (other / "b.py").read_text() == "b\n"
