"""`shadowtab mcp`: an MCP server on stdio for coding agents (Claude Code, Cursor, Zed,
any MCP client). Its tools read, write and patch files through the daemon's shadow
workspace, so an agent's edits are linted as unsaved text, show up in the user's
editors and reach the disk only when the user commits them. It is a client of the
daemon's control socket (started when it is not running, as `shadowtab lsp` does).

The server serves only its workspace roots (`--root`, default: the project holding the
cwd); each root is also a resource holding its lock state."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

logger = logging.getLogger(__name__)

REQUEST_TIMEOUT_S = 60.0
INSTRUCTIONS = (
    "Edit files through shadowtab's shadow workspace: write_file, apply_patch, delete_file "
    "and rename_file put your edits in the shadow (never on disk) while the model holds the "
    "save lock; the user's "
    "editor shows them, and each write answers with the lint diagnostics it added and "
    "removed. read_file sees your pending edits. When done, call request_commit: the user "
    "reviews and commits. If the user holds the lock, pass take_lock=true (refused while "
    "the user has unsaved edits) or ask the user to run `shadowtab lock release`."
)


class DaemonLink:
    """Blocking requests to the daemon, starting it when it is not running."""

    def __init__(self, config_root: Path, start_timeout: float) -> None:
        self.config_root = config_root
        self.start_timeout = start_timeout
        self._lock = threading.Lock()

    def ensure(self) -> None:
        from shadowtab.daemon.client import ensure_running

        with self._lock:  # one start at a time
            ensure_running(self.start_timeout, config_root=self.config_root)

    def request(self, cmd: str, **fields: Any) -> dict[str, Any]:
        """The reply, or ToolError with the daemon's message (a refusal, bad input)."""
        from shadowtab.daemon.client import ControlError, DaemonNotRunning, request

        try:
            self.ensure()
            try:
                reply = request(cmd, timeout=REQUEST_TIMEOUT_S, **fields)
            except DaemonNotRunning:  # it went away between the two: start it once more
                self.ensure()
                reply = request(cmd, timeout=REQUEST_TIMEOUT_S, **fields)
        except ControlError as exc:
            raise ToolError(str(exc)) from None
        except Exception as exc:  # the daemon does not start: bad config, no socket...
            raise ToolError(f"the shadowtab daemon is not available: {exc}") from None
        reply.pop("ok", None)
        return reply

    async def call(self, cmd: str, **fields: Any) -> dict[str, Any]:
        return await asyncio.to_thread(self.request, cmd, **fields)


@dataclass(frozen=True)
class Roots:
    """The workspace roots this server edits; paths outside them are refused here (the
    daemon applies its own rules on top: no `..`, no symlinks, nothing outside)."""

    roots: tuple[Path, ...]

    def root(self, given: str | None) -> str:
        if not given:
            return str(self.roots[0])
        path = Path(given).expanduser().resolve()
        if path not in self.roots:
            raise ToolError(f"{given} is not a workspace root of this server: {self.names()}")
        return str(path)

    def locate(self, path: str) -> tuple[str, str]:
        """(root, absolute path) of a path relative to the first root or absolute."""
        if not isinstance(path, str) or not path.strip():
            raise ToolError("a path is required")
        given = Path(path)
        absolute = Path(os.path.abspath(given if given.is_absolute() else self.roots[0] / given))
        absolute = self._below_root(absolute)
        holding = [r for r in self.roots if r == absolute or r in absolute.parents]
        if not holding:
            raise ToolError(f"{path} is outside the workspace roots of this server: {self.names()}")
        return str(max(holding, key=lambda r: len(r.parts))), str(absolute)

    def _below_root(self, path: Path) -> Path:
        """`path` as written when a root holds it; else, when a folder above it is a link
        to a root (the roots are resolved: /tmp may be a link), the same file below that
        root. What lies below the root stays as written: the daemon refuses links there."""
        if any(r == path or r in path.parents for r in self.roots):
            return path
        for folder in (path, *path.parents):
            real = folder.resolve()
            if real in self.roots:
                return real / path.relative_to(folder)
        return path

    def names(self) -> str:
        return ", ".join(str(r) for r in self.roots)


