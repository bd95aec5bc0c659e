"""Lock and shadow commands, shared by workspace/executeCommand (`shadowtab.<name>`) and
the daemon's control socket (Hub.control(<name>, args))."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shadowtab.lsp.edits_push import push_full_text

if TYPE_CHECKING:
    from shadowtab.lsp.hub import Hub
    from shadowtab.shadow_workspace import ShadowWorkspace

logger = logging.getLogger(__name__)

COMMAND_PREFIX = "shadowtab."
TAKE_MODES = ("commit", "discard", "keep")

Handler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


class CommandRunner:
    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self._handlers: dict[str, Handler] = {
            "lock.status": self.lock_status,
            "lock.take": self.lock_take,
            "lock.release": self.lock_release,
            "lock.toggle": self.lock_toggle,
            "shadow.diff": self.shadow_diff,
            "shadow.pending": self.shadow_pending,
        }

    def control_names(self) -> list[str]:
        return list(self._handlers)

    async def control(self, cmd: str, args: dict[str, Any]) -> dict[str, Any]:
        """KeyError for an unknown command, ValueError for bad arguments."""
        handler = self._handlers.get(cmd)
        if handler is None:
            raise KeyError(cmd)
        if not isinstance(args, dict):
            raise ValueError("arguments must be a map")
        return await handler(args)

    def workspace(self, args: dict[str, Any], default_root: str | None = None) -> ShadowWorkspace:
        root = args.get("root", default_root)
        if root is None:
            known = self.hub.workspaces.all()
            if len(known) == 1:
                return known[0]
            raise ValueError('"root" is required: the workspace root directory')
        if not isinstance(root, str) or not root:
            raise ValueError('"root" must be a directory path')
        if root.startswith("file://"):
            return self.hub.workspaces.for_uri(root.rstrip("/") + "/")
        if not Path(root).is_dir():
            raise ValueError(f"not a directory: {root}")
        return self.hub.workspaces.for_root(root)

    async def lock_status(self, args: dict[str, Any]) -> dict[str, Any]:
        workspace = self.workspace(args)
        return lock_summary(workspace)

    async def lock_take(self, args: dict[str, Any]) -> dict[str, Any]:
        workspace = self.workspace(args)
        mode = args.get("mode", "keep")
        if mode not in TAKE_MODES:
            raise ValueError(f"mode must be one of {', '.join(TAKE_MODES)}, got {mode!r}")
        result = await asyncio.to_thread(workspace.take, mode)
        self.sync_editors(workspace)
        return {**result.to_dict(), **lock_summary(workspace)}

    async def lock_release(self, args: dict[str, Any]) -> dict[str, Any]:
        workspace = self.workspace(args)
        workspace.release()
        return lock_summary(workspace)

    async def lock_toggle(self, args: dict[str, Any]) -> dict[str, Any]:
        workspace = self.workspace(args)
        mode = args.get("mode", "keep")
        if mode not in TAKE_MODES:
            raise ValueError(f"mode must be one of {', '.join(TAKE_MODES)}, got {mode!r}")
        result = await asyncio.to_thread(workspace.toggle, mode)
        self.sync_editors(workspace)
        return {**result, **lock_summary(workspace)}

    async def shadow_diff(self, args: dict[str, Any]) -> dict[str, Any]:
        workspace = self.workspace(args)
        return {**lock_summary(workspace), "diff": workspace.pending_diff()}

    async def shadow_pending(self, args: dict[str, Any]) -> dict[str, Any]:
        workspace = self.workspace(args)
        return {**lock_summary(workspace), "files": pending_files(workspace)}

    def sync_editors(self, workspace: ShadowWorkspace) -> None:
        """After the shadow changed under the editors (discard, commit, model edits):
        push the shadow text to every session whose buffer differs."""
        for session in list(self.hub.sessions):
            for uri in list(session.sync.versions):
                document = workspace.document(uri)
                view = session.sync.view_text(uri)
                if document is not None and view is not None and document.text != view:
                    push_full_text(session, uri, view, document.text)


def lock_summary(workspace: ShadowWorkspace) -> dict[str, Any]:
    return {
        "root": str(workspace.root),
        "holder": workspace.lock.holder,
        "pending": workspace.has_pending(),
    }


def pending_files(workspace: ShadowWorkspace) -> list[str]:
    return [document.uri for document in workspace.pending_documents()]
