"""Torture: generated URIs and paths (hosts, relative names, `..`, symlinks in and out of
the root, percent-encoding, other schemes, directories, device files) sent through
`shadowtab.shadow.applyEdit`, the agents' deletes and renames (`shadow.rm`, `shadow.mv`)
and the lock commands of a real hub over a unix socket, with the user holding the lock
(so that every accepted edit is written at once), then a commit. Every byte outside the
editor's workspace folder is compared before and after.

The figures:

    {"uris": 1000, "bytes_written_outside": 0, "files_changed_outside": 0, ...}

It fails when anything outside the workspace folder changed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import os
import random
import shutil
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import quote

from shadowtab.daemon.agent_commands import add_agent_commands
from shadowtab.inference import EngineOptions
from shadowtab.lsp.hub import Hub, HubOptions


class Client:
    """A minimal LSP client on the hub's socket."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer, self.next_id = reader, writer, 0

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def call(self, method: str, params: Any) -> dict[str, Any]:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        while True:
            length = 0
            while line := (await asyncio.wait_for(self.reader.readline(), 30)).strip():
                name, _, value = line.partition(b":")
                if name.lower() == b"content-length":
                    length = int(value)
            message: dict[str, Any] = json.loads(await self.reader.readexactly(length))
            if "method" in message and "id" in message:  # workspace/applyEdit and such
                self.send({"id": message["id"], "result": None})
            elif message.get("id") == self.next_id and "method" not in message:
                return message

    async def command(self, name: str, *arguments: Any) -> dict[str, Any]:
        return await self.call(
            "workspace/executeCommand", {"command": name, "arguments": list(arguments)}
        )


def tree_state(folder: Path, skip: Path) -> dict[str, tuple[int, str]]:
    """Every regular file under `folder` but `skip`: (size, sha256)."""
    found: dict[str, tuple[int, str]] = {}
    for dirpath, dirs, names in os.walk(folder):
        dirs[:] = [d for d in dirs if Path(dirpath, d) != skip]
        for name in names:
            path = Path(dirpath, name)
            if path.is_file() and not path.is_symlink():
                data = path.read_bytes()
                found[str(path)] = (len(data), hashlib.sha256(data).hexdigest())
    return found


def make_sandbox(base: Path) -> tuple[Path, Path]:
    root, outside = base / "proj", base / "outside"
    (root / ".git").mkdir(parents=True)
    (root / "sub").mkdir()
    (root / "sub" / "in.py").write_text("inside = 1\n")
    outside.mkdir()
    (outside / "target.py").write_text("secret = 1\n")
    (outside / ".git").mkdir()
    (root / "link_out").symlink_to(outside)
    (root / "link_in").symlink_to(root / "sub")
    (root / "file_link.py").symlink_to(outside / "target.py")
    (root / "in_link.py").symlink_to(root / "sub" / "in.py")
    return root, outside


NAMES = ["x.py", "target.py", "in.py", "new dir/y.py", "", ".", "..", "%2e%2e", "\x00.py"]


def generated_paths(count: int, root: Path, outside: Path, rng: random.Random) -> list[str]:
    """Paths as agents give them to `shadow.rm` and `shadow.mv` (relative or absolute)."""
    paths = candidate_paths(root, outside)
    found = []
    for _ in range(count):
        path = rng.choice(paths)
        if rng.random() < 0.3:
            path = f"{path.rstrip('/')}/{rng.choice(NAMES)}"
        found.append(path)
    return found


def candidate_paths(root: Path, outside: Path) -> list[str]:
    return [
        str(root / "sub" / "in.py"),
        str(root / "fresh.py"),
        f"{root}/../outside/target.py",
        f"{root}/sub/../../outside/x.py",
        str(outside / "target.py"),
        str(outside / "new.py"),
        str(root / "link_out" / "target.py"),
        str(root / "link_out" / "x.py"),
        str(root / "link_in" / "in.py"),
        str(root / "file_link.py"),
        str(root / "in_link.py"),
        str(root),
        str(root / "sub"),
        "/dev/null",
        "/dev/zero",
        "/proc/self/mem",
        "/x.py",
        "/tmp",
        "relative.py",
        "sub/x.py",
        "../outside/target.py",
        "::::",
    ]


def generated_uris(count: int, root: Path, outside: Path, rng: random.Random) -> list[str]:
    names, paths = NAMES, candidate_paths(root, outside)
    schemes = [
        "file://",
        "file:",
        "file:///",
        "FILE://",
        "http://",
        "untitled:",
        "vscode-remote://",
        "",
        "file:////",
    ]
    hosts = ["", "", "", "localhost", "somehost", "127.0.0.1", "relative"]
    uris = []
    for _ in range(count):
        path = rng.choice(paths)
        if rng.random() < 0.3:
            path = f"{path.rstrip('/')}/{rng.choice(names)}"
        if rng.random() < 0.3:
            path = quote(path, safe=rng.choice(["/", "", "/:"]))
        scheme = "file://" if rng.random() < 0.4 else rng.choice(schemes)
        host = rng.choice(hosts) if scheme.endswith("//") and rng.random() < 0.5 else ""
        uri = f"{scheme}{host}{path}" if scheme != "file:" else f"file:{path}"
        if rng.random() < 0.05:
            uri += rng.choice(["?q=1", "#frag", ";p"])
        uris.append(uri)
    return uris