def build_server(roots: Roots, link: DaemonLink, take_by_default: bool = False) -> MCPServer:
    server: MCPServer = MCPServer(
        name="shadowtab", instructions=INSTRUCTIONS, log_level="WARNING", version=_version()
    )

    def take(value: bool | None) -> bool:
        return take_by_default if value is None else bool(value)

    @server.tool()
    async def read_file(path: str) -> dict[str, Any]:
        """Read a file as the shadow workspace holds it: your pending edits included (the
        disk may still hold the old text). `path` is relative to the workspace root or
        absolute. Returns its text and sha256 (pass it to write_file as expected_sha256)."""
        root, absolute = roots.locate(path)
        return await link.call("shadow.read", root=root, path=absolute)

    @server.tool()
    async def write_file(
        path: str, content: str, take_lock: bool | None = None, expected_sha256: str | None = None
    ) -> dict[str, Any]:
        """Replace a file's whole text (or create it) in the shadow workspace, never on
        disk. Returns the lint diagnostics the write added and removed. take_lock: take the
        save lock when the user holds it with nothing unsaved. expected_sha256: refuse if
        the file changed since you read it."""
        root, absolute = roots.locate(path)
        item: dict[str, Any] = {"path": absolute, "text": content}
        if expected_sha256:
            item["expected_sha256"] = expected_sha256
        return await link.call("shadow.write", root=root, files=[item], take=take(take_lock))

    @server.tool()
    async def apply_patch(
        patch: str, root: str | None = None, take_lock: bool | None = None
    ) -> dict[str, Any]:
        """Apply a unified diff (git style a/PATH b/PATH, paths relative to the workspace
        root; several files at once; new, deleted and renamed files as `git diff` writes
        them) to the shadow workspace: every file or none; a hunk whose context does not
        match changes nothing. Returns the lint diagnostics it
        added and removed per file."""
        return await link.call(
            "shadow.apply", root=roots.root(root), patch=patch, take=take(take_lock)
        )

    @server.tool()
    async def delete_file(
        path: str, take_lock: bool | None = None, expected_sha256: str | None = None
    ) -> dict[str, Any]:
        """Delete a file in the shadow workspace; the disk keeps it until the user commits
        (a discard brings it back). expected_sha256: refuse if the file changed since you
        read it."""
        root, absolute = roots.locate(path)
        fields: dict[str, Any] = {"path": absolute, "take": take(take_lock)}
        if expected_sha256:
            fields["expected_sha256"] = expected_sha256
        return await link.call("shadow.rm", root=root, **fields)

    @server.tool()
    async def rename_file(
        path: str,
        new_path: str,
        content: str | None = None,
        take_lock: bool | None = None,
        expected_sha256: str | None = None,
    ) -> dict[str, Any]:
        """Rename (move) a file in the shadow workspace, never over an existing file; its
        text stays, or becomes `content`. The disk changes when the user commits: the new
        file is written, then the old one removed. Update the imports with write_file or
        apply_patch; the diagnostics check imports against the shadow's files.
        expected_sha256: refuse if the old file changed since you read it."""
        root, absolute = roots.locate(path)
        new_root, new_absolute = roots.locate(new_path)
        if new_root != root:
            raise ToolError(f"{path} and {new_path} are in different workspace roots")
        fields: dict[str, Any] = {"path": absolute, "new_path": new_absolute}
        if content is not None:
            fields["text"] = content
        if expected_sha256:
            fields["expected_sha256"] = expected_sha256
        return await link.call("shadow.mv", root=root, take=take(take_lock), **fields)

    @server.tool()
    async def diagnostics(path: str) -> dict[str, Any]:
        """The linters' diagnostics of a file's unsaved shadow text (your pending edits
        included). Lines and characters are 0-based."""
        root, absolute = roots.locate(path)
        return await link.call("shadow.lint", root=root, path=absolute)

    @server.tool()
    async def lock_status(root: str | None = None) -> dict[str, Any]:
        """Who holds the save lock (user or model) and which files have pending edits."""
        return await link.call("lock.status", root=roots.root(root))

    @server.tool()
    async def list_pending(root: str | None = None) -> dict[str, Any]:
        """The files with pending shadow edits and the change set as a unified diff
        (disk -> shadow)."""
        reply = await link.call("shadow.diff", root=roots.root(root))
        return {**reply, "files": reply.get("pending", [])}

    @server.tool()
    async def request_commit(message: str = "", root: str | None = None) -> dict[str, Any]:
        """Ask the user to review and commit your pending edits: their editors show the
        request; the user commits (`shadowtab lock take --commit`) or discards. You
        cannot commit yourself."""
        return await link.call("shadow.request_commit", root=roots.root(root), message=message)

    for root in roots.roots:
        _add_root_resource(server, root, link)
    return server


def _add_root_resource(server: MCPServer, root: Path, link: DaemonLink) -> None:
    async def workspace_state() -> str:
        return json.dumps(await link.call("lock.status", root=str(root)))

    server.resource(
        root.as_uri(),
        name=f"workspace {root.name}",
        description=f"The shadowtab workspace {root}: save lock holder and pending files",
        mime_type="application/json",
    )(workspace_state)


def _version() -> str:
    from importlib.metadata import version

    return version("shadowtab")


def serve(roots: list[Path], start_timeout: float, take_by_default: bool) -> None:
    """Run the server on stdio until the client closes it."""
    link = DaemonLink(roots[0], start_timeout)
    # Start the daemon now, in the background: the first tool call need not wait for it.
    threading.Thread(target=_start_quietly, args=(link,), daemon=True).start()
    build_server(Roots(tuple(roots)), link, take_by_default).run("stdio")


def _start_quietly(link: DaemonLink) -> None:
    try:
        link.ensure()
    except Exception as exc:  # reported again on each tool call
        logger.warning("shadowtab mcp: the daemon did not start: %s", exc)