def workspace_edit(uri: str, text: str) -> dict[str, Any]:
    start = {"line": 0, "character": 0}
    return {"changes": {uri: [{"range": {"start": start, "end": start}, "newText": text}]}}


async def drive(uris: list[str], root: Path, outside: Path, rng: random.Random) -> dict[str, int]:
    counts = {"refused": 0, "accepted": 0, "lock_commands": 0, "workspaces_opened_outside": 0}
    state = root.parent / "state"
    options = HubOptions(state_dir=state, engine=EngineOptions(kind="off"), linters={})
    hub = Hub(options)
    add_agent_commands(hub)  # shadow.rm and shadow.mv, as the daemon has them
    await hub.start()
    socket_path = str(root.parent / "lsp.sock")
    server = await asyncio.start_unix_server(hub.serve_connection, socket_path)
    try:
        client = Client(*await asyncio.open_unix_connection(socket_path))
        folders = [{"uri": root.as_uri(), "name": "proj"}]
        await client.call(
            "initialize",
            {"capabilities": {}, "rootUri": root.as_uri(), "workspaceFolders": folders},
        )
        client.send({"method": "initialized", "params": {}})
        for i, uri in enumerate(uris):
            reply = await client.command(
                "shadowtab.shadow.applyEdit", workspace_edit(uri, f"# {i}\n")
            )
            counts["accepted" if "result" in reply else "refused"] += 1
            if rng.random() < 0.2:
                await lock_command(client, rng, root, outside, uri)
                counts["lock_commands"] += 1
        await client.command("shadowtab.lock.release")
        paths = generated_paths(len(uris), root, outside, rng)
        await agent_file_ops(hub, root, paths, rng, counts)
        for uri in rng.sample(uris, min(50, len(uris))):  # pending in the shadow, then committed
            await client.command("shadowtab.shadow.applyEdit", workspace_edit(uri, "# pending\n"))
        await client.command("shadowtab.lock.take", {"mode": "commit"})
        counts["workspaces_opened_outside"] = sum(
            1 for ws in hub.workspaces.all() if ws.root != root and root not in ws.root.parents
        )
        for path in (str(outside), "/", str(root / "link_out")):  # the control socket's path too
            with contextlib.suppress(KeyError, ValueError):
                await hub.control("lock.take", {"root": path, "mode": "commit"})
        client.writer.close()
    finally:
        server.close()
        await hub.close()
    return counts


async def agent_file_ops(
    hub: Hub, root: Path, paths: list[str], rng: random.Random, counts: dict[str, int]
) -> None:
    """Deletes and renames between generated paths, held in the shadow until the commit
    that follows (a refusal is an error reply, whatever its kind)."""
    counts.update(file_ops_accepted=0, file_ops_refused=0)
    for old, new in zip(paths[::2], paths[1::2], strict=False):
        args: dict[str, Any] = {"root": str(root), "path": old, "take": True}
        if rng.random() < 0.6:
            args["new_path"] = new
        try:
            await hub.control("shadow.mv" if "new_path" in args else "shadow.rm", args)
            counts["file_ops_accepted"] += 1
        except Exception:
            counts["file_ops_refused"] += 1


async def lock_command(
    client: Client, rng: random.Random, root: Path, outside: Path, uri: str
) -> None:
    name = rng.choice(["lock.take", "lock.release", "lock.toggle", "shadow.diff", "lock.status"])
    target = rng.choice(
        [str(root), str(outside), "/", str(root / "link_out"), uri, "relative", None]
    )
    args: dict[str, Any] = {"mode": rng.choice(["commit", "discard", "keep"])}
    if target is not None:
        args["root"] = target
    await client.command("shadowtab." + name, args)


def run(args: argparse.Namespace) -> dict[str, Any]:
    count, seed = args.uris, args.seed
    base = Path(tempfile.mkdtemp(prefix="sttc-", dir="/tmp"))
    cwd = Path(tempfile.mkdtemp(prefix="sttc-cwd-", dir="/tmp"))
    previous = os.getcwd()
    os.chdir(cwd)  # where relative names would land
    try:
        root, outside = make_sandbox(base)
        rng = random.Random(seed)
        uris = generated_uris(count, root, outside, rng)
        filesystem_root = set(os.listdir("/"))
        before = {**tree_state(base, root), **tree_state(cwd, root)}
        counts = asyncio.run(drive(uris, root, outside, rng))
        after = {**tree_state(base, root), **tree_state(cwd, root)}
        changed = [p for p in set(before) | set(after) if before.get(p) != after.get(p)]
        changed = [p for p in changed if not p.startswith(str(base / "state"))]
        new_at_root = set(os.listdir("/")) - filesystem_root
        written = sum(after.get(p, (0, ""))[0] for p in changed)
        return {
            "uris": count,
            "bytes_written_outside": written,
            "files_changed_outside": len(changed) + len(new_at_root),
            **counts,
        }
    finally:
        os.chdir(previous)
        shutil.rmtree(base, ignore_errors=True)
        shutil.rmtree(cwd, ignore_errors=True)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--uris", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=14)


def failures(figures: dict[str, Any]) -> list[str]:
    """What changed or opened outside the workspace folder."""
    outside = ("bytes_written_outside", "files_changed_outside", "workspaces_opened_outside")
    return [key for key in outside if figures[key]]
